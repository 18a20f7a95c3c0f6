// Shared by the scene tests (friction_examples_test, friction3d_examples_test, contact_scene_test):
// a scene file set up as `saltus run` sets it up, with a recorder of its events and outputs.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "events/simulation.h"
#include "tools/scene.h"

namespace saltus::tools {

class Recorder : public events::Observer {
 public:
  void OnEvent(const events::Event& e, const Eigen::VectorXd&, const Eigen::VectorXd& v_minus,
               const Eigen::VectorXd& v_plus) override {
    events.push_back(e);
    v_before.push_back(v_minus);
    v_after.push_back(v_plus);
  }
  std::vector<const events::Event*> Of(events::EventKind k) const {
    std::vector<const events::Event*> out;
    for (const events::Event& e : events) {
      if (e.kind == k) out.push_back(&e);
    }
    return out;
  }
  std::vector<double> TimesOf(events::EventKind k) const {
    std::vector<double> ts;
    for (const events::Event& e : events) {
      if (e.kind == k) ts.push_back(e.t);
    }
    return ts;
  }
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd&) override {
    if (on_output) on_output(t, q);
  }
  std::vector<events::Event> events;
  std::vector<Eigen::VectorXd> v_before, v_after;
  std::function<void(double, const Eigen::VectorXd&)> on_output;
};

// A scene of examples/ (a path relative to `folder`) set up as `saltus run` does.
struct SceneRun {
  Scene scene;
  SceneSystem built;
  std::unique_ptr<events::Simulation> sim;
  Recorder rec;

  SceneRun(const std::filesystem::path& folder, const std::string& file,
           const std::function<void(Scene&)>& edit = {})
      : scene(LoadSceneFile((folder / file).string())) {
    if (edit) edit(scene);
    built = BuildSceneSystem(scene);
    sim = std::make_unique<events::Simulation>(built.system, scene.options);
    sim->AddObserver(&rec);
    sim->SetState(0, built.q0, built.v0);
  }
  events::RunResult Advance(double t) { return sim->AdvanceTo(t); }
  int Row(const std::string& name) const {
    for (int r = 0; r < built.system->num_constraints(); ++r) {
      if (built.system->constraint_info(r).name == name) return r;
    }
    ADD_FAILURE() << "no row " << name;
    return -1;
  }
  // Σ of the tangential (first entry) and normal forces of the closed contacts.
  Eigen::Vector2d ForceSum() const {
    Eigen::Vector2d sum = Eigen::Vector2d::Zero();
    for (const auto& f : sim->ContactForces()) sum += Eigen::Vector2d(f.tangential[0], f.normal);
    return sum;
  }
};

}  // namespace saltus::tools
