// Cost of one frictional contact problem (contact/friction_problem.h) on the problems of
// tests/contact/friction_problem_test.cc: the whole call (validation, assembly of W, components,
// solve, recovery of v⁺ or v̇), with the exact diagnosis (enumeration) on and off, and the
// frictionless path for comparison. Figures: docs/friction_problems.md.
//
// Run: build/bench/friction_problems --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "contact/friction_problem.h"
#include "contact/impact_problem.h"
#include "friction_test_models.h"

namespace {

using saltus::contact::FrictionalContact;
using saltus::contact::FrictionCone;
using saltus::contact::FrictionOptions;
namespace t = saltus::contact::testing;

constexpr double kG = 9.81;

struct Scene {
  std::shared_ptr<saltus::engine::LagrangianSystem> system;
  std::vector<FrictionalContact> contacts;
  Eigen::VectorXd q, v;
};

std::vector<FrictionalContact> Contacts(const saltus::engine::MechanicalSystem& s, int first,
                                        int count, int rows, double e) {
  std::vector<FrictionalContact> out;
  for (int i = 0; i < count; ++i)
    out.push_back(FrictionalContact::FromSystem(s, first + rows * i, e));
  return out;
}

// Block on two corners (planar, 3 velocities, 4 contact rows), μ = 0.4 (0: frictionless).
Scene PlanarBlock(double mu, double alpha) {
  const double m = 2.0, a = 0.5, h = 0.2, J = m * (4 * a * a + 4 * h * h) / 12.0;
  Scene s;
  s.system = t::PlanarBodies({{m, J}}, kG * Eigen::Vector2d(std::sin(alpha), -std::cos(alpha)));
  const int first = t::AddPlanarContacts(
      s.system.get(), {{.name = "rear", .point = Eigen::Vector2d(-a, -h), .friction = mu},
                       {.name = "front", .point = Eigen::Vector2d(a, -h), .friction = mu}});
  s.contacts = Contacts(*s.system, first, 2, 2, 0.3);
  s.q = Eigen::Vector3d(0.0, h, 0.0);
  s.v = Eigen::Vector3d(0.3, -1.0, 0.7);
  return s;
}

// Box on four corners (3D, 6 velocities, 12 contact rows), μ = 0.6 on an incline of 0.4 rad.
Scene Box3d(double mu) {
  const double m = 3.0, a = 0.3, bw = 0.2, h = 0.1, alpha = 0.4;
  Scene s;
  const Eigen::Matrix3d J =
      Eigen::Vector3d(m / 3 * (bw * bw + h * h), m / 3 * (a * a + h * h), m / 3 * (a * a + bw * bw))
          .asDiagonal();
  s.system = t::SpatialBody(m, J, kG * Eigen::Vector3d(std::sin(alpha), 0.0, -std::cos(alpha)));
  std::vector<t::SpatialContactSpec> corners;
  for (double sx : {-1.0, 1.0}) {
    for (double sy : {-1.0, 1.0}) {
      corners.push_back({.name = "c" + std::to_string(corners.size()),
                         .r = Eigen::Vector3d(sx * a, sy * bw, -h),
                         .friction = mu});
    }
  }
  const int first = t::AddSpatialContacts(s.system.get(), corners);
  s.contacts = Contacts(*s.system, first, 4, 3, 0.0);
  s.q = Eigen::VectorXd::Zero(6);
  s.v = Eigen::VectorXd::Zero(6);
  s.v[2] = -1.0;
  s.v[0] = 0.5;
  return s;
}

void BM_FrictionalImpact_PlanarBlock(benchmark::State& state) {
  const Scene s = PlanarBlock(state.range(0) ? 0.4 : 0.0, 0.0);
  FrictionOptions o;
  o.diagnose = state.range(1) != 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        saltus::contact::SolveFrictionalImpact(*s.system, 0.0, s.q, s.v, {}, s.contacts, o));
  }
  state.SetItemsProcessed(state.iterations());
}
// (friction, diagnose): (0, 0) is the frictionless path (contact::SolveImpact).
BENCHMARK(BM_FrictionalImpact_PlanarBlock)->Args({0, 0})->Args({1, 0})->Args({1, 1});

void BM_FrictionalAccelerations_PlanarBlock(benchmark::State& state) {
  const Scene s = PlanarBlock(state.range(0) ? 0.4 : 0.0, 0.3);
  FrictionOptions o;
  o.diagnose = state.range(1) != 0;
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(3);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        saltus::contact::SolveFrictionalAccelerations(*s.system, 0.0, s.q, v, {}, s.contacts, o));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FrictionalAccelerations_PlanarBlock)->Args({0, 0})->Args({1, 0})->Args({1, 1});

void BM_FrictionalImpact_Box3d(benchmark::State& state) {
  const Scene s = Box3d(0.6);
  FrictionOptions o;
  o.cone = state.range(0) ? FrictionCone::kFaceted : FrictionCone::kExact;
  o.facets = static_cast<int>(state.range(0));
  o.diagnose = false;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        saltus::contact::SolveFrictionalImpact(*s.system, 0.0, s.q, s.v, {}, s.contacts, o));
  }
  state.SetItemsProcessed(state.iterations());
}
// Argument: 0 = exact cone (fc3d), N = faceted with N facets (Lemke).
BENCHMARK(BM_FrictionalImpact_Box3d)->Arg(0)->Arg(8)->Arg(16);

void BM_FrictionalAccelerations_Box3d(benchmark::State& state) {
  const Scene s = Box3d(0.6);
  FrictionOptions o;
  o.cone = state.range(0) ? FrictionCone::kFaceted : FrictionCone::kExact;
  o.facets = static_cast<int>(state.range(0));
  o.diagnose = false;
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(6);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        saltus::contact::SolveFrictionalAccelerations(*s.system, 0.0, s.q, v, {}, s.contacts, o));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FrictionalAccelerations_Box3d)->Arg(0)->Arg(8)->Arg(16);

}  // namespace

BENCHMARK_MAIN();
