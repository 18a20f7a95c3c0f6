// Moreau–Jean time-stepping (timestepping/moreau_jean.h) against closed forms and against the
// event-driven loop: a bouncing sphere (impact times within O(h)), a sphere dropped onto the
// floor and left to rest (penetration within h |U|, then no further sinking), a five-sphere
// pyramid in a tight box (the closed-form rest state, and the rest state of events::Simulation),
// determinism, and bad options.
#include "timestepping/moreau_jean.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "contact/friction_problem.h"
#include "contact/sparse_friction_step.h"
#include "events/simulation.h"
#include "tools/generators_contact.h"
#include "tools/run_scheme.h"
#include "tools/scene.h"

namespace saltus::timestepping {
namespace {

constexpr double kG = 9.81;
constexpr double kR = 0.1;  // sphere radius in the scenes below (m)

std::string SphereScene(double z0, double e) {
  return "scene: ball\ndimension: 3\ngravity: [0, 0, -9.81]\nbodies:\n"
         "  - {name: ball, mass: 1, inertia: 0.004, position: [0, 0, " +
         std::to_string(z0) +
         "]}\n"
         "shapes:\n"
         "  - {name: floor, body: ground, type: plane, normal: [0, 0, 1], offset: 0}\n"
         "  - {name: s, body: ball, type: sphere, radius: 0.1}\n"
         "simulation:\n  t_end: 1\n  restitution: " +
         std::to_string(e) + "\n";
}

// Records every event (time and rows) and the last output.
struct Recorder : events::Observer {
  std::vector<events::Event> events;
  void OnEvent(const events::Event& e, const Eigen::VectorXd&, const Eigen::VectorXd&,
               const Eigen::VectorXd&) override {
    events.push_back(e);
  }
};

struct Built {
  std::shared_ptr<engine::MechanicalSystem> system;
  Eigen::VectorXd q0, v0;
  events::SimulationOptions options;
};

Built Build(const std::string& yaml) {
  const tools::Scene scene = tools::ParseScene(yaml, "test.yaml");
  const tools::SceneSystem s = tools::BuildSceneSystem(scene);
  return {s.system, s.q0, s.v0, scene.options};
}

MoreauJeanOptions Options(const Built& b, double h) {
  MoreauJeanOptions o = FromSimulationOptions(b.options);
  o.h = h;
  return o;
}

// Exact bounce times of a sphere dropped from rest at height z0 (centre) with restitution e:
// t₁ = √(2 (z0 − r) / g), t_{k+1} = t_k + 2 eᵏ v₁ / g.
std::vector<double> BounceTimes(double z0, double e, int count) {
  std::vector<double> t = {std::sqrt(2.0 * (z0 - kR) / kG)};
  const double v1 = kG * t[0];
  for (int k = 1; k < count; ++k) t.push_back(t.back() + 2.0 * std::pow(e, k) * v1 / kG);
  return t;
}

TEST(MoreauJean, BouncingSphereImpactTimesWithinOrderH) {
  const double z0 = 1.0, e = 0.8;
  const std::vector<double> exact = BounceTimes(z0, e, 4);
  double previous_error = 0.0;
  for (const double h : {1e-3, 1e-4}) {
    const Built b = Build(SphereScene(z0, e));
    MoreauJean mj(b.system, Options(b, h));
    Recorder rec;
    mj.AddObserver(&rec);
    mj.SetState(0.0, b.q0, b.v0);
    ASSERT_EQ(mj.AdvanceTo(exact.back() + 0.05).status, events::RunStatus::kFinished);
    ASSERT_GE(rec.events.size(), exact.size());
    double worst = 0.0;
    for (std::size_t k = 0; k < exact.size(); ++k) {
      // The impact is captured in the step whose predicted midpoint gap is ≤ 0 and logged at its
      // end: t_event ∈ [t*, t* + 1.5 h]; each rebound starts up to h late or early, and the
      // errors add up over the bounces: 2 h per bounce bounds them.
      const double error = std::abs(rec.events[k].t - exact[k]);
      EXPECT_LE(error, 2.0 * h * static_cast<double>(k + 1)) << "bounce " << k << ", h " << h;
      worst = std::max(worst, error);
    }
    if (previous_error > 0.0) {
      EXPECT_LT(worst, 0.5 * previous_error);  // O(h): 10x smaller h
    }
    previous_error = worst;
    // Newton's law over the step: the rebound speed of the first impact is e v₁ up to the
    // gravity impulse of one step.
    EXPECT_EQ(rec.events[0].rows.size(), 1u);
    EXPECT_LE(rec.events[0].energy_after, rec.events[0].energy_before + 1e-12);
  }
}

TEST(MoreauJean, DroppedSphereComesToRestOnTheFloorWithBoundedPenetration) {
  const double z0 = 0.5, h = 1e-3;
  const Built b = Build(SphereScene(z0, 0.0));
  MoreauJean mj(b.system, Options(b, h));
  Recorder rec;
  mj.AddObserver(&rec);
  mj.SetState(0.0, b.q0, b.v0);
  ASSERT_EQ(mj.AdvanceTo(1.0).status, events::RunStatus::kFinished);
  // Impact speed U = √(2 g (z0 − r)), e = 0 (header, "Speculative contacts"): the step that
  // captures the floor row with the gap law ends at g = 0 with U_{k+1} = −g(q̃)/(θ h), no faster
  // than U + g h; the next step's prediction moves it (1 − θ) h |U_{k+1}| in, where the plastic
  // law keeps it: at most (1 − θ) h (U + g h) = h (U + g h) / 2 below r (θ = 1/2). The position
  // projection (header) then lifts it to the floor: no step ends below −τ₀.
  const double speed = std::sqrt(2.0 * kG * (z0 - kR));
  const double bound = 0.5 * h * (speed + kG * h), tau0 = Options(b, h).tau0;
  EXPECT_LE(mj.deepest_before_projection(), bound);
  EXPECT_GT(mj.deepest_before_projection(), tau0);  // it does penetrate (e = 0: it stays)
  EXPECT_GE(mj.contact_projections(), 1);
  EXPECT_LE(mj.stats().max_position_violation, tau0);
  // At rest: U_{k+1} = 0 on the active floor row, no sinking: z stays where the projection put it
  // and v = 0 exactly (the LCP gives U⁺ = 0, the floor row is vertical).
  EXPECT_NEAR(mj.q()[2], kR, tau0);
  EXPECT_LE(mj.v().norm(), 1e-12);
  // The impact is the capturing step and, when the row ends it still approaching, the next one.
  ASSERT_GE(rec.events.size(), 1u);
  ASSERT_LE(rec.events.size(), 2u);
  if (rec.events.size() == 2) {
    EXPECT_NEAR(rec.events[1].t - rec.events[0].t, h, 1e-12);
  }
  for (const events::Event& ev : rec.events) {
    EXPECT_LE(ev.energy_after, ev.energy_before + 1e-12);
  }
}

// A sphere dropped with e = 0.5, v_e = 0.01 m/s from heights that put the floor at every phase of
// a step. Classical index set g(q̃) ≤ 0: the step before the capture may end θ h U inside and the
// capture adds (1 − e) h U / 2 (docs/time-stepping.md). Speculative contacts (header): every
// impact faster than v_e goes through the restitution pass and ends the step above the floor,
// and the last, slower than v_e, is captured by the gap law: the deepest point is
// (1 − θ) h (v_e + g h) below r (the g h: one step of gravity on the free approach).
TEST(MoreauJean, DroppedSphereWithSpeculativeContactsPenetratesAtMostTheSlowLandingsShare) {
  const double h = 1e-3, e = 0.5, v_e = 0.01;
  const double bound = 0.5 * h * (v_e + kG * h);
  double worst_classical = 0.0, worst = 0.0;
  for (int k = 0; k < 10; ++k) {
    // Fall times √(2 (z0 − r) / g) spread over one step h: z0 − r = ½ g (t0 + k h / 10)².
    const double fall = 0.3 + 0.1 * h * k;
    const double z0 = kR + 0.5 * kG * fall * fall;
    const Built b = Build(SphereScene(z0, e) + "  restitution_threshold: 0.01\n");
    for (const bool speculative : {false, true}) {
      MoreauJeanOptions o = Options(b, h);
      o.speculative = speculative;
      o.project_contacts = false;  // the law's own bound (the projection: the next tests)
      MoreauJean mj(b.system, o);
      Recorder rec;
      mj.AddObserver(&rec);
      mj.SetState(0.0, b.q0, b.v0);
      // Bounces end after 0.3 s (1 + 2 e / (1 − e)) = 0.9 s (the geometric series of flight
      // times 2 eᵏ U / g), and at the first approach slower than v_e.
      ASSERT_EQ(mj.AdvanceTo(1.5).status, events::RunStatus::kFinished);
      const double depth = mj.stats().max_position_violation;
      (speculative ? worst : worst_classical) =
          std::max(speculative ? worst : worst_classical, depth);
      if (!speculative) continue;
      EXPECT_LE(depth, bound) << "phase " << k;
      ASSERT_GE(rec.events.size(), 2u);  // it bounces
      for (const events::Event& ev : rec.events) {
        EXPECT_LE(ev.energy_after, ev.energy_before + 1e-12) << "phase " << k << ", t " << ev.t;
      }
      EXPECT_LE(mj.v().norm(), 1e-12);  // at rest on the floor
    }
  }
  // The classical index set goes deeper than h U / 4 (U = g · 0.3 s ≈ 2.9 m/s) at some phase;
  // speculative contacts stay within the bound, two orders of magnitude smaller.
  EXPECT_GT(worst_classical, 0.25 * h * kG * 0.3);
  EXPECT_LE(worst, bound);
  EXPECT_GT(worst, 0.0);
}

// A seeded 30-sphere pile (tools::SpherePileYaml, e = 0.5, v_e = 0.01 m/s) to 0.6 s, frictionless
// and μ = 0.5 (the sparse frictional step): with speculative contacts no contact of a step's
// problem ends below −(1 − θ) h (v_e + g h) (the slow landings' share, header) before the position
// projection, and none below −τ₀ after it, where the classical index set let the landing go ~1 mm
// deep. Every pair at the end is checked too (the gaps recomputed from the centres: rows outside
// the problem count as well).
// Deepest penetration before the position projection in a generated pile (header, "Position
// projection"): the slow landings' (1 − θ) h (v_e + g h), or a touching row (g_k ≤ 0, closed) hit
// at U_k, which Newton's law lets end (1 − θ − θ e) h |U_k| = (1 − e) h |U_k| / 2 inside (θ = 1/2).
// |U_k| ≤ twice the fastest sphere: free fall from the highest centre plus the seed's √3 · 0.5 m/s.
double PileDepthBound(const Built& b, double h, double e, double v_e) {
  double z_max = 0.0;
  for (Eigen::Index i = 2; i < b.q0.size(); i += 7) z_max = std::max(z_max, b.q0[i]);
  const double u_max = 2.0 * (std::sqrt(2.0 * kG * z_max) + std::sqrt(3.0) * 0.5);
  return std::max(0.5 * h * (v_e + kG * h), 0.5 * (1.0 - e) * h * u_max);
}

TEST(MoreauJean, PileGapsStayWithinTheSlowLandingsShareWithSpeculativeContacts) {
  const double h = 1e-3, r = 0.05, v_e = 0.01;
  const double bound = 0.5 * h * (v_e + kG * h);
  for (const char* friction : {"", "  friction: 0.5\n"}) {
    const Built b = Build(tools::SpherePileYaml(30, 0.6, 1) + friction);
    double classical = 0.0;
    for (const bool speculative : {false, true}) {
      MoreauJeanOptions o = Options(b, h);
      o.speculative = speculative;
      o.project_contacts = true;  // also with friction (off there by default)
      MoreauJean mj(b.system, o);
      mj.SetState(0.0, b.q0, b.v0);
      ASSERT_EQ(mj.AdvanceTo(0.6).status, events::RunStatus::kFinished) << friction;
      if (!speculative) {
        classical = mj.stats().max_position_violation;
        continue;
      }
      EXPECT_LE(mj.deepest_before_projection(), PileDepthBound(b, h, 0.5, v_e)) << friction;
      EXPECT_GT(mj.contact_projections(), 0) << friction;
      EXPECT_LE(mj.stats().max_position_violation, o.tau0) << friction;
      // Every pair at the final state (spatial q: 7 per body, centre first).
      const int n = static_cast<int>(mj.q().size() / 7);
      double smallest = 1.0;
      for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
          const double d = (mj.q().segment<3>(7 * i) - mj.q().segment<3>(7 * j)).norm();
          smallest = std::min(smallest, d - 2.0 * r);
        }
        smallest = std::min(smallest, mj.q()[7 * i + 2] - r);  // the floor
      }
      EXPECT_GE(smallest, -o.tau0) << friction;
    }
    EXPECT_GT(classical, 10.0 * bound) << friction;  // the classical scheme went deeper
  }
}

