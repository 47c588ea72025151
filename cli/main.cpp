// parity: the MCP server and the command line of the same binary.
#include <cstdio>
#include <cstring>
#include <string>

#include "support/version.h"

int main(int argc, char** argv) {
  if (argc >= 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0)) {
    std::printf("parity %s\n", PARITY_VERSION);
    return 0;
  }
  std::fprintf(stderr, "usage: parity --version\n");
  return 2;
}
