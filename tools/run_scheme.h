// The scheme that runs a model, behind one interface for the command line (tools/cli.h) and the
// facade (saltus/saltus.h): the event loop (events::Simulation), Moreau–Jean time-stepping
// (timestepping/moreau_jean.h) when SimulationOptions::integrator is "moreau_jean", or the hybrid
// of both (tools/hybrid_scheme.h) when HybridOptions::enabled. All take the same observers and
// feed the same reports (tools/writers.h).
//
// For time-stepping the fixed step is integrator_options.h_init (`simulation.step`, which also
// sets adaptive = false); the contact forces reported as multipliers are the mean forces of the
// last step, λ = P / h on the rows of its index set.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/simulation.h"
#include "timestepping/moreau_jean.h"
#include "tools/hybrid_options.h"
#include "tools/writers.h"

namespace saltus::tools {

class Scheme {
 public:
  virtual ~Scheme() = default;
  virtual void AddObserver(events::Observer* observer) = 0;
  // As events::Simulation::SetState / MoreauJean::SetState (std::invalid_argument on bad input).
  virtual void SetState(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                        events::StateOrigin origin) = 0;
  virtual events::RunResult AdvanceTo(double t_end) = 0;
  // Stops AdvanceTo at the next step boundary (RunStatus::kInterrupted).
  virtual void RequestStop() = 0;
  virtual double t() const = 0;
  virtual const Eigen::VectorXd& q() const = 0;
  virtual const Eigen::VectorXd& v() const = 0;
  virtual const events::SimulationStats& stats() const = 0;
  // Joints and closed contacts (event loop) or joints and the last index set (time-stepping),
  // ascending, and their multipliers in that order.
  virtual std::vector<int> ActiveRows() const = 0;
  virtual Eigen::VectorXd Multipliers() const = 0;
  // Contacts closed now (event loop: I₂; time-stepping: the last index set), ascending.
  virtual const std::vector<int>& closed_rows() const = 0;
  virtual RunView View() const = 0;
  // The event loop, for the writers that need its index-1 multipliers (null for time-stepping).
  virtual const events::Simulation* event_loop() const { return nullptr; }
  // The hybrid scheme's phase and switch counters (nullopt for the other schemes), and the phase
  // the next SetState starts in (ignored by the other schemes): SetState then resumes that
  // scheme at its state (time-stepping: MoreauJean::SetState, kResumed) with those counters.
  virtual std::optional<HybridState> hybrid_state() const { return std::nullopt; }
  virtual void ResumeHybridState(const HybridState& /*state*/) {}
  // The hybrid scheme's report, valid while the scheme lives (null for the other schemes).
  virtual const HybridReport* hybrid_report() const { return nullptr; }
  // "dopri5 (index1): 120 accepted steps, 0 rejected" and the like.
  virtual std::string StepSummary() const = 0;
};

// The event loop, or Moreau–Jean time-stepping with the scene's `keys` (θ, speculative contacts,
// position projection, sleeping: timestepping::SceneKeys) when options.integrator is
// timestepping::kMoreauJeanName, or the hybrid scheme (the event loop of `options` and
// Moreau–Jean with `keys` and the step hybrid.step) when hybrid.enabled. Throws
// std::invalid_argument on bad options (as the schemes).
std::unique_ptr<Scheme> MakeScheme(std::shared_ptr<const engine::MechanicalSystem> system,
                                   const events::SimulationOptions& options,
                                   const timestepping::SceneKeys& keys = {},
                                   const HybridOptions& hybrid = {});

}  // namespace saltus::tools