// Deferred open rows (header; MoreauJeanOptions::defer_open_rows, off by default) on the μ = 0.5
// pile of the test above: rows do join in later rounds, and the deepest penetration before the
// projection stays within PileDepthBound (a deferred row left violated would end up to θ h |U|
// inside), and none after it below −τ₀.
TEST(MoreauJean, DeferredOpenRowsKeepTheBoundsOfTheWholeProblem) {
  const double h = 1e-3, v_e = 0.01;
  const Built b = Build(tools::SpherePileYaml(30, 0.6, 1) + "  friction: 0.5\n");
  MoreauJeanOptions o = Options(b, h);
  o.defer_open_rows = true;
  o.project_contacts = true;
  MoreauJean mj(b.system, o);
  mj.SetState(0.0, b.q0, b.v0);
  ASSERT_EQ(mj.AdvanceTo(0.6).status, events::RunStatus::kFinished);
  EXPECT_GT(mj.deferred_rounds(), 0);
  EXPECT_LE(mj.deepest_before_projection(), PileDepthBound(b, h, 0.5, v_e));
  EXPECT_LE(mj.stats().max_position_violation, o.tau0);
}

// Four spheres on the floor in a square of side 2r, held by four walls at ±2r, and one dropped
// onto them: at rest the top one touches all four, so its centre is at
// z = r + √((2r)² − 2 r²) = r (1 + √2).
std::string PyramidScene() {
  std::string yaml =
      "scene: pyramid\ndimension: 3\ngravity: [0, 0, -9.81]\nbodies:\n"
      "  - {name: a, mass: 1, inertia: 0.004, position: [-0.1, -0.1, 0.1]}\n"
      "  - {name: b, mass: 1, inertia: 0.004, position: [0.1, -0.1, 0.1]}\n"
      "  - {name: c, mass: 1, inertia: 0.004, position: [-0.1, 0.1, 0.1]}\n"
      "  - {name: d, mass: 1, inertia: 0.004, position: [0.1, 0.1, 0.1]}\n"
      "  - {name: top, mass: 1, inertia: 0.004, position: [0, 0, 0.35]}\n"
      "shapes:\n"
      "  - {name: floor, body: ground, type: plane, normal: [0, 0, 1], offset: 0}\n"
      "  - {name: wall_xm, body: ground, type: plane, normal: [1, 0, 0], offset: -0.2}\n"
      "  - {name: wall_xp, body: ground, type: plane, normal: [-1, 0, 0], offset: -0.2}\n"
      "  - {name: wall_ym, body: ground, type: plane, normal: [0, 1, 0], offset: -0.2}\n"
      "  - {name: wall_yp, body: ground, type: plane, normal: [0, -1, 0], offset: -0.2}\n";
  for (const char* body : {"a", "b", "c", "d", "top"}) {
    yaml +=
        "  - {name: s_" + std::string(body) + ", body: " + body + ", type: sphere, radius: 0.1}\n";
  }
  yaml += "simulation:\n  t_end: 1\n  restitution: 0.5\n  restitution_threshold: 0.01\n";
  return yaml;
}

