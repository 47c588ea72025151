// Text read from files (log lines, tails) is bytes, not necessarily UTF-8; JSON and MCP need
// UTF-8. Invalid bytes are kept visible, not dropped: each becomes the four characters \xNN.
#pragma once

#include <string>
#include <string_view>

namespace parity {

// Whether `text` is valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool IsValidUtf8(std::string_view text);

// `text` with every byte that is not part of a valid UTF-8 sequence written as "\xNN"
// (upper-case hex); valid text is returned unchanged.
std::string ToValidUtf8(std::string_view text);

}  // namespace parity
