#include "tools/run_scheme.h"

#include "tools/hybrid_scheme.h"
#include "tools/schemes.h"

namespace saltus::tools {

std::unique_ptr<Scheme> MakeScheme(std::shared_ptr<const engine::MechanicalSystem> system,
                                   const events::SimulationOptions& options,
                                   const timestepping::SceneKeys& keys,
                                   const HybridOptions& hybrid) {
  if (hybrid.enabled) return MakeHybridScheme(std::move(system), options, keys, hybrid);
  if (options.integrator == timestepping::kMoreauJeanName) {
    return std::make_unique<TimeSteppingScheme>(std::move(system), options, keys);
  }
  return std::make_unique<EventDrivenScheme>(std::move(system), options);
}

}  // namespace saltus::tools
