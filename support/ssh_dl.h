// libssh, loaded on first use with dlopen("libssh.so.4") instead of linked, like libcurl
// (support/curl_dl.h): only a run or probe on a remote host needs it, and linked it costs
// every process, `parity serve` at idle included, its pages and those of the Kerberos
// libraries it pulls in (docs/PERFORMANCE.md). The table holds exactly the functions
// parity calls; types and constants still come from <libssh/libssh.h>. Use it through
// LoadSsh() only.
#pragma once

#include <libssh/libssh.h>

#include "support/status.h"

namespace parity {

struct SshApi {
  // Each field has the type of the libssh function it holds (ssh_ + its name; ssh_new
  // for session_new).
  decltype(&::ssh_new) session_new;
  decltype(&::ssh_free) free;
  decltype(&::ssh_options_set) options_set;
  decltype(&::ssh_connect) connect;
  decltype(&::ssh_disconnect) disconnect;
  decltype(&::ssh_is_connected) is_connected;
  decltype(&::ssh_get_error) get_error;
  decltype(&::ssh_session_is_known_server) session_is_known_server;
  decltype(&::ssh_get_server_publickey) get_server_publickey;
  decltype(&::ssh_get_publickey_hash) get_publickey_hash;
  decltype(&::ssh_get_fingerprint_hash) get_fingerprint_hash;
  decltype(&::ssh_clean_pubkey_hash) clean_pubkey_hash;
  decltype(&::ssh_string_free_char) string_free_char;
  decltype(&::ssh_key_type) key_type;
  decltype(&::ssh_key_type_to_char) key_type_to_char;
  decltype(&::ssh_key_free) key_free;
  decltype(&::ssh_pki_import_privkey_file) pki_import_privkey_file;
  decltype(&::ssh_userauth_none) userauth_none;
  decltype(&::ssh_userauth_publickey) userauth_publickey;
  decltype(&::ssh_userauth_agent) userauth_agent;
  decltype(&::ssh_userauth_publickey_auto) userauth_publickey_auto;
  decltype(&::ssh_userauth_password) userauth_password;
  decltype(&::ssh_channel_new) channel_new;
  decltype(&::ssh_channel_open_session) channel_open_session;
  decltype(&::ssh_channel_request_exec) channel_request_exec;
  decltype(&::ssh_channel_write) channel_write;
  decltype(&::ssh_channel_send_eof) channel_send_eof;
  decltype(&::ssh_channel_read_timeout) channel_read_timeout;
  decltype(&::ssh_channel_read_nonblocking) channel_read_nonblocking;
  decltype(&::ssh_channel_is_eof) channel_is_eof;
  decltype(&::ssh_channel_get_exit_status) channel_get_exit_status;
  decltype(&::ssh_channel_close) channel_close;
  decltype(&::ssh_channel_free) channel_free;
};

// Loads libssh once per process (thread-safe; the library initialises itself when
// loaded). The error (kUnavailable) names the library, dlerror()'s text and the package
// to install (Debian: libssh-4). Later calls return the same table or the same error.
[[nodiscard]] Result<const SshApi*> LoadSsh();

}  // namespace parity
