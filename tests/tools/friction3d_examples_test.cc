// Coulomb friction in 3D at user level (issue 18 §4-§5): the scenes of examples/friction3d/ are
// loaded as `saltus run` loads them and checked against their closed forms — the rolling sphere's
// end of slip, the side-spun sphere whose slip direction is not its velocity's, a box flat on
// four corners on an incline (redundant contacts: an indeterminate force split) that sticks or
// slides as a whole, a box that slides while spinning, the draw shot, a ball chain on a rough
// floor, a small pile held by friction, and the slip-direction error of the faceted cone.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

#include "friction_scene_run.h"

namespace saltus::tools {
namespace {

using events::ContactMode;
using events::EventKind;

const std::filesystem::path kExamples = std::filesystem::path(SALTUS_EXAMPLES_DIR) / "friction3d";
constexpr double kG = 9.81;

struct Friction3dRun : SceneRun {
  explicit Friction3dRun(const std::string& file, const std::function<void(Scene&)>& edit = {})
      : SceneRun(kExamples, file, edit) {}
  // Velocity of the body-frame origin (world) and angular velocity (world) of body b.
  Eigen::Vector3d Velocity(int b = 0) const { return sim->v().segment<3>(6 * b); }
  Eigen::Vector3d AngularVelocityWorld(int b = 0) const {
    const Eigen::VectorXd& q = sim->q();
    const Eigen::Quaterniond r(q[7 * b + 3], q[7 * b + 4], q[7 * b + 5], q[7 * b + 6]);
    return r.normalized() * Eigen::Vector3d(sim->v().segment<3>(6 * b + 3));
  }
};

// A sphere on a plane: the slip ṡ = −(7/2) μ g ŝ keeps its direction, so the slide ends at
// t* = 2|s₀|/(7 μ g) with v = v₀ − (2/7) s₀ (the scenes' headers). DOPRI5 integrates the linear
// decay exactly and the stop is located on d₀·ġ_T, linear in t, to the root tolerance
// 1e-12·max(1, t): 1e-11 s and 1e-9 m/s (velocities after the stick projection) hold.
void ExpectSlideEnds(const std::string& file, const Eigen::Vector3d& v0, const Eigen::Vector3d& s0,
                     double mu) {
  Friction3dRun run(file);
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished) << file;
  const auto sticks = run.rec.Of(EventKind::kStick);
  ASSERT_EQ(sticks.size(), 1u) << file;
  EXPECT_NEAR(sticks[0]->t, 2.0 * s0.norm() / (7.0 * mu * kG), 1e-11) << file;
  EXPECT_EQ(run.rec.events.size(), 2u) << file;  // the closing at t = 0 and the stick
  const Eigen::Vector3d v = v0 - 2.0 / 7.0 * s0;
  EXPECT_LE((run.Velocity() - v).norm(), 1e-9) << file;
  // Rolling: the contact point at rest, v = ω × r e_z.
  const Eigen::Vector3d w = run.AngularVelocityWorld();
  EXPECT_LE((run.Velocity() + w.cross(Eigen::Vector3d(0, 0, -0.1))).norm(), 1e-9) << file;
}

TEST(Friction3dScenes, RollingSphereEndsItsSlipAtTheClosedForm) {
  ExpectSlideEnds("rolling_sphere.yaml", {1, 0, 0}, {1, 0, 0}, 0.2);
}

// Side spin: the slip (1, 0.5, 0) is not along v₀ = (1, 0, 0); the spin about the vertical
// (3 rad/s) meets no torque.
TEST(Friction3dScenes, SideSpunSphereSlidesAlongItsSlipNotItsVelocity) {
  ExpectSlideEnds("sphere_sidespin.yaml", {1, 0, 0}, {1, 0.5, 0}, 0.2);
  Friction3dRun run("sphere_sidespin.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  EXPECT_NEAR(run.AngularVelocityWorld()[2], 3.0, 1e-9);
}

// The box flat on its four corners on the incline (α = 0.3 rad, m = 2 kg): μ = 0.4 and μ = 0.32,
// both above tan α = 0.3093. With μ = 0.32 the minimum-norm split of the index-1 solve puts
// |λ_T|/λ_N = 0.366 > μ on the uphill corners (the normal load shifts downhill, the tangential
// load spreads evenly); the box must stick all the same, with every corner inside its cone
// (events/force_split.h), and the resultants m g sin α up the slope and m g cos α normal.
TEST(Friction3dScenes, BoxOnFourCornersSticksAsAWholeWithForcesInsideEveryCone) {
  const double m = 2.0, alpha = 0.3;
  for (double mu : {0.4, 0.32}) {
    Friction3dRun run("box_incline_stick.yaml", [&](Scene& s) {
      for (auto& p : s.spatial.contact_pairs) p.friction = mu;
    });
    const Eigen::VectorXd q0 = run.sim->q();
    ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished) << mu;
    EXPECT_EQ(run.rec.events.size(), 1u) << mu;  // the closing at t = 0 only
    EXPECT_LE((run.sim->q() - q0).norm(), 1e-12) << mu;
    Eigen::Vector3d resultant = Eigen::Vector3d::Zero();
    for (const auto& f : run.sim->ContactForces()) {
      EXPECT_EQ(f.mode, ContactMode::kStick);
      EXPECT_GE(f.normal, 0.0);
      // The faceted inner cone (16 facets) lies inside the exact one.
      EXPECT_LE(f.tangential.norm(), mu * f.normal * (1 + 1e-12)) << mu;
      resultant += Eigen::Vector3d(f.tangential[0], f.tangential[1], f.normal);
    }
    // Tangent bases of a plane contact are fixed but not known here: compare magnitudes.
    EXPECT_NEAR(resultant.head<2>().norm(), m * kG * std::sin(alpha), 1e-9) << mu;
    EXPECT_NEAR(resultant[2], m * kG * std::cos(alpha), 1e-9) << mu;
  }
}

// μ = 0.2 < tan α: the box slides down as a whole, x(t) = −½ g (sin α − μ cos α) t², no rotation.
// DOPRI5 integrates the parabola exactly: 1e-9 m.
TEST(Friction3dScenes, BoxOnFourCornersSlidesAsAWhole) {
  const double mu = 0.2, alpha = 0.3;
  Friction3dRun run("box_incline_slide.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  EXPECT_EQ(run.rec.events.size(), 1u);
  const double a = kG * (std::sin(alpha) - mu * std::cos(alpha));
  EXPECT_NEAR(run.sim->q()[0], -0.5 * a, 1e-9);
  EXPECT_NEAR(run.sim->q()[1], 0.0, 1e-9);
  EXPECT_NEAR(run.sim->q()[2], 0.1, 1e-9);
  EXPECT_LE(run.sim->v().segment<3>(3).norm(), 1e-9);  // no rotation
  for (const auto& f : run.sim->ContactForces()) EXPECT_EQ(f.mode, ContactMode::kSlip);
}

// Index in rec.events of the only event of kind k (−1 and a failure otherwise).
int OnlyEvent(const Recorder& rec, EventKind k) {
  int found = -1, count = 0;
  for (int i = 0; i < static_cast<int>(rec.events.size()); ++i) {
    if (rec.events[i].kind == k) found = i, ++count;
  }
  EXPECT_EQ(count, 1);
  return count == 1 ? found : -1;
}

// A square box on four corners (spinning_sliding_box.yaml: half side 0.2 m, m = 1 kg,
// J_z = m (2 · 0.2²)/3, μ = 0.2). Spinning alone, every corner carries m g/4 (symmetry; the
// diagonal split that the rigid box leaves free changes neither the torque μ m g a nor the zero
// resultant) and ω falls linearly: stop at J_z ω₀/(μ m g a), a = √2 · 0.2 m, located on the
// linear slip speed to the root tolerance: 1e-10 s.
TEST(Friction3dScenes, SpinningBoxStopsAtTheClosedForm) {
  const double m = 1.0, jz = m * 2 * 0.04 / 3, a = std::sqrt(2.0) * 0.2, mu = 0.2, w0 = 10.0;
  Friction3dRun run("spinning_sliding_box.yaml",
                    [](Scene& s) { s.spatial.bodies[0].velocity.setZero(); });
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  const int i = OnlyEvent(run.rec, EventKind::kStick);
  ASSERT_GE(i, 0);
  EXPECT_EQ(run.rec.events[i].rows.size(), 4u);
  EXPECT_NEAR(run.rec.events[i].t, jz * w0 / (mu * m * kG * a), 1e-10);
  EXPECT_LE(run.sim->v().norm(), 1e-9);
  EXPECT_EQ(run.sim->stats().painleve_indeterminate, 0);
}

// Sliding and spinning: the corners slide in different directions, so the friction depends on
// the free diagonal split of the normal loads (an indeterminate configuration, counted; the run
// goes on with `painleve: impact`). All four corners stick at one event: translation and spin
// end at the same instant t_s. Just before, the box slides almost along v at every corner, so
// v = μ g (t_s − t); the relative error is of order (ω a / v)² < 1e-6 at t_s − 0.01 s (measured
// ω a / v = 2e-3 there): 1e-4.
TEST(Friction3dScenes, SlidingSpinningBoxStopsTranslatingAndTurningTogether) {
  const double mu = 0.2, before = 0.8;
  Friction3dRun run("spinning_sliding_box.yaml");
  ASSERT_EQ(run.Advance(before).status, events::RunStatus::kFinished);
  EXPECT_GE(run.sim->stats().painleve_indeterminate, 1);
  const double v_before = run.Velocity().norm(), w_before = run.AngularVelocityWorld()[2];
  EXPECT_GT(w_before, 0.0);
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  const int i = OnlyEvent(run.rec, EventKind::kStick);
  ASSERT_GE(i, 0);
  const double t_s = run.rec.events[i].t;
  EXPECT_EQ(run.rec.events[i].rows.size(), 4u);
  EXPECT_GT(t_s, before);
  EXPECT_NEAR(v_before / (mu * kG * (t_s - before)), 1.0, 1e-4);
  EXPECT_LE(run.sim->v().norm(), 1e-9);
}

// Draw shot (billiard_draw.yaml): sliding before the collision, v̇ = −μ g, ω̇_y = (5/2) μ g/r; the
// smooth elastic collision swaps the velocities and keeps the spins; each ball then ends its
// slip at t + 2|s|/(7 μ g) and rolls at (5 v + 2 r ω_y)/7. The impact time solves the gap, a
// quadratic in t, and the stops are linear in t, all to the root tolerance 1e-12·max(1, t):
// 1e-10 s; velocities after the stick projections: 1e-9 m/s.
TEST(Friction3dScenes, DrawShotBackspinBringsTheCueBallBack) {
  const double mu = 0.2, r = 0.1, v0 = 2.0, w0 = -40.0, gap = 0.35, a = mu * kG;
  const double tc = (v0 - std::sqrt(v0 * v0 - 2 * a * gap)) / a;
  const double vc = v0 - a * tc, wc = w0 + 2.5 * a / r * tc;
  Friction3dRun run("billiard_draw.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  const int i = OnlyEvent(run.rec, EventKind::kImpact);
  ASSERT_GE(i, 0);
  EXPECT_NEAR(run.rec.events[i].t, tc, 1e-10);
  EXPECT_NEAR(run.rec.v_after[i][0], 0.0, 1e-9);  // the cue ball stops, keeping its backspin
  EXPECT_NEAR(run.rec.v_after[i][4], wc, 1e-9);
  EXPECT_NEAR(run.rec.v_after[i][6], vc, 1e-9);
  const auto sticks = run.rec.Of(EventKind::kStick);
  ASSERT_EQ(sticks.size(), 2u);
  EXPECT_NEAR(sticks[0]->t, tc + 2 * vc / (7 * a), 1e-10);         // the object ball
  EXPECT_NEAR(sticks[1]->t, tc + 2 * (-r * wc) / (7 * a), 1e-10);  // the cue ball
  EXPECT_LE((run.Velocity(0) - Eigen::Vector3d(2 * r * wc / 7, 0, 0)).norm(), 1e-9);  // back
  EXPECT_LE((run.Velocity(1) - Eigen::Vector3d(5 * vc / 7, 0, 0)).norm(), 1e-9);
}

// Ball chain on a rough floor (ball_chain_friction.yaml): the simultaneous Newton impact of four
// equal balls with e = 1 gives v = −V/2 to the striker and V/2 to the three others, impulses
// 1.5, 1, 0.5 N s (V = 1 m/s, m = 1 kg); the impact happens at 0.3 s (the striker rolls at V
// over the 0.3 m gap, a linear gap). Then the slides end at 0.3 + 2|s|/(7 μ g) with
// v = (5 v + 2 r ω_y)/7. Tolerances as in the draw shot.
TEST(Friction3dScenes, BallChainOnARoughFloorRollsAtTheClosedForms) {
  const double mu = 0.2, r = 0.1, a = mu * kG, tc = 0.3;
  Friction3dRun run("ball_chain_friction.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  const int i = OnlyEvent(run.rec, EventKind::kImpact);
  ASSERT_GE(i, 0);
  EXPECT_NEAR(run.rec.events[i].t, tc, 1e-10);
  const std::vector<double> impulses = {1.5, 1.0, 0.5};
  ASSERT_EQ(run.rec.events[i].impulses.size(), impulses.size());
  for (size_t k = 0; k < impulses.size(); ++k) {
    EXPECT_NEAR(run.rec.events[i].impulses[k], impulses[k], 1e-9);
  }
  const auto sticks = run.rec.Of(EventKind::kStick);
  ASSERT_EQ(sticks.size(), 2u);
  EXPECT_EQ(sticks[0]->rows.size(), 3u);  // the three struck balls together
  EXPECT_NEAR(sticks[0]->t, tc + 2 * 0.5 / (7 * a), 1e-10);
  EXPECT_NEAR(sticks[1]->t, tc + 2 * 1.5 / (7 * a), 1e-10);
  EXPECT_NEAR(run.Velocity(0)[0], (5 * -0.5 + 2 * r * 10) / 7, 1e-9);
  for (int b = 1; b <= 3; ++b) EXPECT_NEAR(run.Velocity(b)[0], 5 * 0.5 / 7, 1e-9) << b;
}

// The small pile (pile_friction.yaml): held by friction it keeps the top sphere at the apex of
// the tetrahedron, z = r (1 + 2√(2/3)), comes to rest (every speed ≤ 1e-6 m/s) and stays: no
// event after the landing of the top sphere. The lower spheres hold only while
// μ ≥ tan(β/2) = 0.3178 (cos β = √(2/3); the scene's header): μ = 0.35 holds, μ = 0.30 lets them
// roll away and the top sphere ends on the floor (z = r). Heights after the stick projection:
// 1e-9 m.
TEST(Friction3dScenes, SmallPileHeldByFrictionComesToRestAndStays) {
  const double r = 0.05, apex = r * (1 + 2 * std::sqrt(2.0 / 3.0));
  for (double mu : {0.5, 0.35, 0.30}) {
    Friction3dRun run("pile_friction.yaml", [&](Scene& s) {
      for (auto& p : s.spatial.contact_pairs) p.friction = mu;
    });
    ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished) << mu;
    const bool holds = mu > std::tan(0.5 * std::acos(std::sqrt(2.0 / 3.0)));
    EXPECT_NEAR(run.sim->q()[3 * 7 + 2], holds ? apex : r, 1e-9) << mu;
    if (!holds) continue;
    const int landing = OnlyEvent(run.rec, EventKind::kImpact);
    EXPECT_EQ(landing + 2, static_cast<int>(run.rec.events.size())) << mu;  // + its closing
    for (int b = 0; b < 4; ++b) {
      EXPECT_LE(run.Velocity(b).norm(), 1e-6) << mu;
      EXPECT_LE(run.sim->v().segment<3>(6 * b + 3).norm() * r, 1e-6) << mu;
    }
  }
}

// Largest turn φ of the tangential impulse of a faceted cone with N facets away from the slip
// it opposes, on a contact that slips throughout an impact and whose tangential Delassus block
// is w_TT I (a sphere on a plane: w_TT = 1/m + r²/J, no normal–tangential coupling). The impulse
// sits on the vertex D_k nearest to −ŝ while the post-impact slip s + w_TT μ P_N D_k stays in
// the sector of D_k (within π/N), and on an edge beyond, where it turns back towards −ŝ; so
// φ_max solves sin φ/(cos φ − ρ) = tan(π/N), ρ = w_TT μ P_N/‖s‖, and φ_max → π/N as ρ → 0
// (the 1 − cos(π/N) of contact/friction_cone.h).
double LargestFacetedTurn(int n, double rho) {
  double lo = 0, hi = std::numbers::pi / n;
  for (int k = 0; k < 100; ++k) {
    const double mid = 0.5 * (lo + hi);
    (std::atan2(std::sin(mid), std::cos(mid) - rho) <= std::numbers::pi / n ? lo : hi) = mid;
  }
  return lo;
}

// The oblique sphere (sphere_oblique_impact.yaml: v = 10 m/s along θ, 1 m/s down, μ = 0.2, no
// spin, so the slip is the horizontal velocity) over 64 directions θ of one sector 2π/N, which
// covers every angle to the polygon whatever the contact's tangent basis. The error of the slip
// direction, 1 − cos φ between the tangential impulse and −ŝ: exact cone ≤ 1e-12 (round-off);
// faceted, its largest sample lies between 1 − cos(φ_max − δ) (δ the sample spacing: the vertex
// regime's error grows with φ) and 1 − cos φ_max (+1e-9, Lemke's round-off), below 1 − cos(π/N).
TEST(Friction3dScenes, FacetedConeTurnsTheSlipDirectionByTheClosedForm) {
  const double mu = 0.2, w_tt = 1.0 + 0.01 / 0.004;
  constexpr int kSamples = 64;
  for (int n : {0, 4, 6, 8, 16}) {  // 0: the exact cone
    const double sector = n ? 2 * std::numbers::pi / n : 2 * std::numbers::pi;
    double largest = 0, rho = 0;
    for (int k = 0; k < kSamples; ++k) {
      const double theta = sector * k / kSamples;
      Friction3dRun run("sphere_oblique_impact.yaml", [&](Scene& s) {
        s.spatial.bodies[0].velocity << 10 * std::cos(theta), 10 * std::sin(theta), -1;
        if (n) {
          s.options.friction_cone = contact::FrictionCone::kFaceted;
          s.options.friction_facets = n;
        }
      });
      ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished) << n;
      const int i = OnlyEvent(run.rec, EventKind::kImpact);
      ASSERT_GE(i, 0);
      const Eigen::Vector2d slip = run.rec.v_before[i].head<2>();
      const Eigen::Vector2d dv = (run.rec.v_after[i] - run.rec.v_before[i]).head<2>();
      largest = std::max(largest, 1 - dv.normalized().dot(-slip.normalized()));
      rho = w_tt * mu * run.rec.events[i].impulses[0] / slip.norm();  // m = 1 kg
    }
    if (n == 0) {
      EXPECT_LE(largest, 1e-12);
      continue;
    }
    const double phi = LargestFacetedTurn(n, rho), delta = sector / kSamples;
    EXPECT_LE(largest, 1 - std::cos(phi) + 1e-9) << n;
    EXPECT_GE(largest, 1 - std::cos(phi - delta)) << n;
    EXPECT_LT(largest, 1 - std::cos(std::numbers::pi / n)) << n;
  }
}

}  // namespace
}  // namespace saltus::tools
