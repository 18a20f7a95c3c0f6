// `saltus run SCENE --resume DIR/last_state.json`: the state a stopped run saved
// (tools/writers.h WriteLastStateJson), read back to continue from it.
//
// What is restored: t, and q and v by coordinate name (written with %.17g, so bit for bit).
// What is not: contact modes and index sets (events::Simulation::SetState derives them again
// from the gaps and velocities at t, resolving an impact if contacts approach, and projects onto
// the bilateral constraints, a no-op up to round-off for a saved state), the integrator's step
// size and history (it restarts, as after an event), statistics (counted from zero) and time
// events at or before t (skipped). A saved state may penetrate a contact (a run stopped by a
// failure; time-stepping's own penetrations): unlike an initial state it is accepted
// (events::StateOrigin::kResumed). A run resumed from a state saved by an interruption therefore
// follows the uninterrupted run to the integration tolerance, not bit for bit
// (tests/tools/resume_test.cc).
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <string>

#include "engine/mechanical_system.h"
#include "tools/hybrid_options.h"

namespace saltus::tools {

struct SavedState {
  double t = 0;
  Eigen::VectorXd q, v;      // nq, nv of the system, in its coordinate order
  std::string scene;         // the scene name the state was saved from
  std::string scene_sha256;  // of the scene file, "" when the file does not record it
  // A hybrid run's phase (the file's "hybrid" object): Scheme::ResumeHybridState continues in
  // it. None in files of other schemes and in files written before it was saved: the hybrid
  // scheme then restarts with the event loop.
  std::optional<HybridState> hybrid;
};

// Reads `path` (JSON as written by WriteLastStateJson) for `system`. Throws
// std::invalid_argument naming the file and the item when the file cannot be read or parsed,
// when "t", "q" or "v" is missing or not finite, when the coordinate names differ from the
// system's (a state saved from another scene), or when a "hybrid" object has an unknown phase or
// a missing or non-finite number (naming its line).
SavedState ReadLastStateJson(const std::string& path, const engine::MechanicalSystem& system);

}  // namespace saltus::tools
