// parity-client-fixture-stdio: the conformance fixture catalog (tests/conformance, the
// tools that emit progress and elicit) served over stdio by the same protocol library as
// `parity serve`, so the client tests can exercise progress and elicitation on stdio too;
// the conformance fixture server itself speaks HTTP only.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "mcp-server/stdio_transport.h"
#include "tests/conformance/fixtures.h"

int main() {
  parity::mcp::ServerOptions options;
  options.name = "parity-client-fixture-stdio";
  options.report_dir = "/nonexistent-report-dir";  // fixtures write nothing
  parity::mcp::Server server(options, parity::conformance::MakeFixtureCatalog());
  parity::mcp::StdioTransport stdio(STDIN_FILENO, STDOUT_FILENO);
  parity::Status status = stdio.Serve(server);
  if (!status.ok()) std::fprintf(stderr, "parity-client-fixture-stdio: %s\n", status.ToString().c_str());
  // As `parity serve`: a handler deaf to cancellation (test_blocking_read) must not keep
  // the process alive after its client left; the destructors would wait for it.
  if (!server.WaitIdleFor(std::chrono::seconds(1))) std::_Exit(status.ok() ? 0 : 1);
  return status.ok() ? 0 : 1;
}
