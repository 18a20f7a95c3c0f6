// Version of Saltus and the source commit it was built from, recorded in every result
// (summary.json, results.h5, the compare report) and printed by `saltus --version`.
// The definitions are generated at each build by cmake/SaltusBuildInfo.cmake.
#pragma once

#include <string_view>

namespace saltus::tools {

// The project version of CMakeLists.txt, e.g. "0.1.0".
std::string_view Version();
// `git rev-parse --short=12 HEAD` of the source tree at build time, with "-dirty" when tracked
// files had changes; "unknown" when built outside a git checkout.
std::string_view Commit();

}  // namespace saltus::tools
