#include "support/dynamic_library.h"

#include <dlfcn.h>

namespace parity {

Result<SymbolBinder> SymbolBinder::Open(const std::string& library, const std::string& install_hint) {
  // RTLD_LOCAL: the library's symbols (and its dependencies', OpenSSL, Kerberos) stay out of
  // the global namespace of a process that links other TLS libraries.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Unavailable("cannot load " + library + ": " + (why ? why : "unknown dlopen error") + "; " + install_hint);
  }
  return SymbolBinder(handle, library);
}

void* SymbolBinder::Lookup(const char* symbol) {
  void* found = dlsym(handle_, symbol);
  if (found == nullptr) missing_ += (missing_.empty() ? "" : ", ") + std::string(symbol);
  return found;
}

Status SymbolBinder::Finish(const std::string& version_hint) const {
  if (missing_.empty()) return Status::Ok();
  return Unavailable(library_ + " lacks " + missing_ + "; it is " + version_hint);
}

}  // namespace parity
