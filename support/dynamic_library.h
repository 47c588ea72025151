// A shared library opened at run time (dlopen, RTLD_NOW | RTLD_LOCAL) and its functions
// bound by name, for the libraries most runs never need (libcurl: curl_dl.h, libssh:
// ssh_dl.h), so they are not mapped at start. The library is never closed: the bound
// functions live as long as the process.
#pragma once

#include <mutex>
#include <string>

#include "support/status.h"

namespace parity {

class SymbolBinder {
 public:
  // The error (kUnavailable) names the library, dlerror()'s text and `install_hint`.
  [[nodiscard]] static Result<SymbolBinder> Open(const std::string& library, const std::string& install_hint);

  // Sets `slot` to the function `symbol`, or to null and remembers it as missing.
  template <typename Fn>
  void Bind(const char* symbol, Fn& slot) {
    slot = reinterpret_cast<Fn>(Lookup(symbol));
  }

  // OK when every Bind found its function; else kUnavailable naming the missing ones and
  // `version_hint` ("older than parity needs (0.9+)").
  [[nodiscard]] Status Finish(const std::string& version_hint) const;

 private:
  SymbolBinder(void* handle, std::string library) : handle_(handle), library_(std::move(library)) {}
  void* Lookup(const char* symbol);

  void* handle_;
  std::string library_;
  std::string missing_;
};

// Opens `library` once per process and fills the function table `Api` with `bind` (which
// binds each function and returns Finish()'s status, or any later set-up error); every
// caller gets the same table or the same error. One table per Api type.
template <typename Api>
[[nodiscard]] Result<const Api*> LoadOnce(const std::string& library, const std::string& install_hint,
                                          Status (*bind)(SymbolBinder&, Api&)) {
  static std::once_flag once;
  static Api api{};
  static Status error;
  std::call_once(once, [&] {
    auto opened = SymbolBinder::Open(library, install_hint);
    error = opened.ok() ? bind(opened.value(), api) : opened.status();
  });
  if (!error.ok()) return error;
  return &api;
}

}  // namespace parity
