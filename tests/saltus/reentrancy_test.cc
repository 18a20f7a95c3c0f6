// Calls of the public facade from inside its own observers and force callback (saltus/saltus.h,
// "Calls from inside observers and callbacks"): every call is either allowed, with the state
// change taking effect at the end of the current step, or refused with StateError; observer
// lists may change while they are notified; RequestStop interrupts and the run continues
// bit-identically. Run under the sanitizer stage of .ci/run (scripts/sanitize.sh).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "saltus/saltus.h"

namespace saltus {
namespace {

using Eigen::VectorXd;

constexpr double kG = 9.81;

// A ball (radius 0.1, centre at 1 m) over a floor with e = 0.9: first impact at
// t₁ = √(2·0.9/g) ≈ 0.4284 s.
Model Ball() {
  return Model::FromSceneText(
      "scene: ball\n"
      "gravity: [0, -9.81]\n"
      "bodies:\n"
      "  - {name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}\n"
      "contacts:\n"
      "  - {name: floor, type: disk_line, body_a: ground, body_b: ball, normal_a: [0, 1],\n"
      "     radius_b: 0.1, restitution: 0.9}\n"
      "simulation:\n"
      "  t_end: 1\n"
      "  rtol: 1.0e-8\n"
      "  atol: 1.0e-10\n"
      "  output_step: 0.01\n");
}

VectorXd Vec3(double a, double b, double c) {
  VectorXd x(3);
  x << a, b, c;
  return x;
}

// The state changes that are deferred when called from inside, each as a call on `sim`.
struct Change {
  const char* name;
  void (*apply)(Simulation& sim, const Snapshot& snap);
};
const Change kChanges[] = {
    {"SetState",
     [](Simulation& s, const Snapshot&) { s.SetState(2.0, Vec3(0, 3, 0), Vec3(0, 0, 0)); }},
    {"SetPositions", [](Simulation& s, const Snapshot&) { s.SetPositions(Vec3(0, 3, 0)); }},
    {"SetVelocities", [](Simulation& s, const Snapshot&) { s.SetVelocities(Vec3(1, 0, 0)); }},
    {"SetExternalForce",
     [](Simulation& s, const Snapshot&) { s.SetExternalForce(Vec3(0, kG, 0)); }},
    {"SetForceCallback",
     [](Simulation& s, const Snapshot&) {
       s.SetForceCallback([](double, const VectorXd&, const VectorXd&, VectorXd* f) {
         *f = Vec3(0, kG, 0);  // cancels gravity
       });
     }},
    {"Restore", [](Simulation& s, const Snapshot& snap) { s.Restore(snap); }},
};

// Where a call is made from: a step, an output or an event observer, or the force callback.
enum class Site { kStep, kOutput, kEvent, kForce };
const Site kSites[] = {Site::kStep, Site::kOutput, Site::kEvent, Site::kForce};
const char* Name(Site s) {
  switch (s) {
    case Site::kStep:
      return "step observer";
    case Site::kOutput:
      return "output observer";
    case Site::kEvent:
      return "event observer";
    case Site::kForce:
      return "force callback";
  }
  return "";
}

// Installs `body` to run once at `site` after t > t_after (events: at the first impact).
void AtSite(Simulation& sim, Site site, double t_after, std::function<void()> body) {
  auto done = std::make_shared<bool>(false);
  auto once = [done, body = std::move(body)] {
    if (*done) return;
    *done = true;
    body();
  };
  switch (site) {
    case Site::kStep:
      sim.AddStepObserver([=](double t, const VectorXd&, const VectorXd&) {
        if (t > t_after) once();
      });
      break;
    case Site::kOutput:
      sim.AddOutputObserver([=](double t, const VectorXd&, const VectorXd&) {
        if (t > t_after) once();
      });
      break;
    case Site::kEvent:
      sim.AddEventObserver(
          [=](const Event&, const VectorXd&, const VectorXd&, const VectorXd&) { once(); });
      break;
    case Site::kForce:
      sim.SetForceCallback([=](double t, const VectorXd&, const VectorXd&, VectorXd* f) {
        f->setZero();
        if (t > t_after) once();
      });
      break;
  }
}

TEST(ReentrancyTest, EveryStateChangeFromEverySiteTakesEffectAtTheStepBoundary) {
  for (const Site site : kSites) {
    for (const Change& change : kChanges) {
      SCOPED_TRACE(std::string(change.name) + " from the " + Name(site));
      Simulation sim(Ball());
      const Snapshot start = sim.Save();  // t = 0, y = 1
      double t_call = -1;
      AtSite(sim, site, 0.1, [&] {
        t_call = sim.t();
        change.apply(sim, start);
      });
      const RunResult r = sim.AdvanceTo(3.0);
      ASSERT_TRUE(r.ok()) << r.message;
      ASSERT_GE(t_call, 0.0) << "the site was never reached";
      EXPECT_NEAR(sim.t(), 3.0, 1e-12);  // AdvanceTo went on to its t_end after the change
      EXPECT_TRUE(sim.q().allFinite() && sim.v().allFinite());
    }
  }
}

TEST(ReentrancyTest, DeferredSetStateIsTheStateTheRunContinuesFrom) {
  Simulation sim(Ball());
  // From a step observer past t = 0.1: the ball is put at rest at y = 3, t = 2; the run goes on
  // from there in free fall, so at t = 2.5 it is at y = 3 − g·0.5²/2 (exact up to round-off
  // for DOPRI5: the motion is quadratic).
  bool called = false;
  sim.AddStepObserver([&](double t, const VectorXd&, const VectorXd&) {
    if (t > 0.1 && !called) {
      called = true;
      sim.SetState(2.0, Vec3(0, 3, 0), Vec3(0, 0, 0));
      EXPECT_LT(sim.t(), 2.0);  // not yet: deferred to the end of the step
    }
  });
  ASSERT_TRUE(sim.AdvanceTo(2.5).ok());
  EXPECT_NEAR(sim.q()[1], 3.0 - 0.5 * kG * 0.5 * 0.5, 1e-12);
}

TEST(ReentrancyTest, AnInvalidChangeIsRefusedAtTheCallAndAFailingOneFromAdvanceTo) {
  Simulation sim(Ball());
  bool size_error = false;
  bool called = false;
  sim.AddStepObserver([&](double t, const VectorXd&, const VectorXd&) {
    if (t < 0.1 || called) return;
    called = true;
    try {
      sim.SetState(0.0, VectorXd::Zero(2), VectorXd::Zero(3));
    } catch (const InvalidArgument&) {
      size_error = true;  // the arguments are checked at once
    }
    sim.SetPositions(Vec3(0, 0.05, 0));  // penetrates the floor: fails when applied
  });
  EXPECT_THROW(sim.AdvanceTo(1.0), InvalidArgument);
  EXPECT_TRUE(size_error);
  // The state of the boundary is kept and the run can continue.
  EXPECT_GT(sim.t(), 0.1);
  EXPECT_GT(sim.q()[1], 0.1);
  ASSERT_TRUE(sim.AdvanceTo(1.0).ok());
}

TEST(ReentrancyTest, NestedRunsAndSaveAreRefusedWithStateError) {
  for (const Site site : kSites) {
    SCOPED_TRACE(Name(site));
    Simulation sim(Ball());
    int refused = 0;
    AtSite(sim, site, 0.1, [&] {
      for (const auto& call :
           std::vector<std::function<void()>>{[&] { sim.AdvanceTo(2.0); }, [&] { sim.Step(0.1); },
                                              [&] { sim.Run(2.0); }, [&] { sim.Save(); }}) {
        try {
          call();
        } catch (const StateError&) {
          ++refused;
        }
      }
      // Queries are allowed, multipliers except inside the force callback.
      EXPECT_TRUE(sim.q().allFinite());
      EXPECT_GE(sim.stats().integrator.accepted_steps, 0);
      (void)sim.CurrentIndexSets();
      if (site == Site::kForce) {
        EXPECT_THROW(sim.Multipliers(), StateError);
        EXPECT_THROW(sim.AllMultipliers(), StateError);
      } else {
        EXPECT_EQ(sim.AllMultipliers().size(), 1);
      }
    });
    ASSERT_TRUE(sim.AdvanceTo(1.0).ok());
    EXPECT_EQ(refused, 4);
  }
}

TEST(ReentrancyTest, ObserversMayAddAndRemoveObserversThemselvesIncluded) {
  Simulation sim(Ball());
  int self_removing = 0, added_calls = 0, steps = 0, events = 0;
  int self_id = 0, event_id = 0;
  self_id = sim.AddStepObserver([&](double, const VectorXd&, const VectorXd&) {
    ++self_removing;
    sim.RemoveObserver(self_id);  // removes itself during its own call
    // Adding while notified: may reallocate the list; first called at the next step.
    for (int k = 0; k < 20; ++k) {
      sim.AddStepObserver([&](double, const VectorXd&, const VectorXd&) { ++added_calls; });
    }
  });
  sim.AddStepObserver([&](double, const VectorXd&, const VectorXd&) { ++steps; });
  event_id =
      sim.AddEventObserver([&](const Event&, const VectorXd&, const VectorXd&, const VectorXd&) {
        ++events;
        sim.RemoveObserver(event_id);
        EXPECT_THROW(sim.RemoveObserver(event_id), InvalidArgument);  // already removed
      });
  ASSERT_TRUE(sim.AdvanceTo(1.0).ok());
  EXPECT_EQ(self_removing, 1);
  EXPECT_EQ(events, 1);
  EXPECT_EQ(added_calls, 20 * (steps - 1));  // the 20 new ones from the second step on
}

TEST(ReentrancyTest, RequestStopInterruptsAndTheRunContinuesBitIdentically) {
  Simulation reference(Ball());
  ASSERT_TRUE(reference.AdvanceTo(1.0).ok());

  Simulation sim(Ball());
  int steps = 0;
  sim.AddStepObserver([&](double, const VectorXd&, const VectorXd&) {
    if (++steps == 3) sim.RequestStop();  // the ball takes few event-free steps
  });
  const RunResult r = sim.AdvanceTo(1.0);
  EXPECT_EQ(r.status, RunStatus::kInterrupted);
  EXPECT_LT(sim.t(), 1.0);
  EXPECT_NEAR(r.t, sim.t(), 0.0);
  ASSERT_TRUE(sim.AdvanceTo(1.0).ok());
  // Same operations on the same inputs: an exact determinism check.
  EXPECT_EQ(sim.q(), reference.q());
  EXPECT_EQ(sim.v(), reference.v());

  // A request made while nothing runs stops the next AdvanceTo at once, and is consumed.
  sim.RequestStop();
  EXPECT_EQ(sim.AdvanceTo(1.5).status, RunStatus::kInterrupted);
  EXPECT_NEAR(sim.t(), 1.0, 0.0);
  EXPECT_TRUE(sim.AdvanceTo(1.5).ok());
}

TEST(ReentrancyTest, StopFlagFromAnotherThreadInterrupts) {
  Model m = Ball();
  SimulationOptions o = m.default_options();
  std::atomic<bool> flag{false};
  o.stop_flag = &flag;
  o.output_step = 0.0;
  Simulation sim(m, o);
  std::atomic<int> steps{0};
  sim.AddStepObserver([&](double, const VectorXd&, const VectorXd&) {
    // At the 10th step, wait until the other thread has set the flag (no race on the outcome).
    if (++steps == 10) {
      while (!flag.load()) std::this_thread::yield();
    }
  });
  std::thread stopper([&] {
    while (steps.load() < 10) std::this_thread::yield();
    flag.store(true);
  });
  const RunResult r = sim.AdvanceTo(1000.0);  // far longer than the test
  stopper.join();
  EXPECT_EQ(r.status, RunStatus::kInterrupted);
  flag.store(false);
  EXPECT_TRUE(sim.Step(0.01).ok());
}

TEST(ReentrancyTest, OutputRowsBeyondTheLimitAreRefused) {
  Model m = Ball();
  SimulationOptions o = m.default_options();
  o.output_step = 1e-300;
  Simulation sim(m, o);
  EXPECT_THROW(sim.AdvanceTo(1.0), InvalidArgument);
  EXPECT_THROW(sim.AdvanceTo(1e308), InvalidArgument);
  sim.SetMaxOutputRows(1e308);
  EXPECT_THROW(sim.SetMaxOutputRows(0.5), InvalidArgument);
  o.output_step = -1.0;
  EXPECT_THROW(Simulation(m, o), InvalidArgument);
}

TEST(ReentrancyTest, ARunKeepsItsRowsWhenACallbackThrows) {
  Simulation sim(Ball());
  sim.AddStepObserver([&](double t, const VectorXd&, const VectorXd&) {
    if (t > 0.3) throw std::runtime_error("host failed");
  });
  Trajectory traj;
  EXPECT_THROW(sim.RunInto(1.0, &traj), std::runtime_error);
  ASSERT_GE(traj.t.size(), 30u);  // the outputs 0, 0.01, ..., 0.3
  EXPECT_NEAR(traj.t.front(), 0.0, 0.0);
}

}  // namespace
}  // namespace saltus
