// The integrator table: one entry per scheme. Adding an integrator means adding one entry here;
// the factory, the CLI help and the generic tests in tests/integrators/ pick it up.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "integrators/dopri5.h"
#include "integrators/integrator.h"

namespace saltus::integrators {

namespace {

template <class T>
std::unique_ptr<Integrator> Make(const IntegratorOptions& options) {
  return std::make_unique<T>(options);
}

const std::array<IntegratorEntry, 1>& Table() {
  static const std::array<IntegratorEntry, 1> table = {{
      {"dopri5",
       "Dormand-Prince 5(4), explicit Runge-Kutta with dense output of order 4, on the index-1 "
       "formulation with MDOP5 projection of positions and velocities",
       {Formulation::kIndex1},
       &Make<Dopri5>},
  }};
  return table;
}

std::string FormulationList(const std::vector<Formulation>& formulations) {
  std::string list;
  for (Formulation f : formulations) {
    if (!list.empty()) list += ", ";
    list += ToString(f);
  }
  return list;
}

}  // namespace

std::span<const IntegratorEntry> IntegratorTable() { return Table(); }

std::unique_ptr<Integrator> MakeIntegrator(std::string_view name,
                                           const IntegratorOptions& options) {
  const auto& table = Table();
  const auto entry = std::find_if(table.begin(), table.end(),
                                  [&](const IntegratorEntry& e) { return e.name == name; });
  if (entry == table.end()) {
    std::string known;
    for (const IntegratorEntry& e : table) {
      if (!known.empty()) known += ", ";
      known += e.name;
    }
    throw std::invalid_argument("unknown integrator '" + std::string(name) +
                                "'; known integrators: " + known);
  }
  if (std::find(entry->formulations.begin(), entry->formulations.end(), options.formulation) ==
      entry->formulations.end()) {
    throw std::invalid_argument("integrator '" + std::string(name) +
                                "' does not support formulation '" +
                                std::string(ToString(options.formulation)) +
                                "'; supported: " + FormulationList(entry->formulations));
  }
  return entry->make(options);
}

}  // namespace saltus::integrators
