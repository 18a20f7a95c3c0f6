// Shapes resting on a static triangle-mesh terrain and on a ground box, end to end through
// events::Simulation with DOPRI5 (issue 4, Section 1): the vertex rows of a box or convex mesh
// and the end-ball rows of a capsule against the mesh (contact_manifold.h, kMeshVertex,
// kMeshEndBall) and the end-ball rows of a capsule against a box (kBoxEndBall). Each body
// lands, settles on its redundant rows (4 corners, 2 end balls), carries its weight and then
// generates no further events.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "contact/spatial_contacts.h"
#include "contact_test_shapes.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"

namespace saltus::contact {
namespace {

using Eigen::AngleAxisd;
using Eigen::Isometry3d;
using Eigen::Matrix3d;
using Eigen::Quaterniond;
using Eigen::Vector3d;
using Eigen::VectorXd;
using testing::Cube;

constexpr double kG = 9.81;

// A flat floor z = 0 over [−1, 1]², n × n squares each split into two triangles (normals +z):
// the resting corners lie over different triangles.
TriangleMesh GridFloor(int n) {
  TriangleMesh m;
  for (int j = 0; j <= n; ++j) {
    for (int i = 0; i <= n; ++i) m.vertices.emplace_back(-1.0 + 2.0 * i / n, -1.0 + 2.0 * j / n, 0);
  }
  const auto id = [n](int i, int j) { return j * (n + 1) + i; };
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      m.triangles.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
      m.triangles.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
    }
  }
  return m;
}

class Recorder : public events::Observer {
 public:
  void OnEvent(const events::Event& e, const VectorXd&, const VectorXd&, const VectorXd&) override {
    events.push_back(e);
  }
  std::vector<events::Event> events;
};

struct Outcome {
  std::size_t closed = 0;
  double force_sum = 0.0, moment = 0.0, worst_gap = 0.0, worst_rate = 0.0, speed = 0.0;
  std::size_t events_to_rest = 0, events_while_resting = 0;
};

// One body (mass m, box-like inertia of half sizes h) with `shape`, released at `position`,
// `rotation` against the ground shape `ground`; run to t_rest, then 1 s more at rest.
Outcome DropAndRest(const Shape& ground, const Shape& shape, double m, const Vector3d& h,
                    const Vector3d& position, const Matrix3d& rotation, double t_rest) {
  engine::SpatialBody body;
  body.name = "body";
  body.mass = m;
  const Vector3d h2 = h.cwiseProduct(h);
  body.inertia =
      (m / 3.0 * Vector3d(h2.y() + h2.z(), h2.x() + h2.z(), h2.x() + h2.y())).asDiagonal();
  body.position = position;
  const Quaterniond Q(rotation);
  body.quaternion = Eigen::Vector4d(Q.w(), Q.x(), Q.y(), Q.z());
  engine::SpatialModelBuilder builder;
  builder.AddBody(body);
  builder.SetGravity(Vector3d(0, 0, -kG));
  const auto model = builder.Build();
  auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
  auto contacts = std::make_shared<SpatialContacts>(
      model, std::vector<SpatialContactPair>{{"floor", engine::kGround, ground, 0, shape, 0.3}});
  system->AddConstraintBlock(contacts);
  events::SimulationOptions o;
  o.integrator = "dopri5";
  o.integrator_options.rtol = 1e-10;
  o.integrator_options.atol = 1e-12;
  events::Simulation sim(system, o);
  Recorder rec;
  sim.AddObserver(&rec);
  sim.SetState(0, model->InitialPositions(), model->InitialVelocities());
  Outcome out;
  const events::RunResult res = sim.AdvanceTo(t_rest);
  EXPECT_EQ(res.status, events::RunStatus::kFinished) << res.message;
  if (res.status != events::RunStatus::kFinished) return out;
  out.events_to_rest = rec.events.size();
  for (const events::Event& ev : rec.events) EXPECT_LE(ev.energy_after, ev.energy_before + 1e-9);
  const std::vector<int> closed = sim.closed_rows();
  out.closed = closed.size();
  const VectorXd lambda = sim.Multipliers();
  Vector3d force = Vector3d::Zero(), moment = Vector3d::Zero();
  for (std::size_t k = 0; k < closed.size(); ++k) {
    const PairDistance d = contacts->Evaluate(sim.q(), closed[k]);
    const Vector3d f = lambda[static_cast<Eigen::Index>(k)] * d.normal;
    force += f;
    moment += (d.point_b - sim.q().head<3>()).cross(f);
    out.worst_gap = std::max(out.worst_gap, std::abs(d.gap));
    EXPECT_GE(lambda[static_cast<Eigen::Index>(k)], -1e-10);
  }
  out.force_sum = force.z();
  out.moment = moment.norm();
  out.speed = sim.v().norm();
  VectorXd g(static_cast<Eigen::Index>(closed.size())), g_dot(g.size());
  contacts->ValuesAndRates(sim.t(), sim.q(), sim.v(), closed, g, g_dot);
  out.worst_rate = g_dot.lpNorm<Eigen::Infinity>();
  const events::RunResult rest = sim.AdvanceTo(t_rest + 1.0);
  EXPECT_EQ(rest.status, events::RunStatus::kFinished) << rest.message;
  out.events_while_resting = rec.events.size() - out.events_to_rest;
  EXPECT_EQ(sim.closed_rows(), closed);
  return out;
}

