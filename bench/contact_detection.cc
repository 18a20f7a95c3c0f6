// Contact detection per step for N spheres in a box (issue 4, §6): broadphase (FCL dynamic AABB
// tree with a margin, contact/broadphase.h) plus narrowphase (exact sphere–sphere and
// sphere–plane signed distance, contact/geometry3d.h) on the candidate pairs.
//
// Scene: N spheres of radius 0.05 m at random positions in a cube of side 0.3·(N/20)^(1/3) m
// (constant density: 20 spheres in a 0.3 m cube), inside its 6 wall planes. One "step" moves every
// sphere by a random displacement of at most 2 mm (a time step of a falling pile), updates the
// broadphase, lists the candidate pairs within the margin 0.01 m and evaluates the signed distance
// of each. Counters: pairs = candidate pairs per step (sphere–sphere and sphere–plane),
// s_per_pair = CPU time per step / pairs. The growth exponent is the slope of log(CPU time per
// step) against log N (measured 2026-11: 1.13 for N = 10 ... 1280; 0.87 ms per step and 185 ns
// per pair at N = 1024, on the 2-core development machine under load).
//
// BM_PileRows: the cost of one evaluation of the contact rows of a SpatialContacts block (the
// event loop's Values and AppendJacobianBlocks on its watched rows; Gamma on the same rows) for
// the sphere pile of `saltus generate sphere_pile` (N spheres, all N(N−1)/2 sphere–sphere pairs
// and the floor and four walls declared): q is a random packing, the rows are those of the pairs
// within 5 cm (CandidateRows at zero speed, planes included), about 26 rows per sphere. Counter
// s_per_row = time per call over all rows / rows. Figures in docs/contact-geometry.md ("Cost").
//
// BM_PileCandidateRows(Turned): the reach test of the event loop on the same pile (AabbGrid with
// cached pairs of grown boxes, contact/broadphase.h), against BM_PileCandidatePairsFcl, the FCL
// dynamic tree it replaced (pairs only, without the mapping to rows). Measured 2026-11-21, CPU
// per call, loaded 2-core machine: N = 100 4.1 vs 13.5 µs, 200 8.8 vs 29.8 µs, 1000 49 vs 206 µs.
#include <benchmark/benchmark.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>
#include <vector>

#include "contact/broadphase.h"
#include "contact/geometry3d.h"
#include "contact/shapes.h"
#include "contact/spatial_contacts.h"
#include "engine/block_sparse.h"
#include "engine/spatial_model.h"