TEST(MoreauJean, PyramidRestsWhereTheClosedFormAndTheEventLoopPutIt) {
  const Built b = Build(PyramidScene());
  const double h = 1e-3, t_end = 1.5;
  MoreauJean mj(b.system, Options(b, h));
  mj.SetState(0.0, b.q0, b.v0);
  ASSERT_EQ(mj.AdvanceTo(t_end).status, events::RunStatus::kFinished);
  events::Simulation ed(b.system, b.options);
  ed.SetState(0.0, b.q0, b.v0);
  ASSERT_EQ(ed.AdvanceTo(t_end).status, events::RunStatus::kFinished);
  // Positions of the top sphere (spatial q: 7 per body, position first): the closed form and
  // the event loop agree to round-off; Moreau–Jean rests within its penetration at the last
  // impacts, h |U| with |U| ≤ √(2 g 0.05) ≈ 1 m/s, plus g h².
  const Eigen::Index top = 4 * 7;
  const double z_exact = kR * (1.0 + std::sqrt(2.0));
  EXPECT_NEAR(ed.q()[top + 2], z_exact, 1e-8);  // projection tolerance of the event loop
  const double bound = h * 1.0 + kG * h * h;
  EXPECT_NEAR(mj.q()[top + 2], z_exact, bound);
  // Symmetry: no lateral force on the top sphere, up to the round-off of the contact problems
  // (impulses to the LCP tolerance 1e-10 m/s: 1e-13 m per step over the 1.5 s).
  EXPECT_NEAR(mj.q()[top + 0], 0.0, 1e-10);
  EXPECT_NEAR(mj.q()[top + 1], 0.0, 1e-10);
  for (int body = 0; body < 4; ++body) {
    for (int d = 0; d < 3; ++d) {
      EXPECT_NEAR(mj.q()[7 * body + d], ed.q()[7 * body + d], bound) << body << ", " << d;
    }
  }
  EXPECT_LE(mj.v().lpNorm<Eigen::Infinity>(), 1e-9);  // at rest
  EXPECT_LE(mj.stats().max_position_violation, bound);
}

// Runs the scene of `b` to t_end with step h twice, the bodies all integrated (q[0]) and with
// sleeping on (q[1]); `check_sleeping` inspects the second run at its end. The integrated run
// must not report a sleeping island. False (with a failure recorded) if a run stops early.
bool RunWithAndWithoutSleeping(
    const Built& b, double h, double t_end, Eigen::VectorXd q[2],
    const std::function<void(const MoreauJean&, const MoreauJeanOptions&)>& check_sleeping) {
  for (const bool sleeping : {false, true}) {
    MoreauJeanOptions o = Options(b, h);
    o.sleeping = sleeping;
    MoreauJean mj(b.system, o);
    mj.SetState(0.0, b.q0, b.v0);
    const events::RunStatus status = mj.AdvanceTo(t_end).status;
    EXPECT_EQ(status, events::RunStatus::kFinished) << "sleeping " << sleeping;
    if (status != events::RunStatus::kFinished) return false;
    q[sleeping] = mj.q();
    EXPECT_EQ(mj.sleeping_enabled(), sleeping);
    if (sleeping) {
      check_sleeping(mj, o);
    } else {
      EXPECT_EQ(mj.islands_slept(), 0);
    }
  }
  return true;
}