void ExpectRestsWithWeight(const Outcome& o, std::size_t rows, double m, const std::string& what) {
  EXPECT_EQ(o.closed, rows) << what;
  // Index-1 multipliers to round-off on forces ~ 20 N (as the plane tests in
  // spatial_contacts_test.cc); gaps held by the projection's tolerance τ₀ = 1e-12 (×1000).
  EXPECT_NEAR(o.force_sum, m * kG, 1e-8) << what;
  EXPECT_LT(o.moment, 1e-8) << what;
  EXPECT_LT(o.worst_gap, 1e-9) << what;
  // At rest on the closed rows: ġ = G v at round-off (a capsule may keep spinning about its
  // axis, which no row sees: frictionless).
  EXPECT_LT(o.worst_rate, 1e-9) << what;
  EXPECT_EQ(o.events_while_resting, 0u) << what;
  std::printf(
      "%s: %zu events to rest, %zu rows closed, force sum %.12f (m g %.12f), |moment| "
      "%.1e, largest |gap| %.1e, largest |rate| %.1e, |v| %.1e, %zu events while resting\n",
      what.c_str(), o.events_to_rest, o.closed, o.force_sum, m * kG, o.moment, o.worst_gap,
      o.worst_rate, o.speed, o.events_while_resting);
}

Matrix3d Rot(double angle, const Vector3d& axis) {
  return AngleAxisd(angle, axis.normalized()).toRotationMatrix();
}

