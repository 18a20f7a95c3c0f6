// The two schemes behind tools::Scheme (tools/run_scheme.h), for MakeScheme and the hybrid
// scheme (tools/hybrid_scheme.h), which drives one of each: the event loop, and Moreau–Jean
// time-stepping with the fixed step integrator_options.h_init.
#pragma once

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "integrators/integrator.h"
#include "tools/run_scheme.h"

namespace saltus::tools {

class EventDrivenScheme : public Scheme {
 public:
  EventDrivenScheme(std::shared_ptr<const engine::MechanicalSystem> system,
                    const events::SimulationOptions& options)
      : simulation_(std::move(system), options) {}
  void AddObserver(events::Observer* o) override { simulation_.AddObserver(o); }
  void SetState(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                events::StateOrigin origin) override {
    simulation_.SetState(t, q, v, origin);
  }
  events::RunResult AdvanceTo(double t_end) override { return simulation_.AdvanceTo(t_end); }
  void RequestStop() override { simulation_.RequestStop(); }
  double t() const override { return simulation_.t(); }
  const Eigen::VectorXd& q() const override { return simulation_.q(); }
  const Eigen::VectorXd& v() const override { return simulation_.v(); }
  const events::SimulationStats& stats() const override { return simulation_.stats(); }
  std::vector<int> ActiveRows() const override { return simulation_.active_rows(); }
  Eigen::VectorXd Multipliers() const override { return simulation_.Multipliers(); }
  const std::vector<int>& closed_rows() const override { return simulation_.closed_rows(); }
  RunView View() const override { return ViewOf(simulation_); }
  const events::Simulation* event_loop() const override { return &simulation_; }
  events::Simulation& simulation() { return simulation_; }
  std::string StepSummary() const override {
    const events::SimulationOptions& o = simulation_.options();
    const integrators::IntegratorStats& s = simulation_.stats().integrator;
    return o.integrator + " (" +
           std::string(integrators::ToString(o.integrator_options.formulation)) +
           "): " + std::to_string(s.accepted_steps) + " accepted steps, " +
           std::to_string(s.rejected_steps) + " rejected";
  }

 private:
  events::Simulation simulation_;
};

class TimeSteppingScheme : public Scheme {
 public:
  TimeSteppingScheme(std::shared_ptr<const engine::MechanicalSystem> system,
                     const events::SimulationOptions& options, const timestepping::SceneKeys& keys)
      : options_(options), scheme_(std::move(system), Options(options, keys)) {}
  void AddObserver(events::Observer* o) override { scheme_.AddObserver(o); }
  void SetState(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                events::StateOrigin origin) override {
    scheme_.SetState(t, q, v, origin);
  }
  events::RunResult AdvanceTo(double t_end) override { return scheme_.AdvanceTo(t_end); }
  void RequestStop() override { scheme_.RequestStop(); }
  double t() const override { return scheme_.t(); }
  const Eigen::VectorXd& q() const override { return scheme_.q(); }
  const Eigen::VectorXd& v() const override { return scheme_.v(); }
  const events::SimulationStats& stats() const override { return scheme_.stats(); }
  // The joints carry no reported multiplier here (their impulses are not kept): 0.
  std::vector<int> ActiveRows() const override {
    std::vector<int> rows = scheme_.system().RowsOfKind(engine::ConstraintKind::kBilateral);
    rows.insert(rows.end(), scheme_.active_rows().begin(), scheme_.active_rows().end());
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  Eigen::VectorXd Multipliers() const override {
    const std::vector<int> rows = ActiveRows();
    Eigen::VectorXd lambda = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows.size()));
    const std::vector<int>& active = scheme_.active_rows();
    const double h = scheme_.last_step();
    for (std::size_t k = 0; k < active.size() && h > 0; ++k) {
      const auto at = std::lower_bound(rows.begin(), rows.end(), active[k]) - rows.begin();
      lambda[at] = scheme_.impulses()[static_cast<Eigen::Index>(k)] / h;
    }
    return lambda;
  }
  const std::vector<int>& closed_rows() const override { return scheme_.active_rows(); }
  RunView View() const override { return ViewOf(scheme_, options_); }
  timestepping::MoreauJean& scheme() { return scheme_; }
  const timestepping::MoreauJean& scheme() const { return scheme_; }
  std::string StepSummary() const override {
    const events::SimulationStats& s = scheme_.stats();
    char step[64];
    std::snprintf(step, sizeof step, "h = %.6g s, theta = %.6g", scheme_.options().h,
                  scheme_.options().theta);
    return std::string(timestepping::kMoreauJeanName) + " (" + step +
           "): " + std::to_string(s.integrator.accepted_steps) + " steps, " +
           std::to_string(s.lcp_solves) + " contact problems, " +
           std::to_string(scheme_.contact_impacts()) + " contact impacts" + AcceptedNote();
  }

 private:
  // The warning for frictional components accepted above the tolerance (summary.json counts
  // them: time_stepping.friction_components.accepted).
  std::string AcceptedNote() const {
    const auto* f =
        dynamic_cast<const timestepping::FrictionalStepSolver*>(&scheme_.contact_solver());
    if (f == nullptr) return "";
    const long accepted =
        f->stats().components[static_cast<std::size_t>(contact::FrictionStage::kAccepted)];
    if (accepted == 0) return "";
    char note[160];
    std::snprintf(note, sizeof note,
                  "; warning: %ld frictional contact problem(s) accepted above the tolerance "
                  "(largest residual %.3g, bound tau0/h)",
                  accepted, f->stats().largest_accepted_residual);
    return note;
  }
  static timestepping::MoreauJeanOptions Options(const events::SimulationOptions& options,
                                                 const timestepping::SceneKeys& keys) {
    timestepping::MoreauJeanOptions o = timestepping::FromSimulationOptions(options);
    keys.ApplyTo(&o);
    return o;
  }
  events::SimulationOptions options_;
  timestepping::MoreauJean scheme_;
};

}  // namespace saltus::tools
