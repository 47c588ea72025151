#include "support/ssh_dl.h"

#include <string>

#include "support/dynamic_library.h"

namespace parity {
namespace {

Status BindSsh(SymbolBinder& library, SshApi& api) {
  library.Bind("ssh_new", api.session_new);
  library.Bind("ssh_free", api.free);
  library.Bind("ssh_options_set", api.options_set);
  library.Bind("ssh_connect", api.connect);
  library.Bind("ssh_disconnect", api.disconnect);
  library.Bind("ssh_is_connected", api.is_connected);
  library.Bind("ssh_get_error", api.get_error);
  library.Bind("ssh_session_is_known_server", api.session_is_known_server);
  library.Bind("ssh_get_server_publickey", api.get_server_publickey);
  library.Bind("ssh_get_publickey_hash", api.get_publickey_hash);
  library.Bind("ssh_get_fingerprint_hash", api.get_fingerprint_hash);
  library.Bind("ssh_clean_pubkey_hash", api.clean_pubkey_hash);
  library.Bind("ssh_string_free_char", api.string_free_char);
  library.Bind("ssh_key_type", api.key_type);
  library.Bind("ssh_key_type_to_char", api.key_type_to_char);
  library.Bind("ssh_key_free", api.key_free);
  library.Bind("ssh_pki_import_privkey_file", api.pki_import_privkey_file);
  library.Bind("ssh_userauth_none", api.userauth_none);
  library.Bind("ssh_userauth_publickey", api.userauth_publickey);
  library.Bind("ssh_userauth_agent", api.userauth_agent);
  library.Bind("ssh_userauth_publickey_auto", api.userauth_publickey_auto);
  library.Bind("ssh_userauth_password", api.userauth_password);
  library.Bind("ssh_channel_new", api.channel_new);
  library.Bind("ssh_channel_open_session", api.channel_open_session);
  library.Bind("ssh_channel_request_exec", api.channel_request_exec);
  library.Bind("ssh_channel_write", api.channel_write);
  library.Bind("ssh_channel_send_eof", api.channel_send_eof);
  library.Bind("ssh_channel_read_timeout", api.channel_read_timeout);
  library.Bind("ssh_channel_read_nonblocking", api.channel_read_nonblocking);
  library.Bind("ssh_channel_is_eof", api.channel_is_eof);
  library.Bind("ssh_channel_get_exit_status", api.channel_get_exit_status);
  library.Bind("ssh_channel_close", api.channel_close);
  library.Bind("ssh_channel_free", api.channel_free);
  return library.Finish("older than parity needs (0.9+)");
}

}  // namespace

Result<const SshApi*> LoadSsh() {
  return LoadOnce<SshApi>("libssh.so.4", "install libssh (Debian: apt-get install libssh-4)", BindSsh);
}

}  // namespace parity
