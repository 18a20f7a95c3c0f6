// The per-event work of the event loop on a pile of spheres (issue 4): the candidate rows of
// contact::SpatialContacts (the reach test, now on an AabbGrid instead of FCL's dynamic tree)
// and g, ġ of the watched rows in one pass (ConstraintBlock::ValuesAndRates through
// engine::MechanicalSystem::ConstraintValuesAndRates).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "contact/broadphase.h"
#include "contact/spatial_contacts.h"
#include "engine/block_sparse.h"
#include "engine/constraint_block.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"

namespace saltus::contact {
namespace {

using Eigen::Vector3d;
using Eigen::Vector4d;
using Eigen::VectorXd;

constexpr double kRadius = 0.05;
constexpr double kWall = 0.3;  // walls at x, y = ±kWall

// Spheres on a 5 × 4 × 3 lattice of spacing 2.1 r with jitter (some overlap, many touch or
// nearly), a floor and four walls, every pair declared (as the pile generator does).
struct Pile {
  std::shared_ptr<const engine::SpatialModel> model;
  std::shared_ptr<engine::SpatialMultibodySystem> system;
  std::shared_ptr<const SpatialContacts> contacts;
  int num_spheres = 0;
  std::vector<Shape> planes;  // floor, x−, x+, y−, y+
  // Row of each sphere pair (i < j) and of each (plane k, sphere i).
  std::map<std::pair<int, int>, int> sphere_row;
  std::map<std::pair<int, int>, int> plane_row;
};

Pile MakePile() {
  Pile pile;
  engine::SpatialModelBuilder builder;
  const int nx = 5, ny = 4, nz = 3;
  for (int k = 0; k < nx * ny * nz; ++k) {
    engine::SpatialBody b;
    b.name = "s" + std::to_string(k);
    b.mass = 1.0;
    b.inertia = 0.4 * kRadius * kRadius * Eigen::Matrix3d::Identity();
    b.position = Vector3d(2.1 * kRadius * (k % nx - 2), 2.1 * kRadius * ((k / nx) % ny - 1.5),
                          kRadius + 2.1 * kRadius * (k / (nx * ny)));
    builder.AddBody(b);
  }
  builder.SetGravity(Vector3d(0, 0, -9.81));
  pile.model = builder.Build();
  pile.num_spheres = nx * ny * nz;
  pile.planes = {Shape::Plane(Vector3d::UnitZ(), 0.0), Shape::Plane(Vector3d::UnitX(), -kWall),
                 Shape::Plane(-Vector3d::UnitX(), -kWall), Shape::Plane(Vector3d::UnitY(), -kWall),
                 Shape::Plane(-Vector3d::UnitY(), -kWall)};
  const Shape sphere = Shape::Sphere(kRadius);
  std::vector<SpatialContactPair> pairs;
  for (int i = 0; i < pile.num_spheres; ++i) {
    for (int p = 0; p < 5; ++p) {
      pile.plane_row[{p, i}] = static_cast<int>(pairs.size());
      pairs.push_back({"w" + std::to_string(p) + "_" + std::to_string(i), engine::kGround,
                       pile.planes[static_cast<std::size_t>(p)], i, sphere, -1});
    }
    for (int j = i + 1; j < pile.num_spheres; ++j) {
      pile.sphere_row[{i, j}] = static_cast<int>(pairs.size());
      pairs.push_back(
          {"s" + std::to_string(i) + "_" + std::to_string(j), i, sphere, j, sphere, -1});
    }
  }
  pile.contacts = std::make_shared<const SpatialContacts>(pile.model, pairs);
  pile.system = std::make_shared<engine::SpatialMultibodySystem>(pile.model);
  pile.system->AddConstraintBlock(pile.contacts);
  return pile;
}

// Jitters the positions by up to `spread` and, if `rotate`, turns every body to a random
// orientation (a sphere's gaps do not change, its grown box does: FCL then bounds it by the cube
// around its bounding ball).
VectorXd Jitter(const Pile& pile, std::mt19937& rng, double spread, bool rotate) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VectorXd q = pile.model->InitialPositions();
  for (int i = 0; i < pile.num_spheres; ++i) {
    q.segment<3>(7 * i) += spread * Vector3d(u(rng), u(rng), u(rng));
    if (rotate) q.segment<4>(7 * i + 3) = Vector4d(u(rng), u(rng), u(rng), u(rng)).normalized();
  }
  return q;
}

// The same query through the FCL-based Broadphase with the proxies' inflations of
// SpatialContacts::CandidateRows (the code this replaces): rows, ascending.
std::vector<int> FclCandidateRows(const Pile& pile, const VectorXd& q, const VectorXd& s,
                                  double horizon, double margin) {
  Broadphase bp(0.0);
  const int n = pile.num_spheres;
  for (int i = 0; i < n; ++i) bp.Add(Shape::Sphere(kRadius), i);
  for (const Shape& plane : pile.planes) bp.Add(plane, kStaticBody);
  for (int i = 0; i < n; ++i) {
    Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
    X.linear() = engine::QuaternionToRotation(q.segment<4>(7 * i + 3));
    X.translation() = q.segment<3>(7 * i);
    // ρ = r for a sphere centred on its body.
    const double reach =
        horizon * (s.segment<3>(6 * i).norm() + kRadius * s.segment<3>(6 * i + 3).norm());
    bp.SetBodyPose(i, X, 0.5 * margin + reach);
  }
  for (int p = 0; p < 5; ++p) bp.SetBodyPose(n + p, Eigen::Isometry3d::Identity(), 0.5 * margin);
  std::vector<int> rows;
  for (const auto& [a, b] : bp.CandidatePairs()) {
    rows.push_back(b >= n ? pile.plane_row.at({b - n, a}) : pile.sphere_row.at({a, b}));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// Every row that some motion within the speed bounds can bring to g ≤ margin within the horizon
// is a candidate: for centred spheres the gap of a row with normal n falls at most at
// Σ_j |n_j| (s_a,j + s_b,j) (the linear speed bounds of the two centres; turning moves no centre),
// and that rate is reached by moving each centre at ±s along n. Also: the candidates are exactly
// those of the FCL broadphase the grid replaces (same grown boxes, same overlap test), with and
// without rotated bodies (FCL's two AABB forms), and few enough to matter.
TEST(PileCandidates, ContainRowsWithinReachAndEqualTheFclBroadphase) {
  const Pile pile = MakePile();
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> pos(0.0, 1.0);
  const int m = pile.contacts->num_rows(), nv = pile.system->nv();
  std::vector<int> all(static_cast<std::size_t>(m));
  for (int r = 0; r < m; ++r) all[static_cast<std::size_t>(r)] = r;
  long within_reach = 0, candidates = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const VectorXd q = Jitter(pile, rng, 0.3 * kRadius, trial % 2 == 1);
    VectorXd s(nv);
    for (int j = 0; j < nv; ++j) s[j] = (trial % 4 == 0 ? 0.1 : 2.0) * pos(rng);
    const double horizon = (trial % 8 == 0 ? 0.0 : 0.02) * pos(rng);
    const double margin = trial % 3 == 0 ? 1e-9 : 0.01 * pos(rng);
    std::vector<int> cand;
    pile.contacts->CandidateRows(q, s, horizon, margin, &cand);
    ASSERT_TRUE(std::is_sorted(cand.begin(), cand.end()));
    ASSERT_TRUE(std::adjacent_find(cand.begin(), cand.end()) == cand.end()) << "duplicates";
    EXPECT_EQ(cand, FclCandidateRows(pile, q, s, horizon, margin)) << "trial " << trial;
    VectorXd g(m);
    pile.contacts->Values(0.0, q, all, g);
    for (int r = 0; r < m; ++r) {
      const PairDistance d = pile.contacts->Evaluate(q, r);
      const SpatialContactPair& pair =
          pile.contacts->pairs()[static_cast<std::size_t>(pile.contacts->RowPair(r))];
      double closing = 0.0;
      for (int body : {pair.body_a, pair.body_b}) {
        if (body == engine::kGround) continue;
        closing += d.normal.cwiseAbs().dot(s.segment<3>(6 * body));
      }
      if (g[r] - horizon * closing <= margin) {
        ++within_reach;
        EXPECT_TRUE(std::binary_search(cand.begin(), cand.end(), r))
            << "row " << r << " (" << pair.name << ") within reach but not a candidate, trial "
            << trial;
      }
    }
    candidates += static_cast<long>(cand.size());
    // Then the bodies move a little (the grid's cached pairs of grown boxes are reused) and the
    // query of a switching time (horizon 0): still the FCL candidates.
    VectorXd q_moved = q;
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int i = 0; i < pile.num_spheres; ++i) {
      q_moved.segment<3>(7 * i) += 0.05 * kRadius * Vector3d(u(rng), u(rng), u(rng));
    }
    pile.contacts->CandidateRows(q_moved, s, 0.0, margin, &cand);
    EXPECT_EQ(cand, FclCandidateRows(pile, q_moved, s, 0.0, margin)) << "trial " << trial;
  }
  // The test must see rows within reach, and the reach test must leave most rows out.
  EXPECT_GT(within_reach, 1000);
  EXPECT_LT(candidates, 40L * m / 2);
}

// AabbGrid against all pairs by brute force on random boxes of mixed sizes (a few much larger than
// the median, a few points, a few with huge coordinates), random groups: the same pairs, each once.
TEST(AabbGrid, FindsExactlyTheOverlappingPairsOnce) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  AabbGrid grid;
  long found = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 50 + 20 * trial;
    std::vector<Eigen::AlignedBox3d> boxes;
    std::vector<int> groups;
    for (int i = 0; i < n; ++i) {
      const Vector3d c(u(rng), u(rng), u(rng) * 0.3);
      double size = 0.02 + 0.08 * u(rng);
      if (i % 17 == 0) size = 0.8 * u(rng);  // large
      if (i % 23 == 0) size = 0.0;           // a point
      Vector3d lo = c - 0.5 * size * Vector3d(u(rng), 1.0, u(rng)),
               hi = c + 0.5 * size * Vector3d::Ones();
      if (i % 41 == 0) {
        lo.x() = -1e300;  // far beyond the 64-bit cells
        hi.x() = 1e300;
      }
      boxes.emplace_back(lo, hi);
      groups.push_back(static_cast<int>(u(rng) * n / 3));  // some pairs share a group
    }
    std::vector<std::pair<int, int>> pairs;
    grid.OverlappingPairs(boxes, groups, &pairs);
    std::vector<std::pair<int, int>> expected;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        const auto& A = boxes[static_cast<std::size_t>(a)];
        const auto& B = boxes[static_cast<std::size_t>(b)];
        if (groups[static_cast<std::size_t>(a)] != groups[static_cast<std::size_t>(b)] &&
            (A.min().array() <= B.max().array()).all() &&
            (B.min().array() <= A.max().array()).all()) {
          expected.emplace_back(a, b);
        }
      }
    }
    const std::size_t reported = pairs.size();
    std::sort(pairs.begin(), pairs.end());
    EXPECT_TRUE(std::adjacent_find(pairs.begin(), pairs.end()) == pairs.end()) << trial;
    EXPECT_EQ(pairs, expected) << "trial " << trial;
    EXPECT_EQ(reported, expected.size());
    found += static_cast<long>(expected.size());
  }
  EXPECT_GT(found, 1000);
  std::vector<std::pair<int, int>> pairs;
  const std::vector<Eigen::AlignedBox3d> one(1);
  EXPECT_THROW(grid.OverlappingPairs(one, std::vector<int>{}, &pairs), std::invalid_argument);
}

