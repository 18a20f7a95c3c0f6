// Reading the output of `saltus run` in the integrator tests that go through the CLI.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace saltus::integrators::test_outputs {

// Times of the `impact` rows of an events.csv (header t,kind,contacts,...), in file order.
inline std::vector<double> ImpactTimes(const std::filesystem::path& events_csv) {
  std::ifstream in(events_csv);
  std::string line;
  std::getline(in, line);  // header
  std::vector<double> times;
  while (std::getline(in, line)) {
    const std::size_t c1 = line.find(',');
    if (c1 != std::string::npos && line.compare(c1 + 1, 7, "impact,") == 0) {
      times.push_back(std::stod(line.substr(0, c1)));
    }
  }
  return times;
}

}  // namespace saltus::integrators::test_outputs
