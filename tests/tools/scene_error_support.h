// Bad-input checks shared by the scene tests of tests/tools: the line of a needle in a YAML
// text, and a scene that must fail with a SceneError at that line.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tools/scene.h"

namespace saltus::tools::test_support {

// 1-based line of the first occurrence of `needle` in `text`.
inline int LineOf(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << needle << "' not in the scene";
  return static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
}

// Parses and builds `yaml` (BuildSystem) expecting a SceneError at the line of `at_needle`,
// reported as "test.yaml:<line>: ...", whose message contains every needle.
inline void ExpectSceneErrorAt(const std::string& yaml, const std::string& at_needle,
                               const std::vector<std::string>& needles) {
  const int line = LineOf(yaml, at_needle);
  try {
    BuildSystem(ParseScene(yaml, "test.yaml"));
    ADD_FAILURE() << "no SceneError for:\n" << yaml;
  } catch (const SceneError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.line(), line) << what;
    EXPECT_EQ(what.rfind("test.yaml:" + std::to_string(line) + ": ", 0), 0u) << what;
    for (const std::string& n : needles) {
      EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' missing from: " << what;
    }
  }
}

}  // namespace saltus::tools::test_support