// OverlappingPairsCached against brute force along random walks of the boxes (steps of up to
// 0.3 % of the domain, growing and shrinking boxes, a group change): the same pairs at every call,
// with far fewer rebuilds than calls (the fat pairs are reused), and a rebuild after a jump.
TEST(AabbGrid, CachedPairsFollowMovingBoxes) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-1.0, 1.0), pos(0.0, 1.0);
  const int n = 300;
  std::vector<Vector3d> centre;
  std::vector<double> half;
  for (int i = 0; i < n; ++i) {
    centre.emplace_back(pos(rng), pos(rng), 0.3 * pos(rng));
    half.push_back(0.02 + 0.02 * pos(rng));
  }
  std::vector<int> groups(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) groups[static_cast<std::size_t>(i)] = i;
  AabbGrid grid;
  const int calls = 200;
  for (int call = 0; call < calls; ++call) {
    std::vector<Eigen::AlignedBox3d> boxes;
    for (int i = 0; i < n; ++i) {
      auto& c = centre[static_cast<std::size_t>(i)];
      c += 0.003 * Vector3d(u(rng), u(rng), u(rng));
      if (call == 150 && i == 7) c += Vector3d(0.5, 0, 0);  // a jump: rebuild
      // Every box 3 times larger at call 50 only: a rebuild at 50 and again at 51 (shrunk).
      const double h =
          half[static_cast<std::size_t>(i)] * (1.0 + 0.05 * u(rng)) * (call == 50 ? 3.0 : 1.0);
      boxes.emplace_back(c - Vector3d::Constant(h), c + Vector3d::Constant(h));
    }
    if (call == 100) groups[5] = groups[6];  // shapes 5 and 6 now on one body
    const long rebuilds_before = grid.rebuilds();
    std::vector<std::pair<int, int>> pairs;
    grid.OverlappingPairsCached(boxes, groups, 0.25, &pairs);
    if (call == 50 || call == 51 || call == 100 || call == 150) {
      EXPECT_EQ(grid.rebuilds(), rebuilds_before + 1) << call;
    }
    std::vector<std::pair<int, int>> expected;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        const auto& A = boxes[static_cast<std::size_t>(a)];
        const auto& B = boxes[static_cast<std::size_t>(b)];
        if (groups[static_cast<std::size_t>(a)] != groups[static_cast<std::size_t>(b)] &&
            (A.min().array() <= B.max().array()).all() &&
            (B.min().array() <= A.max().array()).all()) {
          expected.emplace_back(a, b);
        }
      }
    }
    std::sort(pairs.begin(), pairs.end());
    ASSERT_EQ(pairs, expected) << "call " << call;
  }
  EXPECT_LT(grid.rebuilds(), calls / 4);
  std::printf("cached pairs: %ld rebuilds in %d calls\n", grid.rebuilds(), calls);
  std::vector<std::pair<int, int>> pairs;
  const std::vector<Eigen::AlignedBox3d> one(1);
  EXPECT_THROW(grid.OverlappingPairsCached(one, std::vector<int>{0}, -1.0, &pairs),
               std::invalid_argument);
}

