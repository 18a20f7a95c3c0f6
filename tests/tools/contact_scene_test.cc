// Spatial scenes with shapes and contact pairs (issue 4), at user level: every example in
// examples/spatial/ with `shapes:` loads, runs with DOPRI5, never gains energy at an event and
// never penetrates by more than τ0 after a projection; each one meets its own closed form or
// statics (ball on table: impact times; tumbling box and box stack: resting forces and moments;
// Newton's cradle: the simultaneous-impact LCP outcome; sphere in bowl: slides over its creases
// for the whole scene with DOPRI5 and generalized-α); bad `shapes:`/`contacts:` input is
// "<file>:<line>: <item>: <what>" and exit 2; the sphere-pile generator reproduces the checked-in
// scene; spatial scenes carry `reference:` for `saltus compare`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/rotation.h"
#include "events/simulation.h"
#include "friction_scene_run.h"
#include "tools/cli.h"
#include "tools/generators.h"
#include "tools/generators_contact.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;
using Eigen::MatrixXd;
using Eigen::Vector3d;
using Eigen::VectorXd;

const fs::path kSpatialExamples = fs::path(SALTUS_EXAMPLES_DIR) / "spatial";
constexpr double kG = 9.81;

// A scene of examples/spatial/ set up as `saltus run` does (BuildSceneSystem: assembled state).
struct SpatialRun : SceneRun {
  // `edit` may change the scene (e.g. its integrator) before the system is built.
  explicit SpatialRun(const std::string& file, const std::function<void(Scene&)>& edit = {})
      : SceneRun(kSpatialExamples, file, edit) {}

  // Largest T + V gain across an event (≤ 0 when every event dissipates).
  double WorstEnergyGain() const {
    double worst = -1e300;
    for (const events::Event& e : rec.events) {
      worst = std::max(worst, e.energy_after - e.energy_before);
    }
    return rec.events.empty() ? 0.0 : worst;
  }
  // G_Aᵀ λ of the closed rows at the current state: the generalized contact force.
  VectorXd ContactForce() const {
    MatrixXd G;
    sim->system().ConstraintJacobian(sim->t(), sim->q(), sim->active_rows(), &G);
    return G.transpose() * sim->Multipliers();
  }
};

// The invariants every contact example must keep (issue 4, §4): impacts never add energy (the
// projections after an event change T + V by round-off of states of ~1 J: 1e-9 J) and gaps
// after each projection are ≥ −τ0.
void ExpectPhysical(const SpatialRun& run, const std::string& label) {
  EXPECT_LE(run.WorstEnergyGain(), 1e-9) << label;
  EXPECT_GE(run.sim->stats().min_gap_after_projection, -run.scene.options.thresholds.tau0) << label;
}

