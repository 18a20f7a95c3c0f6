// Point–triangle-mesh queries against the number of triangles T (issue 4 §1): MeshPointDistance
// (contact/geometry3d.h: closest point, pseudo-normal and side) on a generated grid terrain,
// brute force (a mesh without index: a loop over every triangle) against the bounding-volume tree
// of BuildMeshIndex, and the time to build the index.
//
// Terrain: z = 0.3 sin(1.3 x) cos(0.9 y) + 0.1 sin(3.1 x + 2.3 y) over [0, 10]² in n × n squares of
// two triangles, T = 2n² (n = 4 … 724: T = 32 … 1,048,352). Query points: 1024 random points
// over the terrain's square within 1 mm of the smooth surface z (a contact row near its event; the
// triangulation is within 0.4 mm of z for n ≥ 256; second argument 0) or at 0.05 m below to 0.2 m
// above it (argument 1), cycled through.
//
// Measured 2026-11-21 (CPU time per query, 2-core machine shared with other builds; Release):
//   T            32      2,048    32,768   131,072  524,288  1,048,352
//   brute force  0.32 µs 13.7 µs  190 µs   725 µs   2.9 ms   6.3 ms     (∝ T)
//   tree, ±1 mm  0.14 µs 0.28 µs  0.41 µs  0.55 µs  0.70 µs  1.25 µs
//   tree, wide   0.15 µs 0.38 µs  0.86 µs  1.5 µs   5.1 µs   10 µs
//   index build  5 µs    0.51 ms  13.8 ms  54 ms    224 ms   479 ms     (22.8 ns · T log2 T)
// Counted (a scratch build): ±1 mm visits log2(T/4) + 1 boxes and 4.1–4.3 triangles per query
// up to T = 524,288 (24 boxes, 9.8 triangles at 1,048,352, whose leaves are uneven), i.e.
// O(log T); the growth of the time beyond that above T ≈ 10⁵ is memory (the mesh and tree,
// ≈ 70 MB at 10⁶, leave the caches for random points). In the wide band (points up to 0.2 m
// above triangles of 14 mm at T = 10⁶, slopes up to ≈ 0.7) the axis-aligned boxes of the sloped
// patches are loose: 4.3 → 66 triangles and 4 → 70 boxes per query from T = 32 to 10⁶ (≈ T^0.3).
//
// Run: build-…/bench/mesh_query --benchmark_min_time=0.3 (the whole set takes ≈ 40 s; brute force
// at T ≈ 10⁶ is ≈ 6 ms per query).
#include <benchmark/benchmark.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "contact/geometry3d.h"
#include "contact/shapes.h"

namespace {

using Eigen::Vector3d;
using saltus::contact::TriangleMesh;

double Height(double x, double y) {
  return 0.3 * std::sin(1.3 * x) * std::cos(0.9 * y) + 0.1 * std::sin(3.1 * x + 2.3 * y);
}

TriangleMesh Terrain(int n) {
  TriangleMesh m;
  const double step = 10.0 / n;
  for (int j = 0; j <= n; ++j) {
    for (int i = 0; i <= n; ++i)
      m.vertices.emplace_back(i * step, j * step, Height(i * step, j * step));
  }
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      const int v = j * (n + 1) + i;
      m.triangles.push_back({v, v + 1, v + n + 2});
      m.triangles.push_back({v, v + n + 2, v + n + 1});
    }
  }
  return m;
}

// The terrain of each n as a shape (with its index), built once per process.
const saltus::contact::Shape& TerrainShape(int n) {
  static std::map<int, std::unique_ptr<saltus::contact::Shape>> shapes;
  auto& shape = shapes[n];
  if (!shape) {
    shape = std::make_unique<saltus::contact::Shape>(
        saltus::contact::Shape::TriangleMeshSurface(Terrain(n)));
  }
  return *shape;
}

// 1024 random points over the terrain's square: `wide` at 0.05 m below to 0.2 m above the
// surface, otherwise within 1 mm of it (a contact row near its event).
std::vector<Vector3d> QueryPoints(bool wide) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Vector3d> points;
  for (int k = 0; k < 1024; ++k) {
    const double x = 10.0 * u(rng), y = 10.0 * u(rng);
    const double h = wide ? -0.05 + 0.25 * u(rng) : -1e-3 + 2e-3 * u(rng);
    points.emplace_back(x, y, Height(x, y) + h);
  }
  return points;
}

void Query(benchmark::State& state, bool tree) {
  const int n = static_cast<int>(state.range(0));
  const TriangleMesh& indexed = TerrainShape(n).mesh();
  TriangleMesh plain;
  if (!tree) {
    plain.vertices = indexed.vertices;
    plain.triangles = indexed.triangles;
  }
  const TriangleMesh& mesh = tree ? indexed : plain;
  if (saltus::contact::HasMeshIndex(mesh) != tree) state.SkipWithError("index state");
  const std::vector<Vector3d> points = QueryPoints(state.range(1) != 0);
  std::size_t k = 0;
  double sum = 0.0;
  for (auto _ : state) {
    const auto d =
        saltus::contact::MeshPointDistance(mesh, Eigen::Isometry3d::Identity(), points[k]);
    sum += d.gap;
    benchmark::DoNotOptimize(sum);
    k = (k + 1) % points.size();
  }
  state.counters["T"] = static_cast<double>(mesh.triangles.size());
}

void BM_MeshDistanceBruteForce(benchmark::State& state) { Query(state, false); }
void BM_MeshDistanceTree(benchmark::State& state) { Query(state, true); }

void BM_MeshIndexBuild(benchmark::State& state) {
  const TriangleMesh mesh = Terrain(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto index = saltus::contact::BuildMeshIndex(mesh);
    benchmark::DoNotOptimize(index);
  }
  state.SetComplexityN(static_cast<int64_t>(mesh.triangles.size()));
  state.counters["T"] = static_cast<double>(mesh.triangles.size());
}

// Terrain resolution n (T = 2n²), and for the queries the height band (0: ±1 mm, 1: −0.05 …
// 0.2 m).
void Sizes(benchmark::internal::Benchmark* b) {
  for (int band : {0, 1}) {
    for (int n : {4, 8, 16, 32, 64, 128, 256, 512, 724}) b->Args({n, band});
  }
}
void BuildSizes(benchmark::internal::Benchmark* b) {
  for (int n : {4, 8, 16, 32, 64, 128, 256, 512, 724}) b->Arg(n);
}

BENCHMARK(BM_MeshDistanceBruteForce)->Apply(Sizes);
BENCHMARK(BM_MeshDistanceTree)->Apply(Sizes);
BENCHMARK(BM_MeshIndexBuild)
    ->Apply(BuildSizes)
    ->Complexity(benchmark::oNLogN)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