TEST(TerrainContact, BoxAndCubeMeshLandOnTriangleMeshFloorAndRestOnFourCorners) {
  const Shape floor = Shape::TriangleMeshSurface(GridFloor(4), Isometry3d::Identity(), "floor");
  const double m = 2.0;
  const Vector3d h(0.2, 0.15, 0.1);
  const Shape box = Shape::Box(h);
  ExpectRestsWithWeight(DropAndRest(floor, box, m, h, Vector3d(0.13, 0.07, h.z() + 0.2),
                                    Rot(0.4, Vector3d::UnitZ()), 2.0),
                        4, m, "box flat on mesh");
  ExpectRestsWithWeight(DropAndRest(floor, box, m, h, Vector3d(0.11, -0.06, 0.45),
                                    Rot(0.4, Vector3d::UnitZ()) * Rot(0.3, Vector3d(1, 1, 0)), 3.0),
                        4, m, "box tilted onto mesh");
  // Corners exactly over mesh edges and vertices (grid spacing 0.5): x = ±0.5 on a grid line,
  // y = ±0.25 between lines; and a square box with all corners on grid vertices.
  ExpectRestsWithWeight(
      DropAndRest(floor, Shape::Box(Vector3d(0.5, 0.25, 0.1)), m, Vector3d(0.5, 0.25, 0.1),
                  Vector3d(0.0, 0.0, 0.3), Matrix3d::Identity(), 2.0),
      4, m, "box with corners over mesh edges");
  ExpectRestsWithWeight(
      DropAndRest(floor, Shape::Box(Vector3d(0.5, 0.5, 0.1)), m, Vector3d(0.5, 0.5, 0.1),
                  Vector3d(0.0, 0.0, 0.3), Matrix3d::Identity(), 2.0),
      4, m, "box with corners over mesh vertices");
  const double s = 0.1;
  ExpectRestsWithWeight(
      DropAndRest(floor, Shape::ConvexMesh(Cube(s)), m, Vector3d::Constant(s),
                  Vector3d(-0.23, 0.31, 0.4), Rot(0.2, Vector3d(1, -2, 0.5)), 3.0),
      4, m, "cube mesh tilted onto mesh");
}

TEST(TerrainContact, CapsuleOnItsSideRestsOnTwoEndBallsOnMeshAndOnBox) {
  const double m = 1.0, r = 0.05, length = 0.3;
  const Vector3d h(0.5 * length + r, r, r);  // inertia of the bounding box (any positive one)
  const Shape capsule = Shape::Capsule(r, length);
  const Matrix3d lying = Rot(0.3, Vector3d::UnitZ()) * Rot(M_PI / 2, Vector3d::UnitX());
  const Shape floor = Shape::TriangleMeshSurface(GridFloor(4), Isometry3d::Identity(), "floor");
  ExpectRestsWithWeight(
      DropAndRest(floor, capsule, m, h, Vector3d(0.07, 0.12, r + 0.1), lying, 2.0), 2, m,
      "capsule on mesh");
  Isometry3d slab = Isometry3d::Identity();
  slab.translation() = Vector3d(0, 0, -0.1);  // top face at z = 0
  const Shape ground_box = Shape::Box(Vector3d(1.0, 1.0, 0.1), slab, "slab");
  ExpectRestsWithWeight(
      DropAndRest(ground_box, capsule, m, h, Vector3d(0.07, 0.12, r + 0.1), lying, 2.0), 2, m,
      "capsule on box");
  // Tilted: one end lands first, the other follows.
  ExpectRestsWithWeight(DropAndRest(floor, capsule, m, h, Vector3d(0.07, 0.12, r + 0.15),
                                    Rot(0.2, Vector3d::UnitY()) * lying, 3.0),
                        2, m, "capsule tilted onto mesh");
}