// A rheonomic bilateral row without ValuesAndRates (the default): g = z₀ − 0.1 sin t on body 0.
class MovingFloorRow : public engine::ConstraintBlock {
 public:
  int num_rows() const override { return 1; }
  const engine::ConstraintRowInfo& row_info(int) const override { return info_; }
  void Values(double t, const VectorXd& q, std::span<const int>,
              Eigen::Ref<VectorXd> g) const override {
    g[0] = q[2] - 0.1 * std::sin(t);
  }
  void Jacobian(double, const VectorXd&, std::span<const int>,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    G.setZero();
    G(0, 2) = 1.0;
  }
  void Gamma(double t, const VectorXd&, const VectorXd&, std::span<const int>,
             Eigen::Ref<VectorXd> gamma) const override {
    gamma[0] = 0.1 * std::sin(t);
  }
  void TimeDerivative(double t, const VectorXd&, std::span<const int>,
                      Eigen::Ref<VectorXd> g_t) const override {
    g_t[0] = -0.1 * std::cos(t);
  }

 private:
  engine::ConstraintRowInfo info_{engine::ConstraintKind::kBilateral, "floor_row", -1.0};
};

// ConstraintValuesAndRates (SpatialContacts::ValuesAndRates through the virtual, and the default
// path for a block without it) against ConstraintValues and engine::ConstraintRate (G v + ∂g/∂t)
// on random subsets of the pile's rows in any order, with rotated bodies and random velocities.
TEST(PileValuesAndRates, EqualValuesAndRateThroughTheJacobian) {
  const Pile pile = MakePile();
  auto system = std::make_shared<engine::SpatialMultibodySystem>(pile.model);
  const int first_contact_row = system->AddConstraintBlock(std::make_shared<MovingFloorRow>());
  system->AddConstraintBlock(pile.contacts);
  // Rows with a rotational part: off-centre spheres, boxes on the floor (8 corner rows each, the
  // manifold path).
  Eigen::Isometry3d off = Eigen::Isometry3d::Identity();
  off.translation() = Vector3d(0.01, -0.02, 0.005);
  std::vector<SpatialContactPair> turned_pairs;
  for (int i = 0; i + 1 < pile.num_spheres; i += 7) {
    turned_pairs.push_back({"oc" + std::to_string(i), i, Shape::Sphere(0.03, off), i + 1,
                            Shape::Sphere(0.02, off), -1});
    turned_pairs.push_back({"box" + std::to_string(i), engine::kGround,
                            Shape::Plane(Vector3d::UnitZ(), 0.0), i,
                            Shape::Box(Vector3d(0.02, 0.03, 0.01)), -1});
  }
  system->AddConstraintBlock(std::make_shared<const SpatialContacts>(pile.model, turned_pairs));
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0), pos(0.0, 1.0);
  const int m = system->num_constraints(), nv = system->nv();
  ASSERT_EQ(first_contact_row, 0);
  double worst_g = 0.0, worst_rate = 0.0;
  for (int trial = 0; trial < 20; ++trial) {
    const VectorXd q = Jitter(pile, rng, 0.5 * kRadius, trial % 2 == 0);
    VectorXd v(nv);
    for (int j = 0; j < nv; ++j) v[j] = 3.0 * u(rng);
    std::vector<int> rows;
    for (int r = 0; r < m; ++r) {
      if (pos(rng) < 0.3 || r == 0) rows.push_back(r);
    }
    std::shuffle(rows.begin(), rows.end(), rng);
    const double t = 0.7 * trial;
    VectorXd g, g_dot, g_ref, g_dot_ref;
    system->ConstraintValuesAndRates(t, q, v, rows, &g, &g_dot);
    system->ConstraintValues(t, q, rows, &g_ref);
    engine::ConstraintRate(*system, t, q, v, rows, &g_dot_ref);
    ASSERT_EQ(g.size(), static_cast<Eigen::Index>(rows.size()));
    ASSERT_EQ(g_dot.size(), static_cast<Eigen::Index>(rows.size()));
    worst_g = std::max(worst_g, (g - g_ref).lpNorm<Eigen::Infinity>());
    worst_rate = std::max(worst_rate, (g_dot - g_dot_ref).lpNorm<Eigen::Infinity>() /
                                          std::max(1.0, g_dot_ref.lpNorm<Eigen::Infinity>()));
  }
  // The same operations in the same order (spatial_contacts.h): round-off would show as a few
  // ulp of the O(1) m and m/s values; 1e-15 admits 4 ulp and catches any real difference.
  EXPECT_LE(worst_g, 1e-15);
  EXPECT_LE(worst_rate, 1e-15);
  std::printf("ValuesAndRates vs Values + G v: |Δg| %.2e m, |Δġ|/|ġ| %.2e\n", worst_g, worst_rate);
}

}  // namespace
}  // namespace saltus::contact
