// Mail (the skill's optional step 7): the HTML report as the body with its charts as
// CID-embedded PNGs, and attachments, sent over SMTP by libcurl (smtps:// for implicit
// TLS, smtp:// with STARTTLS required, or plain smtp:// only to a loopback host). The
// password is read from the environment variable the caller names and never appears in
// any output, error or ledger entry.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cancel.h"
#include "support/status.h"

namespace parity::report {

struct MailServer {
  std::string url;                  // smtp://host:port or smtps://host:port
  std::string from;
  std::vector<std::string> to;
  std::string username;             // empty: no authentication
  std::string password_env;         // name of the variable holding the password
  bool starttls = true;             // for smtp://: require STARTTLS (refused off loopback if false)
  std::string ca_file;              // PEM bundle to verify the server with; empty: the system's.
                                    // Peer and host verification are always on.
  std::chrono::seconds timeout{60};
};

struct MailPart {
  std::string filename;
  std::string content_type;  // "image/png", "application/pdf", ...
  std::string data;
  std::string content_id;    // set for inline images referenced as cid:<id>
};

struct MailMessage {
  std::string subject;
  std::string html;
  std::string text;                  // plain-text alternative
  std::vector<MailPart> inline_images;
  std::vector<MailPart> attachments;
};

// The RFC 5322 message: multipart/mixed { multipart/related { multipart/alternative
// {text, html}, images }, attachments }, base64 bodies, RFC 2047 encoded subject.
std::string BuildMime(const MailServer& server, const MailMessage& message, const std::string& boundary_seed);

// Checks the server settings (scheme, recipients, password variable set when a user is
// given, plain SMTP only on loopback) without connecting.
Status ValidateMailServer(const MailServer& server);

Status SendMail(const MailServer& server, const MailMessage& message, const CancellationToken& cancel);

}  // namespace parity::report