// Sleeping (header, "Sleeping"). The pyramid above comes to rest, falls asleep as one island and
// stays where the fully integrated run rests: a frozen body differs from the integrated one at most
// by what creeping at sleep_speed for the rest of the run would move it, sleep_speed · t_end.
// A sixth sphere released above the top one later lands on the sleeping pyramid: the island wakes
// before the contact (the row enters I within the speculative margin), the six spheres settle and
// fall asleep again, at the rest state of the integrated run within the same bound.
TEST(MoreauJean, SleepingPileRestsWhereTheIntegratedPileRests) {
  const double h = 1e-3;
  long woken_without_drop = 0;
  for (const bool dropped : {false, true}) {
    std::string yaml = PyramidScene();
    double t_end = 1.5;
    if (dropped) {  // 2.5 m above the top sphere: it lands after √(2 · 2.5 / g) = 0.71 s
      const auto at = yaml.find("shapes:");
      yaml.insert(at, "  - {name: late, mass: 1, inertia: 0.004, position: [0, 0, 2.85]}\n");
      yaml.insert(yaml.find("simulation:"),
                  "  - {name: s_late, body: late, type: sphere, radius: 0.1}\n");
      t_end = 2.5;
    }
    const Built b = Build(yaml);
    Eigen::VectorXd q[2];
    const auto check = [&](const MoreauJean& mj, const MoreauJeanOptions& o) {
      const int bodies = dropped ? 6 : 5;
      EXPECT_EQ(mj.bodies_asleep(), bodies) << dropped;
      EXPECT_GE(mj.islands_slept(), dropped ? 2 : 1) << dropped;
      // Islands also fall asleep while the top sphere is in the air after a bounce, and wake when
      // it lands; the drop wakes the rested pyramid once more at least.
      if (dropped) {
        EXPECT_GT(mj.islands_woken(), woken_without_drop);
      } else {
        woken_without_drop = mj.islands_woken();
      }
      // Asleep for a good part of the run (the pyramid rests within about 0.5 s).
      EXPECT_GT(mj.sleeping_body_steps(), bodies * 200) << dropped;
      EXPECT_EQ(mj.v().lpNorm<Eigen::Infinity>(), 0.0);
      // The sleeping rows are reported with their impulses: the floor carries the weight.
      double floor = 0.0;
      for (std::size_t k = 0; k < mj.active_rows().size(); ++k) {
        if (b.system->constraint_info(mj.active_rows()[k]).name.find("floor") !=
            std::string::npos) {
          floor += mj.impulses()[static_cast<Eigen::Index>(k)];
        }
      }
      EXPECT_NEAR(floor / h, bodies * kG, 1e-6 * bodies * kG) << dropped;
      EXPECT_LE(mj.stats().max_position_violation, o.tau0) << dropped;
    };
    ASSERT_TRUE(RunWithAndWithoutSleeping(b, h, t_end, q, check)) << dropped;
    // Measured 1.4e-14 m (the pyramid) and 1.8e-11 m (with the drop).
    const double bound = MoreauJeanOptions{}.sleep_speed * t_end;
    EXPECT_LE((q[0] - q[1]).lpNorm<Eigen::Infinity>(), bound) << dropped;
  }
}

// Sleeping (header, "Sleeping"): a neighbour wakes a sleeping island only when it approaches it.
// A sphere S rests on the (frictionless) floor and falls asleep after sleep_time; a second sphere
// A slides along the floor at 1 m/s, past S with a closest gap of 5 µm (its row enters I near
// the closest point, within h v_e + τ₀ = 1e-5 m, but closes nothing), or into S with its line of
// centres offset by r (it hits S at t ≈ 0.33 s). Passing, S sleeps through (no island woken, S
// not integrated for the rest of the run, which the rule "a row of I to an awake body wakes"
// of the fifteenth session did not allow); hitting, S wakes in the step of the contact. Either
// way both spheres end where the fully integrated run puts them, within what creeping at
// sleep_speed over the run would move them, sleep_speed · t_end (the bound of the test above):
// the boundary row has P = 0 while S sleeps, as it has in the integrated run.
TEST(MoreauJean, SleepingSphereWakesOnlyForANeighbourThatApproaches) {
  const double h = 1e-3, t_end = 0.8, r = kR;  // 800 steps
  for (const double offset : {2.0 * r + 5e-6, r}) {
    const bool passes = offset > 2.0 * r;
    const std::string yaml =
        "scene: pass\ndimension: 3\ngravity: [0, 0, -9.81]\nbodies:\n"
        "  - {name: s, mass: 1, inertia: 0.004, position: [0, 0, 0.1]}\n"
        "  - {name: a, mass: 1, inertia: 0.004, position: [-0.5, " +
        std::to_string(offset) +
        ", 0.1], velocity: [1, 0, 0]}\n"
        "shapes:\n"
        "  - {name: floor, body: ground, type: plane, normal: [0, 0, 1], offset: 0}\n"
        "  - {name: s_s, body: s, type: sphere, radius: 0.1}\n"
        "  - {name: s_a, body: a, type: sphere, radius: 0.1}\n"
        "simulation:\n  t_end: 1\n  restitution: 0.5\n  restitution_threshold: 0.01\n";
    const Built b = Build(yaml);
    Eigen::VectorXd q[2];
    for (const bool sleeping : {false, true}) {
      MoreauJeanOptions o = Options(b, h);
      o.sleeping = sleeping;
      MoreauJean mj(b.system, o);
      mj.SetState(0.0, b.q0, b.v0);
      int steps_with_pair = 0;  // steps whose I holds the pair's row (reported rows)
      for (int k = 1; k <= 800; ++k) {
        ASSERT_EQ(mj.AdvanceTo(k * h).status, events::RunStatus::kFinished) << offset;
        for (int row : mj.active_rows()) {
          if (b.system->constraint_info(row).name.find("floor") == std::string::npos) {
            ++steps_with_pair;
            break;
          }
        }
      }
      q[sleeping] = mj.q();
      if (!sleeping) continue;
      EXPECT_GT(steps_with_pair, 0) << offset;  // the rule is tested: the row entered I
      EXPECT_EQ(mj.islands_slept(), 1) << offset;
      if (passes) {
        // Asleep from step 100 (the window) to the end: 700 body-steps.
        EXPECT_EQ(mj.islands_woken(), 0);
        EXPECT_EQ(mj.bodies_asleep(), 1);
        EXPECT_GE(mj.sleeping_body_steps(), 690);
      } else {
        EXPECT_EQ(mj.islands_woken(), 1);
        EXPECT_EQ(mj.bodies_asleep(), 0);
        EXPECT_GT(mj.stats().events[static_cast<int>(events::EventKind::kImpact)], 0);
      }
    }
    if (!passes) {
      EXPECT_GT(q[0][0], 0.05);  // S was hit and moves on
    }
    EXPECT_LE((q[0] - q[1]).lpNorm<Eigen::Infinity>(), MoreauJeanOptions{}.sleep_speed * t_end)
        << offset;
  }
}