// The cylinder's end-circle rows (kSurfaceRim) and the ellipsoid's support-point row
// (kSurfaceSupport) against the mesh and the box (contact_manifold.h).
TEST(TerrainContact, CylinderOnItsSideRestsOnTwoRimPointsOnMeshAndOnBox) {
  const double m = 1.0, r = 0.05, length = 0.3;
  const Vector3d h(r, r, 0.5 * length);  // inertia of the bounding box (any positive one)
  const Shape cylinder = Shape::Cylinder(r, length);
  const Matrix3d lying = Rot(0.3, Vector3d::UnitZ()) * Rot(M_PI / 2, Vector3d::UnitX());
  const Shape floor = Shape::TriangleMeshSurface(GridFloor(4), Isometry3d::Identity(), "floor");
  Isometry3d slab = Isometry3d::Identity();
  slab.translation() = Vector3d(0, 0, -0.1);  // top face at z = 0
  const Shape ground_box = Shape::Box(Vector3d(1.0, 1.0, 0.1), slab, "slab");
  for (const Shape* ground : {&floor, &ground_box}) {
    const std::string on = ground == &floor ? " on mesh" : " on box";
    ExpectRestsWithWeight(
        DropAndRest(*ground, cylinder, m, h, Vector3d(0.07, 0.12, r + 0.1), lying, 2.0), 2, m,
        "cylinder" + on);
    // Tilted: one rim lands first, the other follows.
    ExpectRestsWithWeight(DropAndRest(*ground, cylinder, m, h, Vector3d(0.07, 0.12, r + 0.15),
                                      Rot(0.2, Vector3d::UnitY()) * lying, 3.0),
                          2, m, "cylinder tilted" + on);
    // Standing on an end face: n ∥ e, the lower circle's row alone, its witness at the centre.
    ExpectRestsWithWeight(
        DropAndRest(*ground, cylinder, m, h, Vector3d(0.07, 0.12, 0.5 * length + 0.1),
                    Rot(0.3, Vector3d::UnitZ()), 2.0),
        1, m, "cylinder standing" + on);
  }
  // The same end-circle rule on a plane (kPlaneRim): before, the row's witness was an arbitrary
  // rim point at n ∥ e, whose moment tipped the cylinder over onto its side (2 rows).
  ExpectRestsWithWeight(
      DropAndRest(Shape::Plane(Vector3d::UnitZ(), 0.0), cylinder, m, h,
                  Vector3d(0.07, 0.12, 0.5 * length + 0.1), Rot(0.3, Vector3d::UnitZ()), 2.0),
      1, m, "cylinder standing on plane");
}

TEST(TerrainContact, EllipsoidRestsOnItsSupportPointOnMeshAndOnBox) {
  const double m = 1.0;
  const Vector3d radii(0.1, 0.08, 0.06);
  const Shape egg = Shape::Ellipsoid(radii);
  const Shape floor = Shape::TriangleMeshSurface(GridFloor(4), Isometry3d::Identity(), "floor");
  Isometry3d slab = Isometry3d::Identity();
  slab.translation() = Vector3d(0, 0, -0.1);
  const Shape ground_box = Shape::Box(Vector3d(1.0, 1.0, 0.1), slab, "slab");
  for (const Shape* ground : {&floor, &ground_box}) {
    const std::string on = ground == &floor ? " on mesh" : " on box";
    // Shortest axis vertical (the stable rest), turned about z: one row, the support point.
    ExpectRestsWithWeight(DropAndRest(*ground, egg, m, radii, Vector3d(-0.2, 0.3, 0.2),
                                      Rot(0.7, Vector3d::UnitZ()), 2.0),
                          1, m, "ellipsoid" + on);
    // Dropped tilted: after the partly plastic bounces it rocks on its support row for ever
    // (frictionless, conservative while in contact), so it is not at rest; the row must stay
    // closed and the run must not accumulate events.
    const Outcome rocking = DropAndRest(*ground, egg, m, radii, Vector3d(0.1, -0.2, 0.25),
                                        Rot(0.25, Vector3d(1, 2, 0)), 2.0);
    std::printf("ellipsoid tilted%s: %zu events to t = 2 s, %zu while rocking 1 s more, |v| %.2e\n",
                on.c_str(), rocking.events_to_rest, rocking.events_while_resting, rocking.speed);
    EXPECT_EQ(rocking.closed, 1u);
    EXPECT_EQ(rocking.events_while_resting, 0u);
  }
}

