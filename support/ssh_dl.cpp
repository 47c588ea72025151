#include "support/ssh_dl.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace parity {
namespace {

struct Loaded {
  SshApi api{};
  Status error;
};

template <typename Fn>
void Bind(void* library, const char* symbol, Fn& slot, std::string& missing) {
  slot = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (slot == nullptr) missing += missing.empty() ? symbol : std::string(", ") + symbol;
}

Loaded Load() {
  Loaded loaded;
  constexpr const char* kLibrary = "libssh.so.4";
  // RTLD_LOCAL: libssh's symbols (and its OpenSSL/Kerberos dependencies') stay out of the
  // global namespace.
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.error = Unavailable(std::string("cannot load ") + kLibrary + ": " + (why ? why : "unknown dlopen error") +
                               "; install libssh (Debian: apt-get install libssh-4)");
    return loaded;
  }
  std::string missing;
  SshApi& api = loaded.api;
  Bind(library, "ssh_new", api.session_new, missing);
  Bind(library, "ssh_free", api.free, missing);
  Bind(library, "ssh_options_set", api.options_set, missing);
  Bind(library, "ssh_connect", api.connect, missing);
  Bind(library, "ssh_disconnect", api.disconnect, missing);
  Bind(library, "ssh_is_connected", api.is_connected, missing);
  Bind(library, "ssh_get_error", api.get_error, missing);
  Bind(library, "ssh_session_is_known_server", api.session_is_known_server, missing);
  Bind(library, "ssh_get_server_publickey", api.get_server_publickey, missing);
  Bind(library, "ssh_get_publickey_hash", api.get_publickey_hash, missing);
  Bind(library, "ssh_get_fingerprint_hash", api.get_fingerprint_hash, missing);
  Bind(library, "ssh_clean_pubkey_hash", api.clean_pubkey_hash, missing);
  Bind(library, "ssh_string_free_char", api.string_free_char, missing);
  Bind(library, "ssh_key_type", api.key_type, missing);
  Bind(library, "ssh_key_type_to_char", api.key_type_to_char, missing);
  Bind(library, "ssh_key_free", api.key_free, missing);
  Bind(library, "ssh_pki_import_privkey_file", api.pki_import_privkey_file, missing);
  Bind(library, "ssh_userauth_none", api.userauth_none, missing);
  Bind(library, "ssh_userauth_publickey", api.userauth_publickey, missing);
  Bind(library, "ssh_userauth_agent", api.userauth_agent, missing);
  Bind(library, "ssh_userauth_publickey_auto", api.userauth_publickey_auto, missing);
  Bind(library, "ssh_userauth_password", api.userauth_password, missing);
  Bind(library, "ssh_channel_new", api.channel_new, missing);
  Bind(library, "ssh_channel_open_session", api.channel_open_session, missing);
  Bind(library, "ssh_channel_request_exec", api.channel_request_exec, missing);
  Bind(library, "ssh_channel_write", api.channel_write, missing);
  Bind(library, "ssh_channel_send_eof", api.channel_send_eof, missing);
  Bind(library, "ssh_channel_read_timeout", api.channel_read_timeout, missing);
  Bind(library, "ssh_channel_read_nonblocking", api.channel_read_nonblocking, missing);
  Bind(library, "ssh_channel_is_eof", api.channel_is_eof, missing);
  Bind(library, "ssh_channel_get_exit_status", api.channel_get_exit_status, missing);
  Bind(library, "ssh_channel_close", api.channel_close, missing);
  Bind(library, "ssh_channel_free", api.channel_free, missing);
  if (!missing.empty()) {
    loaded.error = Unavailable(std::string(kLibrary) + " lacks " + missing + "; it is older than parity needs (0.9+)");
  }
  return loaded;
}

}  // namespace

Result<const SshApi*> LoadSsh() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = Load(); });
  if (!loaded.error.ok()) return loaded.error;
  return &loaded.api;
}

}  // namespace parity