// A pile-sized check of the rest state with sleeping (header, "Sleeping"): a 4 × 4 layer of
// spheres on the floor held by four walls at ±4r and a 3 × 3 layer in its hollows (25 spheres,
// frictionless, released 1 mm (the lower layer) and 2 mm (the upper one) above their rest heights).
// At rest the upper spheres touch the four below them: z = r (1 + √2) (closed form, as the pyramid
// above). With sleeping on, the pile falls asleep (every body, most of the run) and ends where the
// fully integrated run ends within sleep_speed · t_end (what creeping at sleep_speed over the run
// would move a body, the bound of the tests above); both end within the pyramid test's h |U| + g h²
// of the closed form, |U| ≤ √(2 g · 2 mm) here, so h · 0.2 m/s + g h².
TEST(MoreauJean, SleepingLayeredPileRestsWhereTheIntegratedPileRests) {
  const double h = 1e-3, t_end = 1.0, r = kR, lift = 1e-3;
  std::string yaml = "scene: layers\ndimension: 3\ngravity: [0, 0, -9.81]\nbodies:\n";
  std::string shapes =
      "shapes:\n"
      "  - {name: floor, body: ground, type: plane, normal: [0, 0, 1], offset: 0}\n"
      "  - {name: wall_xm, body: ground, type: plane, normal: [1, 0, 0], offset: -0.4}\n"
      "  - {name: wall_xp, body: ground, type: plane, normal: [-1, 0, 0], offset: -0.4}\n"
      "  - {name: wall_ym, body: ground, type: plane, normal: [0, 1, 0], offset: -0.4}\n"
      "  - {name: wall_yp, body: ground, type: plane, normal: [0, -1, 0], offset: -0.4}\n";
  const double z_top = r * (1.0 + std::sqrt(2.0));
  int count = 0;
  const auto add = [&](double x, double y, double z) {
    const std::string name = "b" + std::to_string(count++);
    yaml += "  - {name: " + name + ", mass: 1, inertia: 0.004, position: [" + std::to_string(x) +
            ", " + std::to_string(y) + ", " + std::to_string(z) + "]}\n";
    shapes += "  - {name: s" + name + ", body: " + name + ", type: sphere, radius: 0.1}\n";
  };
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) add(-0.3 + 0.2 * i, -0.3 + 0.2 * j, r + lift);
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) add(-0.2 + 0.2 * i, -0.2 + 0.2 * j, z_top + 2.0 * lift);
  }
  yaml += shapes + "simulation:\n  t_end: 1\n  restitution: 0.5\n  restitution_threshold: 0.01\n";
  const Built b = Build(yaml);
  Eigen::VectorXd q[2];
  ASSERT_TRUE(RunWithAndWithoutSleeping(b, h, t_end, q, [](const MoreauJean& mj, const auto&) {
    EXPECT_EQ(mj.bodies_asleep(), 25);
    EXPECT_GT(mj.sleeping_body_steps(), 25 * 300);  // asleep for more than 0.3 s of the 1 s
  }));
  const double closed_form = h * std::sqrt(2.0 * kG * 2.0 * lift) + kG * h * h;
  for (int body = 16; body < 25; ++body) {
    EXPECT_NEAR(q[0][7 * body + 2], z_top, closed_form) << body;
    EXPECT_NEAR(q[1][7 * body + 2], z_top, closed_form) << body;
  }
  EXPECT_LE((q[0] - q[1]).lpNorm<Eigen::Infinity>(), MoreauJeanOptions{}.sleep_speed * t_end);
}

// A solid sphere (I = 2/5 m r²) launched along the floor without spin, μ > 0: it slides with
// ẍ = −μ g and ω̇ = 5 μ g / (2 r) until its contact point sticks, at t_r = 2 v₀ / (7 μ g), and
// then rolls at 5/7 v₀ (e.g. Goldstein-type textbook result; the sticking contact is the exact
// cone's interior). The scheme's error is O(h) in time: h μ g in the speed, plus the LCP
// tolerance.
TEST(MoreauJean, SlidingSphereStartsRollingAtFiveSeventhsOfItsSpeed) {
  const double v0 = 2.0, mu = 0.3, h = 1e-3;
  std::string yaml = SphereScene(kR, 0.0) + "  friction: 0.3\n";
  const Built b = Build(yaml);
  Eigen::VectorXd v = b.v0;
  v[0] = v0;  // spatial v: linear velocity first
  MoreauJean mj(b.system, Options(b, h));
  mj.SetState(0.0, b.q0, v);
  const double t_roll = 2.0 * v0 / (7.0 * mu * kG);  // 0.194 s
  ASSERT_EQ(mj.AdvanceTo(0.5 * t_roll).status, events::RunStatus::kFinished);
  const double tol = 2.0 * h * mu * kG;
  EXPECT_NEAR(mj.v()[0], v0 - mu * kG * 0.5 * t_roll, tol);  // sliding: Coulomb's μ N
  ASSERT_EQ(mj.AdvanceTo(2.0 * t_roll).status, events::RunStatus::kFinished);
  EXPECT_NEAR(mj.v()[0], 5.0 / 7.0 * v0, tol);  // rolling
  EXPECT_NEAR(mj.v()[2], 0.0, 1e-9);            // resting on the floor, no bounce
  EXPECT_NEAR(mj.q()[2], kR, 1e-9);             // started touching: no penetration
  // Rolling: the contact point is at rest, v_x = ω r (the spin axis is y, ω_y > 0 for +x).
  EXPECT_NEAR(mj.v()[0] - kR * mj.v()[4], 0.0, 1e-8);
  EXPECT_EQ(mj.stats().events[static_cast<int>(events::EventKind::kImpact)], 0);
}

