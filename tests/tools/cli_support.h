// Helpers for tests that run the command line in process (tools/cli.h RunCli) and read the files
// it writes: the exit code and both streams of a run, a whole file, the fields of a CSV line, and
// a number of summary.json by its key.
#pragma once

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace saltus::tools::test_support {

struct CliResult {
  int code;
  std::string out, err;
};

inline CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fields of a line separated by `sep`; a trailing separator gives a last empty field.
inline std::vector<std::string> Split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, sep);) fields.push_back(f);
  if (!line.empty() && line.back() == sep) fields.emplace_back();
  return fields;
}

// The number after `"key": ` (the first occurrence), NaN if the key is absent.
inline double JsonNumber(const std::string& json, const std::string& key) {
  const std::string pattern = "\"" + key + "\": ";
  const std::size_t at = json.find(pattern);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + pattern.size(), nullptr);
}

}  // namespace saltus::tools::test_support
