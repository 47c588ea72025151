// libFuzzer target over the readers of files parity wrote earlier or a repository holds
// (issue 14 item 7): one input is the text of one file, handed to each reader that takes
// text: the JSON document parser with its nesting limit (then dumped and copied, which
// recurse), msprobe's stack.json parser, the job record check, the frame parser, and the
// redaction of URLs in text. Each must return a value or an error, never crash, for any
// nesting and any bytes (invalid UTF-8 included).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "domain/msprobe/stack.h"
#include "domain/run/job_record.h"
#include "support/json_document.h"
#include "support/redact.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = parity::ParseJsonDocument(text, "fuzz.json");
  if (doc.ok()) {
    nlohmann::json copy = *doc;  // copy and dump recurse: within the limit they must not overflow
    (void)copy.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)parity::run::ValidateJob(copy, "fuzz");
  }
  (void)parity::msprobe::ParseStackJson(text, "stack.json");
  (void)parity::msprobe::ParseFrame(text);
  (void)parity::RedactCredentialsInText(text);
  return 0;
}