// A sphere released on a 30° incline: with μ ≥ 2/7 tan α it rolls without slipping at
// a = 5/7 g sin α; with μ below that it slides at a = g (sin α − μ cos α).
TEST(MoreauJean, SphereOnAnInclineRollsOrSlidesAsCoulombSays) {
  const double alpha = M_PI / 6.0, h = 1e-3, t_end = 0.3;
  for (const double mu : {0.3, 0.1}) {  // 2/7 tan 30° = 0.165
    const double s = std::sin(alpha), c = std::cos(alpha);
    std::string yaml =
        "scene: incline\ndimension: 3\ngravity: [0, 0, -9.81]\nbodies:\n"
        "  - {name: ball, mass: 1, inertia: 0.004, position: [" +
        std::to_string(kR * s) + ", 0, " + std::to_string(kR * c) +
        "]}\n"
        "shapes:\n"
        "  - {name: ramp, body: ground, type: plane, normal: [" +
        std::to_string(s) + ", 0, " + std::to_string(c) +
        "], offset: 0}\n"
        "  - {name: s, body: ball, type: sphere, radius: 0.1}\n"
        "simulation:\n  t_end: 1\n  friction: " +
        std::to_string(mu) + "\n";
    const Built b = Build(yaml);
    MoreauJean mj(b.system, Options(b, h));
    mj.SetState(0.0, b.q0, b.v0);
    ASSERT_EQ(mj.AdvanceTo(t_end).status, events::RunStatus::kFinished);
    const double a = mu >= 2.0 / 7.0 * std::tan(alpha) ? 5.0 / 7.0 * kG * s : kG * (s - mu * c);
    // Speed along the slope (down-slope direction (c, 0, −s)... here +x is up-slope's
    // opposite): |v| = a t, to O(h g).
    const Eigen::Vector3d down(c, 0.0, -s);
    const double speed = down.dot(mj.v().head<3>());
    EXPECT_NEAR(speed, a * t_end, 2.0 * h * kG) << "mu " << mu;
  }
}

// Runs every step with the block-sparse frictional solver and, on the same problem, with the
// dense one (contact::SolveFrictionalVelocityStep); records the largest difference of v⁺ and the
// number of steps compared. Steps continue from the sparse answer.
class ComparingSolver : public StepContactSolver {
 public:
  contact::ImpactResult Solve(const engine::MechanicalSystem& system, double t,
                              const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                              const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
                              std::span<const int> unilateral_rows,
                              std::span<const double> restitution, std::span<const double> gap_rate,
                              const contact::LcpOptions& options) const override {
    contact::FrictionOptions fo;
    fo.tolerance = options.tolerance;
    fo.max_iterations = options.max_iterations;
    fo.diagnose = false;
    contact::SparseStepOptions so;
    so.gap_rate = gap_rate;
    const std::optional<contact::FrictionalImpactResult> sparse =
        contact::SolveFrictionalVelocityStepSparse(system, t, q, v, f, unilateral_rows, restitution,
                                                   fo, so);
    // The same step twice through a contact::ComponentMemo: the second call answers every
    // component from the memo, with the same v⁺ to the bit.
    contact::ComponentMemo memo;
    so.memo = &memo;
    const auto first = contact::SolveFrictionalVelocityStepSparse(
        system, t, q, v, f, unilateral_rows, restitution, fo, so);
    const auto again = contact::SolveFrictionalVelocityStepSparse(
        system, t, q, v, f, unilateral_rows, restitution, fo, so);
    if (first && again && first->components > 0) {
      ++memo_checks;
      if (memo.reused != first->components || again->components != first->components ||
          again->v_plus != first->v_plus) {
        ++memo_mismatches;
      }
    }
    std::vector<contact::FrictionalContact> contacts;
    for (std::size_t k = 0; k < unilateral_rows.size(); ++k) {
      contacts.push_back(
          contact::FrictionalContact::FromSystem(system, unilateral_rows[k], restitution[k]));
      contacts.back().gap_rate = gap_rate[k];
    }
    const contact::FrictionalImpactResult dense =
        contact::SolveFrictionalVelocityStep(system, t, q, v, f, bilateral_rows, contacts, fo);
    if (!sparse || !sparse->ok || !dense.ok) {
      ++failures;
    } else {
      ++compared;
      largest_contacts = std::max(largest_contacts, static_cast<int>(contacts.size()));
      max_dv = std::max(max_dv, (sparse->v_plus - dense.v_plus).lpNorm<Eigen::Infinity>());
      max_dE =
          std::max(max_dE, std::abs(sparse->kinetic_energy_change - dense.kinetic_energy_change));
    }
    return solver_.Solve(system, t, q, v, f, bilateral_rows, unilateral_rows, restitution, gap_rate,
                         options);
  }
  mutable int compared = 0, failures = 0, largest_contacts = 0, memo_checks = 0,
              memo_mismatches = 0;
  mutable double max_dv = 0.0, max_dE = 0.0;

 private:
  FrictionalStepSolver solver_{contact::FrictionCone::kExact, 8, true};
};

