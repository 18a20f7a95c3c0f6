// Scratch folders for tests that write files: one folder per test program and process under the
// system's temporary directory, removed with everything in it when the program exits, so that
// test runs leave nothing behind.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace saltus::tools::test_support {

// Returns <tmp>/<program>_<pid>/<name>, emptied and created.
inline std::filesystem::path ScratchDir(const std::string& program, const std::string& name) {
  namespace fs = std::filesystem;
  struct Root {
    fs::path path;
    ~Root() {
      std::error_code ignored;  // nothing to report at exit
      fs::remove_all(path, ignored);
    }
  };
  static const Root root{fs::temp_directory_path() / (program + "_" + std::to_string(::getpid()))};
  const fs::path dir = root.path / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace saltus::tools::test_support