namespace {

using saltus::contact::Broadphase;
using saltus::contact::PairDistance;
using saltus::contact::Shape;
using saltus::contact::SignedDistance;

constexpr double kRadius = 0.05, kMargin = 0.01, kMaxMove = 0.002;

void BM_ContactDetection(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const double half = 0.15 * std::cbrt(n / 20.0);  // half side of the cube (m)
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Broadphase broadphase(kMargin);
  const Shape ball = Shape::Sphere(kRadius);
  std::vector<Shape> shapes;
  std::vector<Eigen::Isometry3d> poses;
  // Walls: half-spaces n·x ≤ −half (solid outside the cube).
  for (int axis = 0; axis < 3; ++axis) {
    for (double sign : {1.0, -1.0}) {
      Eigen::Vector3d normal = Eigen::Vector3d::Zero();
      normal[axis] = sign;
      shapes.push_back(Shape::Plane(normal, -half));
      poses.push_back(Eigen::Isometry3d::Identity());
      broadphase.Add(shapes.back(), saltus::contact::kStaticBody);
    }
  }
  const int num_walls = static_cast<int>(shapes.size());
  for (int i = 0; i < n; ++i) {
    Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
    X.translation() = (half - kRadius) * Eigen::Vector3d(u(rng), u(rng), u(rng));
    shapes.push_back(ball);
    poses.push_back(X);
    broadphase.Add(ball, i, X);
  }
  long total_pairs = 0, steps = 0;
  double checksum = 0;
  for (auto _ : state) {
    for (int i = 0; i < n; ++i) {
      Eigen::Isometry3d& X = poses[static_cast<std::size_t>(num_walls + i)];
      Eigen::Vector3d p = X.translation() + kMaxMove * Eigen::Vector3d(u(rng), u(rng), u(rng));
      X.translation() = p.cwiseMax(-(half - kRadius)).cwiseMin(half - kRadius);
      broadphase.SetBodyPose(num_walls + i, X);
    }
    const std::vector<std::pair<int, int>> pairs = broadphase.CandidatePairs();
    for (const auto& [a, b] : pairs) {
      const PairDistance d =
          SignedDistance(shapes[static_cast<std::size_t>(a)], poses[static_cast<std::size_t>(a)],
                         shapes[static_cast<std::size_t>(b)], poses[static_cast<std::size_t>(b)]);
      checksum += d.gap;
    }
    total_pairs += static_cast<long>(pairs.size());
    ++steps;
  }
  benchmark::DoNotOptimize(checksum);
  const double pairs_per_step = static_cast<double>(total_pairs) / static_cast<double>(steps);
  state.counters["pairs"] = pairs_per_step;
  // Seconds per pair: iteration time / pairs (kAvgIterations divides by iterations).
  state.counters["s_per_pair"] =
      benchmark::Counter(static_cast<double>(std::max(total_pairs, 1L)),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetComplexityN(n);
}

BENCHMARK(BM_ContactDetection)
    ->RangeMultiplier(2)
    ->Range(10, 1280)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oNLogN);

// The pile: spheres of radius 0.05 m on a jittered 0.11 m grid, 5 per row, in a box of floor z = 0
// and walls at ±0.3 m; random unit quaternions (so that the rows see general rotations).
struct Pile {
  std::shared_ptr<const saltus::contact::SpatialContacts> contacts;
  Eigen::VectorXd q, v;
  std::vector<int> rows;
};

Pile MakePile(int n) {
  using saltus::contact::Shape;
  using saltus::contact::SpatialContactPair;
  saltus::engine::SpatialModelBuilder builder;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < n; ++i) {
    saltus::engine::SpatialBody b;
    b.name = "s" + std::to_string(i);
    b.mass = 0.1;
    b.inertia = 1e-4 * Eigen::Matrix3d::Identity();
    b.position = Eigen::Vector3d(-0.22 + 0.11 * (i % 5), -0.22 + 0.11 * ((i / 5) % 5),
                                 0.06 + 0.11 * (i / 25)) +
                 0.004 * Eigen::Vector3d(u(rng), u(rng), u(rng));
    builder.AddBody(b);
  }
  const auto model = builder.Build();
  std::vector<Shape> planes = {
      Shape::Plane({0, 0, 1}, 0, Eigen::Isometry3d::Identity(), "floor"),
      Shape::Plane({1, 0, 0}, -0.3, Eigen::Isometry3d::Identity(), "wall_xm"),
      Shape::Plane({-1, 0, 0}, -0.3, Eigen::Isometry3d::Identity(), "wall_xp"),
      Shape::Plane({0, 1, 0}, -0.3, Eigen::Isometry3d::Identity(), "wall_ym"),
      Shape::Plane({0, -1, 0}, -0.3, Eigen::Isometry3d::Identity(), "wall_yp")};
  std::vector<Shape> balls;
  for (int i = 0; i < n; ++i)
    balls.push_back(Shape::Sphere(0.05, Eigen::Isometry3d::Identity(), "ball" + std::to_string(i)));
  std::vector<SpatialContactPair> pairs;
  for (int i = 0; i < n; ++i) {
    for (const Shape& p : planes)
      pairs.push_back(
          {p.name() + "-" + balls[i].name(), saltus::engine::kGround, p, i, balls[i], -1.0});
  }
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      pairs.push_back({balls[i].name() + "-" + balls[j].name(), i, balls[i], j, balls[j], -1.0});
    }
  }
  Pile pile;
  pile.contacts = std::make_shared<saltus::contact::SpatialContacts>(model, pairs);
  pile.q = model->InitialPositions();
  pile.v = Eigen::VectorXd(6 * n);
  for (int i = 0; i < n; ++i) {
    pile.q.segment<4>(7 * i + 3) = Eigen::Vector4d(u(rng), u(rng), u(rng), u(rng)).normalized();
  }
  for (Eigen::Index k = 0; k < pile.v.size(); ++k) pile.v[k] = u(rng);
  pile.contacts->CandidateRows(pile.q, Eigen::VectorXd::Zero(6 * n), 0.0, 0.05, &pile.rows);
  return pile;
}

