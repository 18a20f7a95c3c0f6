// Triangle-mesh point queries with the acceleration structure (contact/geometry3d.h,
// BuildMeshIndex) against the brute-force loops: ClosestPointOnMesh, MeshPseudoNormal,
// MeshPointSide and MeshPointDistance must return the same doubles, bit for bit, on the bowl and
// the grid floor of the examples, a larger generated grid and a random closed mesh, at points near
// the surface, far away and exactly on vertices and edges (where several triangles tie).
//
// The brute-force reference is the same mesh without an index: a TriangleMesh built from the
// vertex and triangle lists (HasMeshIndex false) runs the loops over every triangle.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "contact/geometry3d.h"
#include "contact/shapes.h"

namespace saltus::contact {
namespace {

using Eigen::Isometry3d;
using Eigen::Vector3d;

std::string ExamplePath(const std::string& file) {
  const char* root = std::getenv("SALTUS_SOURCE_DIR");
  return std::string(root != nullptr ? root : ".") + "/examples/spatial/" + file;
}

bool Same(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }
bool Same(const Vector3d& a, const Vector3d& b) {
  return Same(a.x(), b.x()) && Same(a.y(), b.y()) && Same(a.z(), b.z());
}
bool Same(const MeshClosest& a, const MeshClosest& b) {
  return a.triangle == b.triangle && a.feature.kind == b.feature.kind &&
         a.feature.vertices[0] == b.feature.vertices[0] &&
         a.feature.vertices[1] == b.feature.vertices[1] && Same(a.point, b.point);
}

TriangleMesh WithoutIndex(const TriangleMesh& m) {
  TriangleMesh plain;
  plain.vertices = m.vertices;
  plain.triangles = m.triangles;
  return plain;
}

struct Counts {
  int points = 0, edges = 0, vertices = 0, ties = 0;
};

// Every query on `shape`'s indexed mesh against the brute force on a copy without the index.
Counts ExpectSameQueries(const Shape& shape, const std::vector<Vector3d>& points) {
  const TriangleMesh& mesh = shape.mesh();
  EXPECT_TRUE(HasMeshIndex(mesh));
  const TriangleMesh plain = WithoutIndex(mesh);
  EXPECT_FALSE(HasMeshIndex(plain));
  Counts counts;
  int mismatches = 0;
  // A pose that is not the identity, so that MeshPointDistance's world transform is exercised.
  Isometry3d X = Isometry3d::Identity();
  X.linear() = Eigen::AngleAxisd(0.3, Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  X.translation() = Vector3d(0.1, -0.2, 0.05);
  for (const Vector3d& p : points) {
    ++counts.points;
    const MeshClosest fast = ClosestPointOnMesh(mesh, p);
    const MeshClosest slow = ClosestPointOnMesh(plain, p);
    bool same = Same(fast, slow);
    if (slow.feature.kind == TriangleFeature::kEdge) ++counts.edges;
    if (slow.feature.kind == TriangleFeature::kVertex) ++counts.vertices;
    // A tie: another triangle at the same squared distance.
    const double best = (slow.point - p).squaredNorm();
    for (std::size_t f = 0; f < mesh.triangles.size(); ++f) {
      if (static_cast<int>(f) == slow.triangle) continue;
      const auto& t = mesh.triangles[f];
      const Vector3d x = ClosestPointOnTriangle(p, mesh.vertices[static_cast<std::size_t>(t[0])],
                                                mesh.vertices[static_cast<std::size_t>(t[1])],
                                                mesh.vertices[static_cast<std::size_t>(t[2])]);
      if (!((x - p).squaredNorm() > best)) {
        ++counts.ties;
        break;
      }
    }
    bool boundary_fast = false, boundary_slow = false;
    same = same && Same(MeshPseudoNormal(mesh, slow, &boundary_fast),
                        MeshPseudoNormal(plain, slow, &boundary_slow));
    same = same && boundary_fast == boundary_slow;
    same = same && Same(MeshPointSide(mesh, slow, p), MeshPointSide(plain, slow, p));
    const Vector3d w = X * p;
    PointNormalRegion region_fast, region_slow;
    const PairDistance d_fast = MeshPointDistance(mesh, X, w, &region_fast);
    const PairDistance d_slow = MeshPointDistance(plain, X, w, &region_slow);
    same = same && Same(d_fast.gap, d_slow.gap) && Same(d_fast.normal, d_slow.normal) &&
           Same(d_fast.point_a, d_slow.point_a) && Same(d_fast.point_b, d_slow.point_b) &&
           region_fast.kind == region_slow.kind && Same(region_fast.edge, region_slow.edge);
    if (!same && ++mismatches <= 5) {
      ADD_FAILURE() << shape.Label() << ": the indexed queries differ at p = "
                    << p.transpose().format(Eigen::IOFormat(17)) << " (triangle " << fast.triangle
                    << " vs " << slow.triangle << ")";
    }
  }
  EXPECT_EQ(mismatches, 0) << shape.Label() << ", " << points.size() << " points";
  return counts;
}

// Points near the surface (random points of random triangles moved along the normal by up to
// `offset`), far away (uniform in a box `far` times the mesh's extent) and exactly on every
// vertex and edge midpoint, and above/below them by `offset` along the triangle's normal.
std::vector<Vector3d> TestPoints(const TriangleMesh& m, double offset, double far, int random,
                                 std::mt19937& rng, std::size_t exact_triangles = 500) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Vector3d> points;
  Eigen::AlignedBox3d box;
  for (const Vector3d& x : m.vertices) box.extend(x);
  std::uniform_int_distribution<std::size_t> pick(0, m.triangles.size() - 1);
  for (int k = 0; k < random; ++k) {
    const auto& t = m.triangles[pick(rng)];
    const Vector3d& a = m.vertices[static_cast<std::size_t>(t[0])];
    const Vector3d& b = m.vertices[static_cast<std::size_t>(t[1])];
    const Vector3d& c = m.vertices[static_cast<std::size_t>(t[2])];
    double s = u(rng), r = u(rng);
    if (s + r > 1.0) {
      s = 1.0 - s;
      r = 1.0 - r;
    }
    const Vector3d n = (b - a).cross(c - a).normalized();
    points.push_back(a + s * (b - a) + r * (c - a) + (2.0 * u(rng) - 1.0) * offset * n);
    const Vector3d centre = box.center();
    const Vector3d half = Vector3d::Constant(far * 0.5 * box.sizes().maxCoeff());
    points.push_back(centre +
                     Vector3d(2 * u(rng) - 1, 2 * u(rng) - 1, 2 * u(rng) - 1).cwiseProduct(half));
  }
  // Exact points on the vertices and edges of every triangle, or of `exact_triangles` random ones
  // (the brute-force reference costs O(T) per point).
  for (std::size_t i = 0; i < std::min(exact_triangles, m.triangles.size()); ++i) {
    const auto& t = m.triangles[exact_triangles < m.triangles.size() ? pick(rng) : i];
    for (int k = 0; k < 3; ++k) {
      const Vector3d& a = m.vertices[static_cast<std::size_t>(t[static_cast<std::size_t>(k)])];
      const Vector3d& b =
          m.vertices[static_cast<std::size_t>(t[static_cast<std::size_t>((k + 1) % 3)])];
      const Vector3d n =
          (m.vertices[static_cast<std::size_t>(t[1])] - m.vertices[static_cast<std::size_t>(t[0])])
              .cross(m.vertices[static_cast<std::size_t>(t[2])] -
                     m.vertices[static_cast<std::size_t>(t[0])])
              .normalized();
      for (const Vector3d& x : {a, Vector3d(0.5 * (a + b))}) {
        points.push_back(x);
        points.push_back(x + offset * n);
        points.push_back(x - offset * n);
      }
    }
  }
  return points;
}

// A grid terrain z = h(x, y) over [0, n·step]² in n × n squares of two triangles (dyadic steps,
// so that vertices and edge midpoints are exact).
TriangleMesh Grid(int n, double step, bool flat) {
  TriangleMesh m;
  for (int j = 0; j <= n; ++j) {
    for (int i = 0; i <= n; ++i) {
      const double x = i * step, y = j * step;
      m.vertices.emplace_back(x, y, flat ? 0.0 : 0.25 * std::sin(x) * std::cos(0.7 * y));
    }
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

// A closed surface: a UV sphere (rings × segments, two poles) with every vertex at a random
// radius in [0.7, 1.3], triangles counter-clockwise seen from outside.
TriangleMesh RandomClosedMesh(int rings, int segments, std::mt19937& rng) {
  std::uniform_real_distribution<double> radius(0.7, 1.3);
  TriangleMesh m;
  const double pi = std::acos(-1.0);
  m.vertices.push_back(radius(rng) * Vector3d(0, 0, -1));
  for (int r = 1; r < rings; ++r) {
    const double theta = pi * r / rings;
    for (int s = 0; s < segments; ++s) {
      const double phi = 2 * pi * s / segments;
      m.vertices.push_back(radius(rng) * Vector3d(std::sin(theta) * std::cos(phi),
                                                  std::sin(theta) * std::sin(phi),
                                                  -std::cos(theta)));
    }
  }
  const int top = static_cast<int>(m.vertices.size());
  m.vertices.push_back(radius(rng) * Vector3d(0, 0, 1));
  const auto at = [&](int r, int s) { return 1 + (r - 1) * segments + (s % segments); };
  for (int s = 0; s < segments; ++s) m.triangles.push_back({0, at(1, s + 1), at(1, s)});
  for (int r = 1; r + 1 < rings; ++r) {
    for (int s = 0; s < segments; ++s) {
      m.triangles.push_back({at(r, s), at(r, s + 1), at(r + 1, s + 1)});
      m.triangles.push_back({at(r, s), at(r + 1, s + 1), at(r + 1, s)});
    }
  }
  for (int s = 0; s < segments; ++s) {
    m.triangles.push_back({top, at(rings - 1, s), at(rings - 1, s + 1)});
  }
  return m;
}

TEST(MeshQuery, ShapeBuildsTheIndexOnceAndCopiesShareIt) {
  const Shape shape = Shape::TriangleMeshSurface(Grid(4, 0.5, true));
  ASSERT_TRUE(HasMeshIndex(shape.mesh()));
  const Shape copy = shape;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.mesh().index.get(), shape.mesh().index.get());
  // A copy of the mesh (new buffers) does not use the index built for the shape's buffers.
  const TriangleMesh mesh_copy = shape.mesh();
  EXPECT_FALSE(HasMeshIndex(mesh_copy));
}

TEST(MeshQuery, BowlMatchesBruteForceBitForBit) {
  std::mt19937 rng(11);
  const Shape bowl = Shape::TriangleMeshFromFile(ExamplePath("bowl.obj"));
  // Offsets: 1e-3 m (near, both sides of the 0.5 m bowl), far: 20 times the bowl's extent.
  const Counts c = ExpectSameQueries(bowl, TestPoints(bowl.mesh(), 1e-3, 20.0, 2000, rng));
  // The points must reach the edge and vertex regions and ties, where the rules matter.
  EXPECT_GT(c.edges, 100);
  EXPECT_GT(c.vertices, 100);
  EXPECT_GT(c.ties, 100);
}

TEST(MeshQuery, GridFloorsMatchBruteForceBitForBit) {
  std::mt19937 rng(12);
  const Shape floor = Shape::TriangleMeshFromFile(ExamplePath("grid_floor.obj"));
  Counts c = ExpectSameQueries(floor, TestPoints(floor.mesh(), 0.25, 4.0, 500, rng));
  EXPECT_GT(c.ties, 50);
  // A larger flat grid (2048 triangles, a deep tree) and a wavy one, with dyadic coordinates:
  // exact ties at every vertex and edge.
  const Shape flat = Shape::TriangleMeshSurface(Grid(32, 0.125, true));
  c = ExpectSameQueries(flat, TestPoints(flat.mesh(), 0.0625, 3.0, 500, rng, 150));
  EXPECT_GT(c.ties, 500);
  const Shape wavy = Shape::TriangleMeshSurface(Grid(24, 0.25, false));
  c = ExpectSameQueries(wavy, TestPoints(wavy.mesh(), 0.01, 3.0, 500, rng, 150));
  EXPECT_GT(c.vertices, 100);
}

TEST(MeshQuery, RandomClosedMeshMatchesBruteForceBitForBit) {
  std::mt19937 rng(13);
  const Shape closed = Shape::TriangleMeshSurface(RandomClosedMesh(16, 24, rng));
  const Counts c = ExpectSameQueries(closed, TestPoints(closed.mesh(), 0.05, 10.0, 2000, rng));
  EXPECT_GT(c.edges, 100);
  EXPECT_GT(c.vertices, 100);
}

// Slivers (twice the area α L², L = 1) seen from up to 3000 L away: the face-region closest point
// carries the most round-off there, which the tree's pruning margin must cover (geometry3d.h,
// BuildMeshIndex).
TEST(MeshQuery, SliversSeenFromFarMatchBruteForceBitForBit) {
  std::mt19937 rng(14);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double alpha : {1e-2, 1e-3, 1e-4, 1e-5}) {
    TriangleMesh m;
    for (int k = 0; k < 200; ++k) {
      const Vector3d a(u(rng), u(rng), u(rng));
      const Vector3d d = Vector3d(u(rng), u(rng), u(rng)).normalized();
      const Vector3d e = d.cross(Vector3d(u(rng), u(rng), u(rng))).normalized();
      const int base = static_cast<int>(m.vertices.size());
      m.vertices.push_back(a);
      m.vertices.push_back(a + d);
      m.vertices.push_back(a + 0.5 * d + alpha * e);
      m.triangles.push_back({base, base + 1, base + 2});
    }
    const Shape slivers = Shape::TriangleMeshSurface(m);
    std::vector<Vector3d> points;
    for (double distance : {0.5, 3.0, 30.0, 300.0, 3000.0}) {
      for (int k = 0; k < 400; ++k) points.push_back(distance * Vector3d(u(rng), u(rng), u(rng)));
    }
    ExpectSameQueries(slivers, points);
  }
}

}  // namespace
}  // namespace saltus::contact