// The block-sparse frictional step equals the dense one to the solver tolerance on every step of
// a seeded 10-sphere pile (μ = 0.5, e = 0.5; nv = 60 ≥ engine::kSparseMinimumNv) falling and
// settling for 0.4 s. Tolerance: both solve Coulomb's law to a natural-map residual of 1e-10
// relative to max(1, ‖b‖∞) (b ~ 1 m/s at the landings), and v⁺ − v_free = M⁻¹ Gᵀ P moves by
// ‖M⁻¹ Gᵀ‖ ‖ΔP‖, with ΔP up to the residual over W's smallest non-zero eigenvalue. Measured
// 2026-11-28: 400 steps compared, at most 11 contacts, max |Δv⁺| = 4.7e-10 m/s and
// |ΔT| = 6.7e-14 J; the bounds leave a factor of about 20.
TEST(MoreauJean, SparseFrictionalStepEqualsTheDenseOneOnAPile) {
  const Built b = Build(tools::SpherePileYaml(10, 0.4, 1) + "  friction: 0.5\n");
  auto solver = std::make_shared<ComparingSolver>();
  MoreauJean mj(b.system, Options(b, 1e-3), solver);
  mj.SetState(0.0, b.q0, b.v0);
  ASSERT_EQ(mj.AdvanceTo(0.4).status, events::RunStatus::kFinished);
  EXPECT_EQ(solver->failures, 0);
  EXPECT_GT(solver->compared, 100);
  EXPECT_GE(solver->largest_contacts, 10);  // every sphere touches something by then
  EXPECT_LT(solver->max_dv, 1e-8);          // m/s
  EXPECT_LT(solver->max_dE, 1e-12);         // J; T ~ 0.1 kg (1 m/s)² at the landings
  EXPECT_GT(solver->memo_checks, 100);
  EXPECT_EQ(solver->memo_mismatches, 0);
}

TEST(MoreauJean, RunsAreBitIdentical) {
  const Built b = Build(PyramidScene());
  const auto run = [&] {
    MoreauJean mj(b.system, Options(b, 2e-3));
    mj.SetState(0.0, b.q0, b.v0);
    EXPECT_EQ(mj.AdvanceTo(0.4).status, events::RunStatus::kFinished);
    return mj.q();
  };
  const Eigen::VectorXd first = run(), second = run();
  for (Eigen::Index i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], second[i]);  // determinism
}

TEST(MoreauJean, LastStepLandsOnTEndAndOutputsFollowTheGrid) {
  const Built b = Build(SphereScene(1.0, 0.5));
  MoreauJeanOptions o = Options(b, 3e-3);
  o.output_step = 0.01;
  struct Outputs : events::Observer {
    std::vector<double> t;
    void OnOutput(double time, const Eigen::VectorXd&, const Eigen::VectorXd&) override {
      t.push_back(time);
    }
  } outputs;
  MoreauJean mj(b.system, o);
  mj.AddObserver(&outputs);
  mj.SetState(0.0, b.q0, b.v0);
  const events::RunResult r = mj.AdvanceTo(0.1);
  EXPECT_EQ(r.status, events::RunStatus::kFinished);
  EXPECT_DOUBLE_EQ(mj.t(), 0.1);
  // One output per grid point 0, 0.01, ..., at the first step end at or after it (h = 3 ms).
  ASSERT_EQ(outputs.t.size(), 11u);
  for (std::size_t k = 0; k < outputs.t.size(); ++k) {
    EXPECT_GE(outputs.t[k], 0.01 * static_cast<double>(k) - 1e-12);
    EXPECT_LT(outputs.t[k], 0.01 * static_cast<double>(k) + 3e-3 + 1e-12);
  }
  // Free fall before the first bounce (t₁ = 0.42 s): the θ = 1/2 scheme is exact for constant
  // gravity (the midpoint rule on a quadratic), up to round-off.
  EXPECT_NEAR(mj.q()[2], 1.0 - 0.5 * kG * 0.01, 1e-12);
}