TEST(ContactScenes, BallOnTableBouncesAtClosedFormTimesAndRestsWithWeight) {
  SpatialRun run("ball_on_table.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  ExpectPhysical(run, "ball_on_table");
  // Closed form of the header: t1 = √(2·0.5/g), flights 2 eᵏ v1/g.
  const double e = 0.8, t1 = std::sqrt(2 * 0.5 / kG);
  const std::vector<double> impacts = run.rec.TimesOf(events::EventKind::kImpact);
  ASSERT_GE(impacts.size(), 30u);  // eᵏ v1 reaches τ1 = 1e-6 after ~67 impacts
  double t = t1, v = kG * t1, worst = 0;
  for (std::size_t k = 0; k < 30; ++k) {
    worst = std::max(worst, std::abs(impacts[k] - t));
    v *= e;
    t += 2 * v / kG;
  }
  // Roots located to 1e-12·t, DOPRI5 exact on parabolas (as the planar bouncing ball): 1e-9 s.
  EXPECT_LT(worst, 1e-9);
  std::printf("ball_on_table: %zu impacts, first 30 within %.2e s of the closed form\n",
              impacts.size(), worst);
  // Rests on the table: one closed row carrying m g, centre 0.1 m above the top (0.72 m).
  ASSERT_EQ(run.sim->closed_rows().size(), 1u);
  EXPECT_NEAR(run.sim->Multipliers()[0], 1.0 * kG, 1e-9);  // index-1 solve, round-off
  EXPECT_NEAR(run.sim->q()[2], 0.82, 1e-9);                // τ0-level projection
}

TEST(ContactScenes, TumblingBoxComesToRestFlatWithWeightAndNoMoment) {
  SpatialRun run("tumbling_box.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  ExpectPhysical(run, "tumbling_box");
  EXPECT_GE(run.rec.TimesOf(events::EventKind::kImpact).size(), 3u);
  // Flat on its largest face: the 4 corners of one face closed, centre at h_z = 0.05 m.
  ASSERT_EQ(run.sim->closed_rows().size(), 4u);
  EXPECT_NEAR(run.sim->q()[2], 0.05, 1e-9);
  // Σ forces = m g upward, moment about the centre (= body origin) zero: G_Aᵀ λ = (0, 0, m g,
  // 0, 0, 0). Index-1 solve of a rank-3 Delassus matrix, forces ~ 2.5 N: 1e-8.
  const VectorXd f = run.ContactForce();
  EXPECT_NEAR(f[2], 1.0 * kG, 1e-8);
  EXPECT_LT(f.head<2>().norm(), 1e-8);
  EXPECT_LT(f.tail<3>().norm(), 1e-8) << "moment about the centre";
  for (Eigen::Index k = 0; k < 4; ++k) EXPECT_GE(run.sim->Multipliers()[k], -1e-10);
  // Resting generates no events.
  const std::size_t at_rest = run.rec.events.size();
  ASSERT_EQ(run.Advance(run.scene.t_end + 1.0).status, events::RunStatus::kFinished);
  EXPECT_EQ(run.rec.events.size(), at_rest);
  std::printf("tumbling_box: %zu impacts, %zu events, rests with %.12f N (m g %.12f)\n",
              run.rec.TimesOf(events::EventKind::kImpact).size(), at_rest, f[2], kG);
}

TEST(ContactScenes, BoxStackRestsWithTheWeightsAbove) {
  SpatialRun run("box_stack.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  ExpectPhysical(run, "box_stack");
  // Every box flat on the one below: 4 corners per interface, of which the contact LCP closes
  // at least 3 (the Delassus matrix of a face has rank 3: a fourth corner at gap 0 may stay
  // open with zero force).
  EXPECT_GE(run.sim->closed_rows().size(), 9u);
  EXPECT_LE(run.sim->closed_rows().size(), 12u);
  // Centre heights 0.1, 0.28, 0.42 m (τ0-level projection).
  EXPECT_NEAR(run.sim->q()[2], 0.1, 1e-9);
  EXPECT_NEAR(run.sim->q()[7 + 2], 0.28, 1e-9);
  EXPECT_NEAR(run.sim->q()[14 + 2], 0.42, 1e-9);
  // Each body in equilibrium: G_Aᵀ λ = (0, 0, m_i g, 0, 0, 0) per body (index-1 solve: 1e-8).
  const VectorXd f = run.ContactForce();
  const double masses[3] = {2.0, 1.5, 1.0};
  for (int b = 0; b < 3; ++b) {
    EXPECT_NEAR(f[6 * b + 2], masses[b] * kG, 1e-8) << "body " << b;
    EXPECT_LT(f.segment<2>(6 * b).norm(), 1e-8) << "body " << b;
    EXPECT_LT(f.segment<3>(6 * b + 3).norm(), 1e-8) << "moment on body " << b;
  }
  const std::size_t at_rest = run.rec.events.size();
  ASSERT_EQ(run.Advance(run.scene.t_end + 0.5).status, events::RunStatus::kFinished);
  EXPECT_EQ(run.rec.events.size(), at_rest);
  std::printf("box_stack: %zu impacts, %zu events, %zu closed rows at rest\n",
              run.rec.TimesOf(events::EventKind::kImpact).size(), at_rest,
              run.sim->closed_rows().size());
}

TEST(ContactScenes, NewtonsCradleImpactIsSimultaneous) {
  SpatialRun run("newtons_cradle.yaml");
  ASSERT_EQ(run.Advance(0.5).status, events::RunStatus::kFinished);
  ExpectPhysical(run, "newtons_cradle");
  ASSERT_FALSE(run.rec.events.empty());
  std::size_t first = 0;
  while (first < run.rec.events.size() &&
         run.rec.events[first].kind != events::EventKind::kImpact) {
    ++first;
  }
  ASSERT_LT(first, run.rec.events.size()) << "no impact";
  const VectorXd& vm = run.rec.v_before[first];
  const VectorXd& vp = run.rec.v_after[first];
  // Before: ball 1 at V along x, the others at rest.
  const double V = vm[0];
  const double V_closed = std::sqrt(2 * kG * 0.4 * (1 - std::cos(0.5)));  // energy, header
  EXPECT_NEAR(V, V_closed, 1e-6 * V_closed);  // dopri5 rtol 1e-9 on a 0.6 s swing
  for (int b = 1; b < 5; ++b) EXPECT_LT(std::abs(vm[6 * b]), 1e-9);
  // Simultaneous Newton impact, e = 1, equal masses (header): v1 = −3V/5, v2..5 = 2V/5.
  // LCP solution to round-off of the impulses (~V m): 1e-9 relative.
  EXPECT_NEAR(vp[0], -0.6 * V, 1e-9 * V);
  for (int b = 1; b < 5; ++b) EXPECT_NEAR(vp[6 * b], 0.4 * V, 1e-9 * V) << "ball " << b + 1;
  // The sequential model would give v5 = V, v1..4 = 0: not what the LCP does.
  std::printf("newtons_cradle: V = %.9f, after: %.9f %.9f %.9f %.9f %.9f\n", V, vp[0], vp[6],
              vp[12], vp[18], vp[24]);
}

// Watches the sphere in the bowl at every accepted step: the largest distance of its centre from
// the bowl's centre O = (0, 0, 0.5), the smallest one while a face is closed, and its height.
class BowlWatcher : public events::Observer {
 public:
  explicit BowlWatcher(const events::Simulation* sim) : sim_(sim) {}
  void OnStep(double, const VectorXd& q, const VectorXd&) override {
    const double d = (q.head<3>() - Vector3d(0, 0, 0.5)).norm();
    max_distance = std::max(max_distance, d);
    if (!sim_->closed_rows().empty())
      min_distance_in_contact = std::min(min_distance_in_contact, d);
    max_height = std::max(max_height, q[2]);
  }
  double max_distance = 0, min_distance_in_contact = 1e300, max_height = -1e300;

 private:
  const events::Simulation* sim_;
};

// The sphere slides around the faceted bowl for the scene's whole t_end (docs/contact-geometry.md,
// "Crease crossings"): with DOPRI5 at the scene's rtol 1e-8 and with generalized-α (GGL) at
// rtol 1e-4, it crosses many concave creases (each an impact of the face ahead with a take-off of
// the face behind), energy never rises at an event, no gap is below −τ0 after a projection and
// the sphere stays inside the bowl.
void CheckSphereInBowl(const std::string& integrator, integrators::Formulation formulation,
                       double rtol) {
  SpatialRun run("sphere_in_bowl.yaml", [&](Scene& s) {
    s.options.integrator = integrator;
    s.options.integrator_options.formulation = formulation;
    s.options.integrator_options.rtol = rtol;
    s.options.integrator_options.atol = rtol;
  });
  const std::string label = "sphere_in_bowl " + integrator;
  // One shape per planar face: the 216 quads of the latitude-longitude grid are planar, so the
  // 456 triangles make 24 + 216 = 240 faces (+ the ball).
  ASSERT_EQ(run.scene.spatial.shapes.size(), 241u) << label;
  BowlWatcher watch(run.sim.get());
  run.sim->AddObserver(&watch);
  const events::RunResult result = run.Advance(run.scene.t_end);
  ASSERT_EQ(result.status, events::RunStatus::kFinished) << label << ": " << result.message;
  ExpectPhysical(run, label);
  // Faces the sphere has slid on (closed at some time): it travels around the bowl.
  std::set<int> faces;
  for (const events::Event& e : run.rec.events) {
    if (e.kind == events::EventKind::kContactClosed) faces.insert(e.rows.begin(), e.rows.end());
  }
  EXPECT_GE(faces.size(), 20u) << label;
  // Energy between events: frictionless sliding keeps T + V to the integrator's accuracy
  // (measured: DOPRI5 at rtol 1e-8 5.4e-13 J; generalized-α, second order and dissipative, at
  // rtol 1e-4 1.1e-3 J of 0.6 J): bounds 1e-9 J and 5e-3 J.
  const double drift_bound = rtol < 1e-6 ? 1e-9 : 5e-3;
  double worst_drift = 0;
  // (Events at the same instant all carry the energy before that switch: compare the last
  // event of one instant with the first of the next.)
  const std::vector<events::Event>& ev = run.rec.events;
  for (std::size_t k = 1; k < ev.size(); ++k) {
    if (ev[k].t == ev[k - 1].t) continue;
    worst_drift = std::max(worst_drift, std::abs(ev[k].energy_before - ev[k - 1].energy_after));
  }
  EXPECT_LE(worst_drift, drift_bound) << label;
  // Inside the bowl. The faces' vertices are on the sphere of radius R = 0.5 about O, so the
  // centre of a ball of radius r = 0.05 touching a face is within R − r of O; while a face is
  // closed it is at least (the smallest distance of a face plane from O) − r from O. Gaps are
  // exact to round-off and projected to ±τ0 = 1e-9: 1e-8 of slack. It never rises above the
  // rim (z = 0.3188 m, bowl.obj).
  double min_plane_distance = 1e300;
  for (const contact::Shape& shape : run.scene.spatial.shapes) {
    if (shape.type() != contact::ShapeType::kTriangleMesh) continue;
    const contact::TriangleMesh& m = shape.mesh();
    const Vector3d& a = m.vertices[0];
    const Vector3d n = (m.vertices[1] - a).cross(m.vertices[2] - a).normalized();
    min_plane_distance = std::min(min_plane_distance, std::abs(n.dot(Vector3d(0, 0, 0.5) - a)));
  }
  EXPECT_LE(watch.max_distance, 0.45 + 1e-8) << label;
  EXPECT_GE(watch.min_distance_in_contact, min_plane_distance - 0.05 - 1e-8) << label;
  EXPECT_LT(watch.max_height, 0.3188) << label;
  std::printf(
      "%s rtol %g: %zu impacts, %zu events, %zu faces slid on, energy %.6f -> %.6f J, "
      "worst drift between events %.2e J, centre within [%.6f, %.6f] m of O\n",
      label.c_str(), rtol, run.rec.TimesOf(events::EventKind::kImpact).size(),
      run.rec.events.size(), faces.size(), run.rec.events.front().energy_before,
      run.rec.events.back().energy_after, worst_drift, watch.min_distance_in_contact,
      watch.max_distance);
}

TEST(ContactScenes, SphereInBowlSlidesOverTheCreasesWithDopri5) {
  CheckSphereInBowl("dopri5", integrators::Formulation::kIndex1, 1e-8);
}

TEST(ContactScenes, SphereInBowlSlidesOverTheCreasesWithGeneralizedAlpha) {
  CheckSphereInBowl("generalized_alpha", integrators::Formulation::kStabilizedIndex2, 1e-4);
}

TEST(ContactScenes, SpherePileOfTwentyFallsIntoTheBox) {
  SpatialRun run("sphere_pile_20.yaml");
  // 1 s of the 2 s scene (the test's time budget): every sphere has landed (the highest starts
  // 0.17 m above the floor) and the pile is still settling.
  ASSERT_EQ(run.Advance(1.0).status, events::RunStatus::kFinished);
  ExpectPhysical(run, "sphere_pile_20");
  // Rows: all pairs, 20·19/2 sphere pairs + 5 planes × 20.
  EXPECT_EQ(run.built.system->num_constraints(), 190 + 100);
  // Every sphere inside the box (walls ±0.3125 m, radius 0.05 m; τ0 margin) and above the floor.
  for (int i = 0; i < 20; ++i) {
    const Vector3d c = run.sim->q().segment<3>(7 * i);
    EXPECT_LE(std::abs(c.x()), 0.2625 + 1e-8);
    EXPECT_LE(std::abs(c.y()), 0.2625 + 1e-8);
    EXPECT_GE(c.z(), 0.05 - 1e-8);
  }
  std::printf("sphere_pile_20: %zu impacts, %zu events, %ld steps, %.2f s wall\n",
              run.rec.TimesOf(events::EventKind::kImpact).size(), run.rec.events.size(),
              run.sim->stats().integrator.accepted_steps, run.sim->stats().wall_seconds);
}

TEST(ContactScenes, GeneratorReproducesTheCheckedInPile) {
  std::ifstream in(kSpatialExamples / "sphere_pile_20.yaml");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(SpherePileYaml(20), text.str());
  EXPECT_EQ(GenerateScene("sphere_pile", 20), text.str());
  EXPECT_THROW(SpherePileYaml(0), std::invalid_argument);
  const Scene s = ParseScene(SpherePileYaml(7), "pile7.yaml");
  EXPECT_EQ(s.spatial.contact_pairs.size(), 7u * 6u / 2u + 5u * 7u);
}

// ---- Pair selection ------------------------------------------------------------------------

std::string PairScene(const std::string& shapes, const std::string& contacts) {
  return "scene: s\ndimension: 3\nbodies:\n"
         "  - {name: a, mass: 1, inertia: 0.01, position: [0, 0, 1]}\n"
         "  - {name: b, mass: 1, inertia: 0.01, position: [1, 0, 1]}\n"
         "shapes:\n" +
         shapes + contacts + "simulation:\n  t_end: 1\n";
}

const std::string kThreeShapes =
    "  - {name: floor, body: ground, type: plane}\n"
    "  - {name: wall, body: ground, type: plane, normal: [1, 0, 0], offset: -2}\n"
    "  - {name: sa, body: a, type: sphere, radius: 0.1}\n"
    "  - {name: sa2, body: a, type: box, half_size: [0.1, 0.1, 0.1], position: [0, 0, 0.2]}\n"
    "  - {name: sb, body: b, type: capsule, radius: 0.1, length: 0.3, group: 2, mask: 1}\n";

std::vector<std::string> PairNames(const Scene& s) {
  std::vector<std::string> names;
  for (const contact::SpatialContactPair& p : s.spatial.contact_pairs) names.push_back(p.name);
  return names;
}

TEST(ContactScenePairs, AllPairsByDefaultExceptSameBodyAndGround) {
  const Scene s = ParseScene(PairScene(kThreeShapes, ""), "p.yaml");
  // floor–wall (both ground) and sa–sa2 (same body) are left out.
  EXPECT_EQ(PairNames(s), (std::vector<std::string>{"floor-sa", "floor-sa2", "floor-sb", "wall-sa",
                                                    "wall-sa2", "wall-sb", "sa-sb", "sa2-sb"}));
  EXPECT_EQ(s.spatial.contact_pairs[0].body_a, engine::kGround);
  EXPECT_EQ(s.spatial.contact_pairs[0].body_b, 0);
}

TEST(ContactScenePairs, GroupsMasksExcludeAndListedPairs) {
  // sa in group 4 only: sb (mask 1) does not accept it; the floor (mask all) does.
  std::string shapes = kThreeShapes;
  shapes.replace(shapes.find("radius: 0.1}"), 12, "radius: 0.1, group: 4}");
  Scene s = ParseScene(PairScene(shapes, "contacts:\n  exclude: [[wall, sa2]]\n"), "p.yaml");
  EXPECT_EQ(PairNames(s), (std::vector<std::string>{"floor-sa", "floor-sa2", "floor-sb", "wall-sa",
                                                    "wall-sb", "sa2-sb"}));
  // A listed pair overrides the groups and carries its restitution; default none keeps only it.
  s = ParseScene(PairScene(shapes,
                           "contacts:\n  default: none\n  pairs:\n"
                           "    - {shapes: [sb, sa], restitution: 0.25}\n"),
                 "p.yaml");
  ASSERT_EQ(PairNames(s), (std::vector<std::string>{"sa-sb"}));
  EXPECT_DOUBLE_EQ(s.spatial.contact_pairs[0].restitution, 0.25);
  // Built: rows after the joints, named after the pair, with the restitution.
  const std::shared_ptr<engine::SpatialMultibodySystem> sys = BuildSpatialSystem(s);
  ASSERT_EQ(sys->num_constraints(), 1);  // sphere–capsule: one closest-point row
  EXPECT_EQ(sys->constraint_info(0).name, "sa-sb");
  EXPECT_DOUBLE_EQ(sys->constraint_info(0).restitution, 0.25);
}

// SelectContactPairs skips a run of shapes on one body in one step (a per-triangle terrain is
// ~100k ground shapes): the pairs, their order, names and restitutions are those of the plain
// loop over all shape pairs, here written out as the reference, for runs split by other bodies,
// non-convex shapes on both sides, filters, exclusions and listed pairs (also one on a run).
TEST(ContactScenePairs, RunSkippingGivesThePairsOfTheLoopOverAllPairs) {
  contact::TriangleMesh tri;
  tri.vertices = {Vector3d(0, 0, 0), Vector3d(1, 0, 0), Vector3d(0, 1, 0)};
  tri.triangles = {{0, 1, 2}};
  // Shape bodies (-1: ground) and items; 'm' a non-convex triangle surface, 's' a sphere.
  struct Item {
    int body, item;
    char kind;
  };
  const std::vector<Item> layout = {{-1, 0, 'm'}, {-1, 0, 'm'}, {-1, 0, 'm'}, {0, 1, 's'},
                                    {0, 1, 'm'},  {0, 2, 's'},  {-1, 3, 'm'}, {-1, 3, 'm'},
                                    {1, 4, 'm'},  {1, 4, 'm'},  {2, 5, 's'},  {-1, 6, 's'},
                                    {2, 7, 'm'},  {2, 7, 'm'},  {2, 7, 'm'},  {0, 8, 's'}};
  SpatialScene sp;
  std::vector<int> items;
  for (std::size_t k = 0; k < layout.size(); ++k) {
    const std::string name = "x" + std::to_string(k);
    sp.shapes.push_back(
        layout[k].kind == 's'
            ? contact::Shape::Sphere(0.1, Eigen::Isometry3d::Identity(), name)
            : contact::Shape::TriangleMeshSurface(tri, Eigen::Isometry3d::Identity(), name));
    sp.shape_bodies.push_back(layout[k].body < 0 ? engine::kGround : layout[k].body);
    sp.shape_lines.push_back(static_cast<int>(k) + 10);
    contact::CollisionFilter filter;
    if (k == 5) filter.mask = 0;  // x5 touches nothing unless listed
    sp.shape_filters.push_back(filter);
    items.push_back(layout[k].item);
  }
  ContactPairChoice choice;
  choice.excluded = {{0, 5}, {3, 8}};
  // Items 1 and 2 are both on body 0: the callers reject such a listed pair, but
  // SelectContactPairs itself keeps whatever is listed, also inside a run.
  choice.listed = {{{1, 2}, 0.25, 3}, {{2, 6}, 0.5, 4}, {{4, 7}, 0.75, 5}};
  SpatialScene fast = sp;
  SelectContactPairs(choice, items, &fast);

  // The reference: every pair (i < j), listed first, then default/excluded/obstacle/filters.
  std::vector<std::string> expected;
  std::vector<double> expected_restitution;
  std::vector<int> expected_lines;
  const int n = static_cast<int>(sp.shapes.size());
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const std::size_t a = static_cast<std::size_t>(i), b = static_cast<std::size_t>(j);
      const std::pair<int, int> item{std::min(items[a], items[b]), std::max(items[a], items[b])};
      double restitution = -1.0;
      int line = sp.shape_lines[b];
      bool take = false;
      for (const ContactPairChoice::Listed& l : choice.listed) {
        if (l.items == item) {
          take = true;
          restitution = l.restitution;
          line = l.line;
        }
      }
      if (!take) {
        take = choice.all_pairs &&
               std::find(choice.excluded.begin(), choice.excluded.end(), item) ==
                   choice.excluded.end() &&
               ContactPairObstacle(sp, i, j).empty() &&
               (sp.shape_filters[a].group & sp.shape_filters[b].mask) != 0 &&
               (sp.shape_filters[b].group & sp.shape_filters[a].mask) != 0;
      }
      if (!take) continue;
      const bool swap = sp.shape_bodies[b] == engine::kGround;
      expected.push_back(sp.shapes[swap ? b : a].name() + "-" + sp.shapes[swap ? a : b].name());
      expected_restitution.push_back(restitution);
      expected_lines.push_back(line);
    }
  }
  ASSERT_GT(expected.size(), 10u);  // the layout does exercise the selection
  std::vector<std::string> names;
  for (const contact::SpatialContactPair& p : fast.contact_pairs) names.push_back(p.name);
  EXPECT_EQ(names, expected);
  EXPECT_EQ(fast.contact_pair_lines, expected_lines);
  ASSERT_EQ(fast.contact_pairs.size(), expected_restitution.size());
  for (std::size_t k = 0; k < expected_restitution.size(); ++k) {
    // Copied values, not computed: exact.
    EXPECT_DOUBLE_EQ(fast.contact_pairs[k].restitution, expected_restitution[k]) << expected[k];
  }
}

// ---- Bad input -----------------------------------------------------------------------------

class ContactSceneErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("saltus_contact_scene_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Writes the scene into the scratch folder and expects LoadSceneFile to fail at `line` with
  // every fragment in the message.
  void ExpectError(const std::string& text, int line, const std::vector<std::string>& fragments) {
    const fs::path path = dir_ / "bad.yaml";
    std::ofstream(path) << text;
    try {
      const Scene s = LoadSceneFile(path.string());
      (void)BuildSceneSystem(s);
      ADD_FAILURE() << "no error for:\n" << text;
    } catch (const SceneError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      // The location is given once ("<file>:<line>: <item>: <what>"), not repeated by a layer
      // that re-wraps an error of the loader.
      const std::string what = e.what();
      EXPECT_EQ(what.find("bad.yaml:"), what.rfind("bad.yaml:")) << what;
      for (const std::string& f : fragments) {
        EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
            << "'" << f << "' not in: " << e.what();
      }
    }
  }
  fs::path dir_;
};

// Lines: 1 scene, 2 dimension, 3 bodies, 4 a, 5 b, 6 shapes, 7.. the shapes.
TEST_F(ContactSceneErrors, ShapesAndPairs) {
  ExpectError(PairScene("  - {name: s, body: c, type: sphere, radius: 0.1}\n", ""), 7,
              {"shape 's'", "body 'c' is not a body"});
  ExpectError(PairScene("  - {name: s, body: a, type: sphere, radius: 0}\n", ""), 7,
              {"shape 's'", "radius must be > 0"});
  ExpectError(PairScene("  - {name: s, body: a, type: box, half_size: [0.1, 0, 0.1]}\n", ""), 7,
              {"shape 's'", "half_size"});
  ExpectError(PairScene("  - {name: s, body: a, type: cylinder, radius: 0.1, length: 0}\n", ""), 7,
              {"shape 's'", "length must be > 0"});
  ExpectError(PairScene("  - {name: s, body: a, type: capsule, radius: 0, length: 0.1}\n", ""), 7,
              {"shape 's'", "radius must be > 0"});
  ExpectError(PairScene("  - {name: s, body: a, type: ellipsoid, radii: [0.1, 0.1, 0]}\n", ""), 7,
              {"shape 's'", "radii"});
  ExpectError(PairScene("  - {name: s, body: ground, type: plane, normal: [0, 0, 0]}\n", ""), 7,
              {"shape 's'", "normal must be a non-zero vector"});
  ExpectError(PairScene("  - {name: s, body: a, type: sphere, radius: 0.1, length: 2}\n", ""), 7,
              {"shape 's'", "does not apply to a sphere shape"});
  ExpectError(PairScene("  - {name: s, body: a, type: cone, radius: 0.1}\n", ""), 7,
              {"type 'cone' is unknown"});
  ExpectError(PairScene(kThreeShapes, "contacts:\n  pairs:\n    - {shapes: [sa, sc]}\n"), 14,
              {"'sc' is not a shape"});
  ExpectError(PairScene(kThreeShapes, "contacts:\n  pairs:\n    - {shapes: [sa, sa2]}\n"), 14,
              {"same body"});
  ExpectError(PairScene(kThreeShapes,
                        "contacts:\n  exclude: [[floor, sb]]\n  pairs:\n"
                        "    - {shapes: [sb, floor]}\n"),
              15, {"also excluded"});
  ExpectError(
      PairScene(kThreeShapes, "contacts:\n  pairs:\n    - {shapes: [sa, sb], restitution: 1.5}\n"),
      14, {"restitution must be in [0, 1]"});
}

TEST_F(ContactSceneErrors, MeshFiles) {
  ExpectError(PairScene("  - {name: m, body: a, type: convex_mesh, file: nowhere.obj}\n", ""), 7,
              {"shape 'm'", "nowhere.obj"});
  // A path that names a folder is not read as an empty mesh.
  fs::create_directories(dir_ / "folder.obj");
  ExpectError(PairScene("  - {name: m, body: ground, type: triangle_mesh, file: folder.obj}\n", ""),
              7, {"shape 'm'", "folder.obj' is a directory"});
  // A closed but non-convex polyhedron: a tetrahedron with a dent (the apex of a fourth vertex
  // pushed inside): an octahedron-like surface with one vertex inside the hull.
  std::ofstream(dir_ / "dented.obj") << "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0.1 0.1 0.1\nv 0 0 1\n"
                                        "f 1 3 2\nf 1 2 4\nf 2 5 4\nf 1 4 5\nf 2 3 5\nf 1 5 3\n";
  ExpectError(PairScene("  - {name: m, body: a, type: convex_mesh, file: dented.obj}\n", ""), 7,
              {"shape 'm'", "dented.obj", "convex"});
  // The same file is a valid triangle mesh.
  std::ofstream(dir_ / "ok.yaml") << PairScene(
      "  - {name: m, body: ground, type: triangle_mesh, file: dented.obj}\n"
      "  - {name: s, body: a, type: sphere, radius: 0.1}\n",
      "");
  EXPECT_EQ(LoadSceneFile((dir_ / "ok.yaml").string()).spatial.contact_pairs.size(), 1u);
  // Through the command line: exit 2, the message on stderr.
  std::ofstream(dir_ / "bad2.yaml")
      << PairScene("  - {name: m, body: a, type: convex_mesh, file: missing.stl}\n", "");
  const std::vector<std::string> args = {"run", (dir_ / "bad2.yaml").string(), "--out",
                                         (dir_ / "out").string()};
  std::ostringstream o, e;
  EXPECT_EQ(RunCli(args, o, e), kExitBadInput);
  EXPECT_NE(e.str().find("bad2.yaml:7: shape 'm'"), std::string::npos) << e.str();
}

// Spatial scenes accept `reference:` as planar ones do (tools/reference.h): a closed form and a
// CSV file, used by `saltus compare` to give the runs an error; bad combinations are refused at
// the section's line.
TEST_F(ContactSceneErrors, SpatialSceneReference) {
  // A sphere thrown above a floor plane it never reaches within 1 s (z ≥ 10 − 4.9 m): a contact
  // scene whose motion is the free parabola c(t) = c0 + ċ0 t + g t²/2.
  const std::string body =
      "scene: NAME\ndimension: 3\ngravity: [0, 0, -9.81]\n"
      "bodies:\n  - {name: ball, mass: 1, inertia: 0.004, position: [0, 0, 10], "
      "velocity: [1, 0, 2]}\n"
      "shapes:\n  - {name: floor, body: ground, type: plane, normal: [0, 0, 1]}\n"
      "  - {name: ball_shape, body: ball, type: sphere, radius: 0.1}\n"
      "simulation: {t_end: 1}\n";
  const auto scene_text = [&](const std::string& name, const std::string& reference) {
    std::string text = body;
    text.replace(text.find("NAME"), 4, name);
    return text + reference;
  };
  // The file reference: the closed form written at t = 0, 0.1, …, 1.
  {
    std::ofstream csv(dir_ / "parabola.csv");
    csv << "t,ball.x,ball.z\n";
    for (int k = 0; k <= 10; ++k) {
      const double t = 0.1 * k;
      char row[128];
      std::snprintf(row, sizeof row, "%.17g,%.17g,%.17g\n", t, t, 10 + 2 * t - 0.5 * kG * t * t);
      csv << row;
    }
  }
  std::ofstream(dir_ / "from_file.yaml")
      << scene_text("from_file", "reference: {file: parabola.csv}\n");
  // free_body needs a scene without contacts: the same ball without shapes.
  std::string no_shapes =
      scene_text("closed_form", "reference: {analytic: free_body, step: 0.1}\n");
  no_shapes.erase(no_shapes.find("shapes:"),
                  no_shapes.find("simulation:") - no_shapes.find("shapes:"));
  std::ofstream(dir_ / "closed_form.yaml") << no_shapes;

  const Scene loaded = LoadSceneFile((dir_ / "from_file.yaml").string());
  EXPECT_EQ(loaded.reference.file, (dir_ / "parabola.csv").string());  // resolved to the folder
  EXPECT_EQ(loaded.reference.line, 10);
  EXPECT_EQ(LoadSceneFile((dir_ / "closed_form.yaml").string()).reference.analytic, "free_body");

  const std::vector<std::string> args = {"compare",
                                         "--scenes",
                                         (dir_ / "from_file.yaml").string(),
                                         (dir_ / "closed_form.yaml").string(),
                                         "--integrators",
                                         "dopri5",
                                         "--rtol",
                                         "1e-9",
                                         "--out",
                                         (dir_ / "cmp").string(),
                                         "--no-plots"};
  std::ostringstream o, e;
  ASSERT_EQ(RunCli(args, o, e), kExitOk) << e.str();
  std::ifstream results(dir_ / "cmp" / "results.csv");
  std::string header, line;
  std::getline(results, header);
  std::vector<std::string> columns;
  {
    std::stringstream hs(header);
    for (std::string h; std::getline(hs, h, ',');) columns.push_back(h);
  }
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) -
                                    columns.begin());
  };
  int rows = 0;
  while (std::getline(results, line)) {
    std::vector<std::string> fields;
    std::stringstream ls(line);
    for (std::string f; std::getline(ls, f, ',');) fields.push_back(f);
    ASSERT_GT(fields.size(), column("error")) << line;
    EXPECT_EQ(fields[column("status")], "ok") << line;
    // DOPRI5 integrates the parabola exactly: round-off over ~10 steps of positions ~10 m.
    EXPECT_LT(std::stod(fields[column("error")]), 1e-12) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 2);

  // One source only, at the line of `reference:` (line 10 here).
  ExpectError(scene_text("both", "reference: {file: parabola.csv, analytic: free_body}\n"), 10,
              {"give one of file, analytic or integrator"});
  ExpectError(scene_text("unknown", "reference: {analytic: free_body, tolerance: 1}\n"), 10,
              {"unknown key 'tolerance'"});
}

}  // namespace
}  // namespace saltus::tools
