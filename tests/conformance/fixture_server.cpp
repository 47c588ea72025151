// parity-conformance-fixture: the protocol library (the same one `parity serve` uses)
// serving the tools, prompts and resources the official conformance suite names
// (reference/mcp.md §2.4; both the 0.1.16 list and the 2026-07-28 one). Only the fixture
// content lives here; every protocol behaviour under test is the library's.
//   parity-conformance-fixture --http 127.0.0.1:PORT   (PORT 0: any; the URL goes to stderr)
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <string>
#include <thread>

#include "mcp-server/http_transport.h"
#include "tests/conformance/fixtures.h"

int main(int argc, char** argv) {
  std::string http = "127.0.0.1:0";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--http" && i + 1 < argc) {
      http = argv[++i];
    } else {
      std::fprintf(stderr, "usage: parity-conformance-fixture --http HOST:PORT\n");
      return 2;
    }
  }
  size_t colon = http.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "--http expects HOST:PORT\n");
    return 2;
  }
  parity::mcp::HttpOptions options;
  options.host = http.substr(0, colon);
  options.port = std::atoi(http.c_str() + colon + 1);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto catalog = parity::conformance::MakeFixtureCatalog();
  parity::mcp::ServerOptions server_options;
  server_options.name = "parity-conformance-fixture";
  server_options.report_dir = "/nonexistent-report-dir";  // fixtures write nothing
  parity::mcp::Server server(server_options, catalog);
  parity::mcp::HttpTransport transport(options);
  parity::Status bound = transport.Bind();
  if (!bound.ok()) {
    std::fprintf(stderr, "%s\n", bound.ToString().c_str());
    return 1;
  }
  std::thread([&transport, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    transport.Stop();
  }).detach();
  std::fprintf(stderr, "serving on http://%s:%d/mcp\n", options.host.c_str(), transport.port());
  parity::Status s = transport.Serve(server);
  return s.ok() ? 0 : 1;
}