TEST(MoreauJean, BadOptionsAndStatesThrowNamingTheItem) {
  const Built b = Build(SphereScene(1.0, 0.5));
  const auto message = [&](MoreauJeanOptions o) {
    try {
      MoreauJean mj(b.system, o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  MoreauJeanOptions o = Options(b, 1e-3);
  o.h = 0.0;
  EXPECT_NE(message(o).find("step"), std::string::npos);
  o = Options(b, 1e-3);
  o.theta = 0.3;
  EXPECT_NE(message(o).find("theta"), std::string::npos);
  o = Options(b, 1e-3);
  o.restitution = 1.5;
  EXPECT_NE(message(o).find("restitution"), std::string::npos);
  MoreauJean mj(b.system, Options(b, 1e-3));
  EXPECT_THROW(mj.AdvanceTo(1.0), std::logic_error);
  Eigen::VectorXd q = b.q0;
  q[2] = 0.05;  // the sphere (r = 0.1) 5 cm into the floor
  try {
    mj.SetState(0.0, q, b.v0);
    ADD_FAILURE() << "penetration accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'floor-s'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mj.SetState(0.0, b.q0.head(3), b.v0), std::invalid_argument);
}

// The message of the SceneError that parsing `yaml` (as s.yaml) raises, or "no error".
std::string SceneErrorOf(const std::string& yaml) {
  try {
    tools::ParseScene(yaml, "s.yaml");
  } catch (const tools::SceneError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(MoreauJeanScene, StepAndThetaKeys) {
  const std::string base = SphereScene(1.0, 0.5);
  // `step` is h_init with adaptive: false; theta reaches the scene.
  const tools::Scene s =
      tools::ParseScene(base + "  integrator: moreau_jean\n  step: 2.0e-3\n  theta: 0.75\n");
  EXPECT_EQ(s.options.integrator, "moreau_jean");
  EXPECT_EQ(s.options.integrator_options.h_init, 2e-3);  // parsed exactly
  EXPECT_FALSE(s.options.integrator_options.adaptive);
  EXPECT_EQ(s.time_stepping.theta, 0.75);
  const auto error = [&](const std::string& extra) { return SceneErrorOf(base + extra); };
  // Lines: the simulation section is line 9 of SphereScene, t_end 10, restitution 11, so the
  // first extra key is line 12.
  EXPECT_NE(error("  integrator: moreau_jean\n")
                .find("s.yaml:12: simulation: integrator "
                      "moreau_jean needs a fixed step"),
            std::string::npos)
      << error("  integrator: moreau_jean\n");
  EXPECT_NE(error("  theta: 0.5\n").find("theta is a parameter of integrator moreau_jean"),
            std::string::npos);
  EXPECT_NE(error("  integrator: moreau_jean\n  step: 1.0e-3\n  theta: 0.2\n")
                .find("theta must be in [0.5, 1]"),
            std::string::npos);
  EXPECT_NE(error("  step: 1.0e-3\n  h_init: 1.0e-3\n").find("give either step or h_init"),
            std::string::npos);
}

// `simulation.project_contacts`, `sleeping`, `sleep_speed` and `sleep_time` reach the scene (the
// defaults of MoreauJeanOptions without them); bad values and the keys without moreau_jean fail
// at their line (the first extra key is line 12, StepAndThetaKeys).
TEST(MoreauJeanScene, ProjectionAndSleepingKeys) {
  const std::string base = SphereScene(1.0, 0.5);
  const std::string mj = "  integrator: moreau_jean\n  step: 1.0e-3\n";
  const timestepping::SceneKeys defaults = tools::ParseScene(base + mj).time_stepping;
  EXPECT_FALSE(defaults.project_contacts.has_value());  // on when no contact has friction
  EXPECT_TRUE(defaults.sleeping);
  EXPECT_EQ(defaults.sleep_speed, MoreauJeanOptions{}.sleep_speed);
  EXPECT_EQ(defaults.sleep_time, MoreauJeanOptions{}.sleep_time);
  const timestepping::SceneKeys keys =
      tools::ParseScene(base + mj +
                        "  project_contacts: false\n  sleeping: false\n  sleep_speed: 2.0e-4\n"
                        "  sleep_time: 0.25\n")
          .time_stepping;
  EXPECT_EQ(keys.project_contacts, false);
  EXPECT_FALSE(keys.sleeping);
  EXPECT_EQ(keys.sleep_speed, 2e-4);
  EXPECT_EQ(keys.sleep_time, 0.25);
  MoreauJeanOptions o;
  keys.ApplyTo(&o);
  EXPECT_EQ(o.project_contacts, false);
  EXPECT_FALSE(o.sleeping);
  EXPECT_EQ(o.sleep_speed, 2e-4);
  EXPECT_EQ(o.sleep_time, 0.25);
  // Without the key the projection is on when no contact has friction (header, "Position
  // projection"); the key decides otherwise.
  for (const char* extra : {"", "  friction: 0.5\n", "  friction: 0.5\n  project_contacts: true\n",
                            "  project_contacts: false\n"}) {
    const tools::Scene scene = tools::ParseScene(base + mj + extra);
    const tools::SceneSystem built = tools::BuildSceneSystem(scene);
    MoreauJeanOptions options = FromSimulationOptions(scene.options);
    scene.time_stepping.ApplyTo(&options);
    const MoreauJean scheme(built.system, options);
    const bool expected =
        std::string(extra).find("true") != std::string::npos || std::string(extra).empty();
    EXPECT_EQ(scheme.projects_contacts(), expected) << extra;
  }
  const auto error = [&](const std::string& extra) { return SceneErrorOf(base + extra); };
  for (const char* key :
       {"project_contacts: true", "sleeping: false", "sleep_speed: 1.0e-4", "sleep_time: 0.2"}) {
    const std::string message = error("  " + std::string(key) + "\n");
    const std::string name = std::string(key).substr(0, std::string(key).find(':'));
    EXPECT_NE(message.find("s.yaml:12: simulation: " + name +
                           " is a parameter of integrator moreau_jean"),
              std::string::npos)
        << message;
  }
  const auto bad = [&](const std::string& extra, const std::string& what) {
    const std::string message = error(mj + extra);
    EXPECT_NE(message.find("s.yaml:14: simulation: " + what), std::string::npos) << message;
  };
  bad("  project_contacts: maybe\n", "project_contacts must be true or false");
  bad("  sleeping: 1\n", "sleeping must be true or false");
  bad("  sleep_speed: -1\n", "sleep_speed must be");
  bad("  sleep_speed: .nan\n", "sleep_speed must be");
  bad("  sleep_time: 0\n", "sleep_time must be");
}

// `simulation.speculative` (default true) reaches the scheme through tools::MakeScheme: with
// false the dropped sphere of DroppedSphereWithSpeculativeContacts... goes h U / 4 deep again
// (the classical index set), with true it stays within (1 − θ) h (v_e + g h). Bad values and the
// key without moreau_jean fail at its line.
TEST(MoreauJeanScene, SpeculativeKeySwitchesSpeculativeContacts) {
  const double h = 1e-3, e = 0.5, v_e = 0.01;
  const std::string mj =
      "  restitution_threshold: 0.01\n  integrator: moreau_jean\n  step: 1.0e-3\n";
  EXPECT_TRUE(tools::ParseScene(SphereScene(1.0, e) + mj).time_stepping.speculative);
  // The floor at ten phases of a step, as in the test above; 0.5 s covers the first impact.
  double depth[2] = {0.0, 0.0};
  for (int k = 0; k < 10; ++k) {
    const double fall = 0.3 + 0.1 * h * k;
    const double z0 = kR + 0.5 * kG * fall * fall;
    for (const bool speculative : {false, true}) {
      const tools::Scene scene =
          tools::ParseScene(SphereScene(z0, e) + mj +
                            (speculative ? "  speculative: true\n" : "  speculative: false\n"));
      ASSERT_EQ(scene.time_stepping.speculative, speculative);
      const tools::SceneSystem s = tools::BuildSceneSystem(scene);
      const std::unique_ptr<tools::Scheme> scheme =
          tools::MakeScheme(s.system, scene.options, scene.time_stepping);
      scheme->SetState(0.0, s.q0, s.v0, events::StateOrigin::kInitial);
      ASSERT_EQ(scheme->AdvanceTo(0.5).status, events::RunStatus::kFinished);
      depth[speculative] = std::max(depth[speculative], scheme->stats().max_position_violation);
    }
  }
  EXPECT_GT(depth[0], 0.25 * h * kG * 0.3);
  EXPECT_LE(depth[1], 0.5 * h * (v_e + kG * h));
  const std::string base = SphereScene(1.0, e);
  const auto error = [&](const std::string& extra) { return SceneErrorOf(base + extra); };
  // Lines: the first extra key is line 12 (StepAndThetaKeys).
  EXPECT_NE(
      error("  speculative: false\n")
          .find("s.yaml:12: simulation: speculative is a parameter of integrator moreau_jean"),
      std::string::npos)
      << error("  speculative: false\n");
  EXPECT_NE(error("  integrator: moreau_jean\n  step: 1.0e-3\n  speculative: maybe\n")
                .find("s.yaml:14: simulation: speculative must be true or false"),
            std::string::npos)
      << error("  integrator: moreau_jean\n  step: 1.0e-3\n  speculative: maybe\n");
}

}  // namespace
}  // namespace saltus::timestepping