void SetRowCounters(benchmark::State& state, const Pile& pile) {
  state.counters["rows"] = static_cast<double>(pile.rows.size());
  state.counters["s_per_row"] = benchmark::Counter(
      static_cast<double>(pile.rows.size()) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_PileRowsValues(benchmark::State& state) {
  const Pile pile = MakePile(static_cast<int>(state.range(0)));
  Eigen::VectorXd g(static_cast<Eigen::Index>(pile.rows.size()));
  for (auto _ : state) {
    pile.contacts->Values(0.0, pile.q, pile.rows, g);
    benchmark::DoNotOptimize(g.data());
  }
  SetRowCounters(state, pile);
}

void BM_PileRowsJacobianBlocks(benchmark::State& state) {
  const Pile pile = MakePile(static_cast<int>(state.range(0)));
  saltus::engine::BlockSparseRows G;
  for (auto _ : state) {
    G.Clear(6, static_cast<int>(pile.v.size()));
    for (int r : pile.rows) pile.contacts->AppendJacobianBlocks(0.0, pile.q, r, &G);
    benchmark::DoNotOptimize(G.values.data());
  }
  SetRowCounters(state, pile);
}

void BM_PileRowsGamma(benchmark::State& state) {
  const Pile pile = MakePile(static_cast<int>(state.range(0)));
  Eigen::VectorXd gamma(static_cast<Eigen::Index>(pile.rows.size()));
  for (auto _ : state) {
    pile.contacts->Gamma(0.0, pile.q, pile.v, pile.rows, gamma);
    benchmark::DoNotOptimize(gamma.data());
  }
  SetRowCounters(state, pile);
}

// What the event loop asks at each evaluation of its watched rows: g, and ġ = G v through the
// block-sparse rows (engine::ConstraintRate) ...
void BM_PileRowsValuesThenRates(benchmark::State& state) {
  const Pile pile = MakePile(static_cast<int>(state.range(0)));
  Eigen::VectorXd g(static_cast<Eigen::Index>(pile.rows.size())), g_dot;
  saltus::engine::BlockSparseRows G;
  for (auto _ : state) {
    pile.contacts->Values(0.0, pile.q, pile.rows, g);
    G.Clear(6, static_cast<int>(pile.v.size()));
    for (int r : pile.rows) pile.contacts->AppendJacobianBlocks(0.0, pile.q, r, &G);
    G.Multiply(pile.v, &g_dot);
    benchmark::DoNotOptimize(g_dot.data());
  }
  SetRowCounters(state, pile);
}

// ... and the same in one pass (SpatialContacts::ValuesAndRates).
void BM_PileRowsValuesAndRates(benchmark::State& state) {
  const Pile pile = MakePile(static_cast<int>(state.range(0)));
  Eigen::VectorXd g(static_cast<Eigen::Index>(pile.rows.size())), g_dot(g.size());
  for (auto _ : state) {
    pile.contacts->ValuesAndRates(0.0, pile.q, pile.v, pile.rows, g, g_dot);
    benchmark::DoNotOptimize(g_dot.data());
  }
  SetRowCounters(state, pile);
}

// The reach test of the event loop (ConstraintBlock::CandidateRows, once per step and a few times
// per event): the candidate rows of the pile for the speed bound 1 m/s on every coordinate, a
// horizon of 2 ms (a step of the settling pile) and the margin τ₀ = 1e-9 m, with the bodies
// unturned (as in the frictionless pile, where no impulse turns a sphere) or turned (FCL's
// bounding cube of a turned box). Counter: rows = candidate rows per call.
void PileCandidateRows(benchmark::State& state, bool turned) {
  Pile pile = MakePile(static_cast<int>(state.range(0)));
  if (!turned) {
    for (Eigen::Index i = 0; i < pile.q.size() / 7; ++i) {
      pile.q.segment<4>(7 * i + 3) = Eigen::Vector4d(1, 0, 0, 0);
    }
  }
  const Eigen::VectorXd s = Eigen::VectorXd::Ones(pile.v.size());
  std::vector<int> rows;
  for (auto _ : state) {
    pile.contacts->CandidateRows(pile.q, s, 2e-3, 1e-9, &rows);
    benchmark::DoNotOptimize(rows.data());
  }
  state.counters["rows"] = static_cast<double>(rows.size());
}
void BM_PileCandidateRows(benchmark::State& state) { PileCandidateRows(state, false); }
void BM_PileCandidateRowsTurned(benchmark::State& state) { PileCandidateRows(state, true); }

// The same query through the FCL dynamic AABB tree (contact::Broadphase), as CandidateRows did
// before the AabbGrid (2026-11, session 9): poses and inflations of every proxy, then the
// candidate pairs (without mapping them to rows). Counter: pairs per call.
void BM_PileCandidatePairsFcl(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Pile pile = MakePile(n);
  Broadphase bp(0.0);
  const std::vector<Shape> planes = {Shape::Plane({0, 0, 1}, 0), Shape::Plane({1, 0, 0}, -0.3),
                                     Shape::Plane({-1, 0, 0}, -0.3), Shape::Plane({0, 1, 0}, -0.3),
                                     Shape::Plane({0, -1, 0}, -0.3)};
  for (const Shape& p : planes) bp.Add(p, saltus::contact::kStaticBody);
  for (int i = 0; i < n; ++i) bp.Add(Shape::Sphere(0.05), i);
  std::size_t pairs = 0;
  for (auto _ : state) {
    for (int i = 0; i < 5; ++i) bp.SetBodyPose(i, Eigen::Isometry3d::Identity(), 0.5e-9);
    for (int i = 0; i < n; ++i) {
      Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
      X.translation() = pile.q.segment<3>(7 * i);
      // reach = H (‖s_lin‖ + ρ ‖s_ang‖) = 2e-3 (√3 + 0.05 √3)
      bp.SetBodyPose(5 + i, X, 0.5e-9 + 2e-3 * 1.05 * std::sqrt(3.0));
    }
    pairs = bp.CandidatePairs().size();
    benchmark::DoNotOptimize(pairs);
  }
  state.counters["pairs"] = static_cast<double>(pairs);
}

BENCHMARK(BM_PileCandidateRows)->Arg(100)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PileCandidateRowsTurned)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PileCandidatePairsFcl)->Arg(100)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PileRowsValues)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PileRowsValuesThenRates)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PileRowsValuesAndRates)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PileRowsJacobianBlocks)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PileRowsGamma)->Arg(100)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