// The normal-turn term of G in a simulation (contact_manifold.h, NormalTurn): an ellipsoid
// sliding (frictionless, in contact) over the edge x = +0.5 of a ground box tips over the edge
// with its centre in the edge region, where the normal turns with the centre. The closed row
// is held by G v = 0 (index 1) between events with no position projection, so its gap stays at
// round-off only if G is the gradient there: without the turn term the gap drifts by ~1e-4 m.
// Energy is conserved to the integrator's tolerance (no events until the row takes off).
// Run on the box and on a cube given as a closed triangle mesh (the edge region of
// MeshPointDistance).
void TipOverEdge(const Shape& ground, const std::string& what) {
  const double m = 1.0;
  const Vector3d radii(0.1, 0.08, 0.06);
  engine::SpatialBody body;
  body.name = "egg";
  body.mass = m;
  body.inertia = (m / 5.0 *
                  Vector3d(radii.y() * radii.y() + radii.z() * radii.z(),
                           radii.x() * radii.x() + radii.z() * radii.z(),
                           radii.x() * radii.x() + radii.y() * radii.y()))
                     .asDiagonal();
  body.position = Vector3d(0.4, 0.05, radii.z());  // resting on the top face z = 0
  body.velocity = Vector3d(0.5, 0.0, 0.0);
  engine::SpatialModelBuilder builder;
  builder.AddBody(body);
  builder.SetGravity(Vector3d(0, 0, -kG));
  const auto model = builder.Build();
  auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
  auto contacts = std::make_shared<SpatialContacts>(
      model, std::vector<SpatialContactPair>{
                 {"ground", engine::kGround, ground, 0, Shape::Ellipsoid(radii), 0.3}});
  system->AddConstraintBlock(contacts);
  events::SimulationOptions o;
  o.integrator = "dopri5";
  o.integrator_options.rtol = 1e-10;
  o.integrator_options.atol = 1e-12;
  events::Simulation sim(system, o);
  Recorder rec;
  sim.AddObserver(&rec);
  sim.SetState(0, model->InitialPositions(), model->InitialVelocities());
  const auto energy = [&] {
    return 0.5 * m * sim.v().head<3>().squaredNorm() +
           0.5 * sim.v().tail<3>().dot(body.inertia * sim.v().tail<3>()) + m * kG * sim.q()[2];
  };
  const double e0 = energy();
  double worst_gap = 0.0, worst_energy = 0.0;
  int edge_samples = 0;
  std::size_t initial_events = 0;
  for (int k = 1; k <= 400; ++k) {
    const events::RunResult res = sim.AdvanceTo(1e-3 * k);
    ASSERT_EQ(res.status, events::RunStatus::kFinished) << res.message;
    // The row closes at t = 0 (an event); any later event ends the contact phase.
    if (k == 1) initial_events = rec.events.size();
    if (rec.events.size() > initial_events || sim.closed_rows().empty()) break;
    const Vector3d c = sim.q().head<3>();
    if (c.x() > 0.5) ++edge_samples;  // the centre beside the edge: the normal turns
    worst_gap = std::max(worst_gap, std::abs(contacts->Evaluate(sim.q(), 0).gap));
    worst_energy = std::max(worst_energy, std::abs(energy() - e0));
  }
  std::printf(
      "ellipsoid over the edge of a %s: %d samples (1 ms) beside the edge in contact, largest "
      "|gap| "
      "%.1e, largest energy change %.1e J\n",
      what.c_str(), edge_samples, worst_gap, worst_energy);
  EXPECT_GE(edge_samples, 20) << what;
  // Index-1 drift of a correct G: integrator error, rtol 1e-10 × (|g̈| ~ 10) × t² ≲ 1e-10; a
  // G missing the turn term drifts by ~|w| |v| t ~ 1e-3 m·s⁻¹ × 0.1 s.
  EXPECT_LT(worst_gap, 1e-8) << what;
  // Frictionless contact does no work: energy to the integrator's tolerance (rtol 1e-10 on
  // energies ~ 0.7 J, accumulated over ~100 steps).
  EXPECT_LT(worst_energy, 1e-7) << what;
}

TEST(TerrainContact, EllipsoidTippingOverAnEdgeKeepsItsGapClosed) {
  Isometry3d slab = Isometry3d::Identity();
  slab.translation() = Vector3d(0, 0, -0.1);
  TipOverEdge(Shape::Box(Vector3d(0.5, 0.5, 0.1), slab, "slab"), "box");
  Isometry3d block = Isometry3d::Identity();
  block.translation() = Vector3d(0, 0, -0.5);
  TipOverEdge(Shape::TriangleMeshSurface(Cube(0.5), block, "block"), "cube mesh");
}

}  // namespace
}  // namespace saltus::contact
