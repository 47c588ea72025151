// Files compiled into the binary by cmake/EmbedFiles.cmake (skills, prompt templates), so
// an installed parity needs nothing beside itself.
#pragma once

#include <span>
#include <string_view>

namespace parity {

struct EmbeddedFile {
  std::string_view path;     // relative to the embedded folder, '/'-separated
  std::string_view content;
};

}  // namespace parity
