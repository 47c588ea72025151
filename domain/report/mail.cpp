#include "domain/report/mail.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>

#include "support/curl_dl.h"
#include "support/url.h"

namespace parity::report {

namespace {

std::string Base64(std::string_view data, bool wrap) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve(data.size() * 4 / 3 + data.size() / 57 * 2 + 8);
  size_t line = 0;
  for (size_t i = 0; i < data.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(data[i]) << 16;
    if (i + 1 < data.size()) n |= static_cast<uint8_t>(data[i + 1]) << 8;
    if (i + 2 < data.size()) n |= static_cast<uint8_t>(data[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < data.size() ? kAlphabet[n & 63] : '=';
    if (wrap && (line += 4) >= 76) out += "\r\n", line = 0;
  }
  if (wrap && line > 0) out += "\r\n";
  return out;
}

std::string EncodedWord(const std::string& text) {
  for (unsigned char c : text) {
    if (c >= 0x80 || c < 0x20) return "=?UTF-8?B?" + Base64(text, false) + "?=";
  }
  return text;
}

void Part(std::string& out, const std::string& boundary, const MailPart& p, bool inline_part) {
  out += "--" + boundary + "\r\n";
  out += "Content-Type: " + p.content_type + "; name=\"" + p.filename + "\"\r\n";
  out += "Content-Transfer-Encoding: base64\r\n";
  if (!p.content_id.empty()) out += "Content-ID: <" + p.content_id + ">\r\n";
  out += std::string("Content-Disposition: ") + (inline_part ? "inline" : "attachment") + "; filename=\"" +
         p.filename + "\"\r\n\r\n";
  out += Base64(p.data, true);
}

struct Upload {
  const std::string* data;
  size_t offset = 0;
};

size_t ReadChunk(char* buffer, size_t size, size_t count, void* user) {
  auto* u = static_cast<Upload*>(user);
  size_t n = std::min(size * count, u->data->size() - u->offset);
  std::memcpy(buffer, u->data->data() + u->offset, n);
  u->offset += n;
  return n;
}


}  // namespace

std::string BuildMime(const MailServer& server, const MailMessage& m, const std::string& seed) {
  const std::string mixed = "mixed-" + seed, related = "related-" + seed, alternative = "alt-" + seed;
  char date[64];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  std::string to;
  for (const auto& r : server.to) to += (to.empty() ? "" : ", ") + r;

  std::string out;
  out += "From: " + server.from + "\r\nTo: " + to + "\r\nSubject: " + EncodedWord(m.subject) + "\r\n";
  out += std::string("Date: ") + date + "\r\nMessage-ID: <" + seed + "@parity>\r\nMIME-Version: 1.0\r\n";
  out += "Content-Type: multipart/mixed; boundary=\"" + mixed + "\"\r\n\r\n";
  out += "--" + mixed + "\r\nContent-Type: multipart/related; type=\"multipart/alternative\"; boundary=\"" + related +
         "\"\r\n\r\n";
  out += "--" + related + "\r\nContent-Type: multipart/alternative; boundary=\"" + alternative + "\"\r\n\r\n";
  out += "--" + alternative + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n";
  out += Base64(m.text, true);
  out += "--" + alternative + "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n";
  out += Base64(m.html, true);
  out += "--" + alternative + "--\r\n";
  for (const auto& img : m.inline_images) Part(out, related, img, true);
  out += "--" + related + "--\r\n";
  for (const auto& a : m.attachments) Part(out, mixed, a, false);
  out += "--" + mixed + "--\r\n";
  return out;
}

Status ValidateMailServer(const MailServer& s) {
  const bool smtps = s.url.rfind("smtps://", 0) == 0, smtp = s.url.rfind("smtp://", 0) == 0;
  if (!smtps && !smtp) return InvalidArgument("mail.server: \"" + s.url + "\" must start with smtp:// or smtps://");
  if (s.from.empty()) return InvalidArgument("mail.from: required");
  if (s.to.empty()) return InvalidArgument("mail.to: at least one recipient is required");
  for (const auto& addr : s.to) {
    if (addr.find('@') == std::string::npos || addr.find_first_of("\r\n<>") != std::string::npos) {
      return InvalidArgument("mail.to: \"" + addr + "\" is not an address");
    }
  }
  if (smtp && !s.starttls && !IsLoopbackHost(UrlHost(s.url))) {
    return InvalidArgument("mail.starttls: plain SMTP without TLS is allowed only to a loopback host, not " + UrlHost(s.url))
        .WithHint("use smtps://, or keep starttls true");
  }
  if (!s.ca_file.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(s.ca_file, ec)) {
      return InvalidArgument("mail.ca_file: " + s.ca_file + " is not a readable file")
          .WithHint("give the PEM file of the CA that signed the server's certificate");
    }
  }
  if (!s.username.empty()) {
    if (s.password_env.empty()) return InvalidArgument("mail.password_env: required when mail.username is set");
    if (!std::getenv(s.password_env.c_str())) {
      return InvalidArgument("mail.password_env: environment variable " + s.password_env + " is not set")
          .WithHint("export it in the environment parity runs in; the password is never passed as an argument");
    }
  }
  return Status::Ok();
}

Status SendMail(const MailServer& s, const MailMessage& m, const CancellationToken& cancel) {
  PARITY_RETURN_IF_ERROR(ValidateMailServer(s));
  std::string seed = std::to_string(std::time(nullptr)) + "." + std::to_string(reinterpret_cast<uintptr_t>(&m) % 100000);
  std::string message = BuildMime(s, m, seed);

  PARITY_ASSIGN_OR_RETURN(const CurlApi* api, LoadCurl());
  std::unique_ptr<CURL, void (*)(CURL*)> curl(api->easy_init(), api->easy_cleanup);
  if (!curl) return Unavailable("libcurl could not be initialised");
  struct curl_slist* rcpt = nullptr;
  for (const auto& r : s.to) rcpt = api->slist_append(rcpt, ("<" + r + ">").c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> rcpt_guard(rcpt, api->slist_free_all);
  Upload upload{&message};
  char error[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  api->easy_setopt(c, CURLOPT_URL, s.url.c_str());
  api->easy_setopt(c, CURLOPT_MAIL_FROM, ("<" + s.from + ">").c_str());
  api->easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
  api->easy_setopt(c, CURLOPT_READFUNCTION, ReadChunk);
  api->easy_setopt(c, CURLOPT_READDATA, &upload);
  api->easy_setopt(c, CURLOPT_UPLOAD, 1L);
  api->easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(message.size()));
  api->easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(s.timeout.count()));
  api->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  api->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, CurlAbortWhenCancelled);
  api->easy_setopt(c, CURLOPT_XFERINFODATA, &cancel);
  bool smtps = s.url.rfind("smtps://", 0) == 0;
  api->easy_setopt(c, CURLOPT_USE_SSL, static_cast<long>(smtps || s.starttls ? CURLUSESSL_ALL : CURLUSESSL_NONE));
  // Never weakened: the server's certificate must chain to a trusted CA and name the host.
  api->easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  api->easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!s.ca_file.empty()) api->easy_setopt(c, CURLOPT_CAINFO, s.ca_file.c_str());
  if (!s.username.empty()) {
    api->easy_setopt(c, CURLOPT_USERNAME, s.username.c_str());
    api->easy_setopt(c, CURLOPT_PASSWORD, std::getenv(s.password_env.c_str()));
  }
  CURLcode rc = api->easy_perform(c);
  if (rc == CURLE_ABORTED_BY_CALLBACK && cancel.cancelled()) return Cancelled();
  if (rc != CURLE_OK) {
    long response = 0;
    api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response);
    return Unavailable("sending the report by mail through " + s.url + " failed: " +
                       (error[0] ? std::string(error) : std::string(api->easy_strerror(rc))))
        .WithEvidence("smtp_response_code", std::to_string(response))
        .WithEvidence("message_bytes", std::to_string(message.size()))
        .WithHint("check the server URL, the TLS mode and the credentials variable " +
                  (s.password_env.empty() ? std::string("(none set)") : s.password_env));
  }
  return Status::Ok();
}

}  // namespace parity::report
