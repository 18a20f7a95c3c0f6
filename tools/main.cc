// The `saltus` executable: forwards to tools::RunCli (tools/cli.h).
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "tools/cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return saltus::tools::RunCli(args, std::cout, std::cerr, isatty(STDERR_FILENO) != 0);
}
