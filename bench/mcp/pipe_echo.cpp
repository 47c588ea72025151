// pipe_echo: the floor of a stdio round trip on this machine. A trivial "server" that
// answers every newline-delimited JSON-RPC request on stdin with an empty result carrying
// the same id, with one read and one write per message and no JSON parser. mcp_latency
// drives it exactly as it drives parity and the reference server, so its p50 is what two
// processes exchanging one pipe message each way cost here (wake-ups included), below
// which no stdio server can answer. Not an MCP server: notifications are ignored.
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>

namespace {

// The id token as written ("init", 7): from after "id": to the next ',' or '}'.
std::string_view IdToken(std::string_view line) {
  size_t at = line.find("\"id\":");
  if (at == std::string_view::npos) return {};
  size_t begin = at + 5;
  size_t end = line.find_first_of(",}", begin);
  return end == std::string_view::npos ? std::string_view{} : line.substr(begin, end - begin);
}

bool WriteAll(const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main() {
  std::string buffer, reply;
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n <= 0) return 0;
    buffer.append(chunk, static_cast<size_t>(n));
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
      std::string_view id = IdToken(std::string_view(buffer).substr(0, nl));
      if (id.empty()) continue;
      reply.assign("{\"jsonrpc\":\"2.0\",\"id\":").append(id).append(",\"result\":{}}\n");
      if (!WriteAll(reply)) return 1;
    }
  }
}
