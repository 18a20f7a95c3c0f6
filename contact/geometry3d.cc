#include "contact/geometry3d.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "contact/fcl_backend.h"

namespace saltus::contact {
namespace {

using Eigen::Isometry3d;
using Eigen::Vector3d;

PairDistance Swapped(PairDistance d) {
  std::swap(d.point_a, d.point_b);
  d.normal = -d.normal;
  return d;
}

// Two "cores" (points) x_a, x_b inflated by radii r_a, r_b (spheres, capsule segments, a
// triangle mesh with r_a = 0). `fallback` is the normal used when the cores coincide.
PairDistance Inflated(const Vector3d& x_a, double r_a, const Vector3d& x_b, double r_b,
                      const Vector3d& fallback) {
  PairDistance d;
  const Vector3d delta = x_b - x_a;
  const double dist = delta.norm();
  d.normal = dist > 0.0 ? Vector3d(delta / dist) : fallback;
  d.gap = dist - r_a - r_b;
  d.point_a = x_a + r_a * d.normal;
  d.point_b = x_b - r_b * d.normal;
  d.analytic = true;
  return d;
}

// Closest point of segment [p, q] to x.
Vector3d ClosestOnSegment(const Vector3d& x, const Vector3d& p, const Vector3d& q) {
  const Vector3d e = q - p;
  const double ee = e.squaredNorm();
  if (!(ee > 0.0)) return p;
  const double s = std::clamp(e.dot(x - p) / ee, 0.0, 1.0);
  return p + s * e;
}

// Closest points of segments [p1, q1] and [p2, q2] (Ericson 2005, Section 5.1.9).
void ClosestSegmentSegment(const Vector3d& p1, const Vector3d& q1, const Vector3d& p2,
                           const Vector3d& q2, Vector3d& c1, Vector3d& c2) {
  const Vector3d d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  double s = 0.0, t = 0.0;
  if (!(a > 0.0) && !(e > 0.0)) {
    c1 = p1;
    c2 = p2;
    return;
  }
  if (!(a > 0.0)) {
    t = std::clamp(f / e, 0.0, 1.0);
  } else {
    const double c = d1.dot(r);
    if (!(e > 0.0)) {
      s = std::clamp(-c / a, 0.0, 1.0);
    } else {
      const double b = d1.dot(d2), denom = a * e - b * b;
      // Parallel segments (denom = 0): any s works; s = 0 then clamps t.
      s = denom > 0.0 ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
      t = (b * s + f) / e;
      if (t < 0.0) {
        t = 0.0;
        s = std::clamp(-c / a, 0.0, 1.0);
      } else if (t > 1.0) {
        t = 1.0;
        s = std::clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  c1 = p1 + s * d1;
  c2 = p2 + t * d2;
}

Vector3d AnyPerpendicular(const Vector3d& u) {
  const Vector3d w = std::abs(u.x()) < 0.9 ? Vector3d::UnitX() : Vector3d::UnitY();
  return u.cross(w).normalized();
}

// Plane (shape a, world pose X_a) against convex shape b (world pose X_b).
PairDistance PlaneConvex(const Shape& plane, const Isometry3d& X_a, const Shape& b,
                         const Isometry3d& X_b) {
  const Vector3d n = X_a.linear() * plane.plane_normal();
  const double offset = plane.plane_offset() + n.dot(X_a.translation());
  PairDistance d;
  d.normal = n;
  d.point_b = X_b * b.Support(X_b.linear().transpose() * (-n));
  d.gap = n.dot(d.point_b) - offset;
  d.point_a = d.point_b - d.gap * n;
  d.analytic = true;
  return d;
}

// Plane against a triangle mesh: its lowest vertex.
PairDistance PlaneMesh(const Shape& plane, const Isometry3d& X_a, const Shape& b,
                       const Isometry3d& X_b) {
  const Vector3d n = X_a.linear() * plane.plane_normal();
  const double offset = plane.plane_offset() + n.dot(X_a.translation());
  PairDistance d;
  d.normal = n;
  d.gap = std::numeric_limits<double>::infinity();
  for (const Vector3d& x : b.mesh().vertices) {
    const Vector3d y = X_b * x;
    const double gap = n.dot(y) - offset;
    if (gap < d.gap) {
      d.gap = gap;
      d.point_b = y;
    }
  }
  d.point_a = d.point_b - d.gap * n;
  d.analytic = true;
  return d;
}

// Box a against sphere b: the box–centre distance minus the radius.
PairDistance BoxSphere(const Shape& box, const Isometry3d& X_a, const Shape& sphere,
                       const Isometry3d& X_b) {
  PairDistance d = BoxPointDistance(box.half_size(), X_a, X_b.translation());
  d.gap -= sphere.radius();
  d.point_b -= sphere.radius() * d.normal;
  return d;
}

void Segment(const Shape& capsule, const Isometry3d& X, Vector3d& p, Vector3d& q) {
  const Vector3d half = X.linear().col(2) * (0.5 * capsule.length());
  p = X.translation() - half;
  q = X.translation() + half;
}

// Triangle mesh a (a surface, no inside) against sphere b: the signed distance of the centre
// minus the radius (MeshPointDistance).
PairDistance MeshSphere(const Shape& mesh, const Isometry3d& X_a, const Shape& sphere,
                        const Isometry3d& X_b) {
  PairDistance d = MeshPointDistance(mesh.mesh(), X_a, X_b.translation());
  d.gap -= sphere.radius();
  d.point_b -= sphere.radius() * d.normal;
  return d;
}

// The analytic path for (a, b) if there is one (sets `done`), in the order given.
PairDistance Analytic(const Shape& a, const Isometry3d& X_a, const Shape& b, const Isometry3d& X_b,
                      bool& done) {
  done = true;
  const ShapeType ta = a.type(), tb = b.type();
  if (ta == ShapeType::kPlane && b.is_convex()) return PlaneConvex(a, X_a, b, X_b);
  if (ta == ShapeType::kPlane && tb == ShapeType::kTriangleMesh) return PlaneMesh(a, X_a, b, X_b);
  if (ta == ShapeType::kSphere && tb == ShapeType::kSphere) {
    return Inflated(X_a.translation(), a.radius(), X_b.translation(), b.radius(),
                    Vector3d::UnitZ());
  }
  if (ta == ShapeType::kBox && tb == ShapeType::kSphere) return BoxSphere(a, X_a, b, X_b);
  if (ta == ShapeType::kCapsule && tb == ShapeType::kSphere) {
    Vector3d p, q;
    Segment(a, X_a, p, q);
    const Vector3d c = X_b.translation();
    const Vector3d axis = (q - p).squaredNorm() > 0.0 ? Vector3d((q - p).normalized())
                                                      : Vector3d(X_a.linear().col(2));
    return Inflated(ClosestOnSegment(c, p, q), a.radius(), c, b.radius(), AnyPerpendicular(axis));
  }
  if (ta == ShapeType::kCapsule && tb == ShapeType::kCapsule) {
    Vector3d p1, q1, p2, q2, c1, c2;
    Segment(a, X_a, p1, q1);
    Segment(b, X_b, p2, q2);
    ClosestSegmentSegment(p1, q1, p2, q2, c1, c2);
    Vector3d fallback = X_a.linear().col(2).cross(X_b.linear().col(2));
    fallback = fallback.norm() > 0.0 ? Vector3d(fallback.normalized())
                                     : AnyPerpendicular(X_a.linear().col(2));
    return Inflated(c1, a.radius(), c2, b.radius(), fallback);
  }
  if (ta == ShapeType::kTriangleMesh && tb == ShapeType::kSphere) return MeshSphere(a, X_a, b, X_b);
  done = false;
  return {};
}

}  // namespace

PairDistance BoxPointDistance(const Vector3d& h, const Isometry3d& X_box, const Vector3d& p,
                              PointNormalRegion* region) {
  const Vector3d c = X_box.inverse() * p;  // the point in the box frame
  const Vector3d clamped = c.cwiseMax(-h).cwiseMin(h);
  PairDistance d;
  if (region != nullptr) *region = PointNormalRegion{};
  if ((c - clamped).squaredNorm() > 0.0) {
    d = Inflated(clamped, 0.0, c, 0.0, Vector3d::UnitZ());
    if (region != nullptr) {
      int outside = 0, inside_axis = 0;
      for (int i = 0; i < 3; ++i) {
        if (c(i) != clamped(i)) {
          ++outside;
        } else {
          inside_axis = i;
        }
      }
      if (outside == 2) {
        region->kind = PointNormalRegion::kEdge;
        region->edge = X_box.linear().col(inside_axis);
      } else if (outside == 3) {
        region->kind = PointNormalRegion::kVertex;
      }
    }
  } else {
    int axis = 0;
    double depth = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 3; ++i) {
      const double depth_i = h(i) - std::abs(c(i));
      if (depth_i < depth) {
        depth = depth_i;
        axis = i;
      }
    }
    const double side = c(axis) < 0.0 ? -1.0 : 1.0;
    d.normal = side * Vector3d::Unit(axis);
    d.point_a = c;
    d.point_a(axis) = side * h(axis);
    d.gap = -depth;
    d.point_b = c;
  }
  d.normal = X_box.linear() * d.normal;
  d.point_a = X_box * d.point_a;
  d.point_b = p;
  d.analytic = true;
  return d;
}

Vector3d ClosestPointOnTriangle(const Vector3d& p, const Vector3d& a, const Vector3d& b,
                                const Vector3d& c, TriangleFeature* feature) {
  TriangleFeature unused;
  TriangleFeature& f = feature != nullptr ? *feature : unused;
  const auto vertex = [&](int i) {
    f.kind = TriangleFeature::kVertex;
    f.vertices[0] = f.vertices[1] = i;
  };
  const auto edge = [&](int i, int j) {
    f.kind = TriangleFeature::kEdge;
    f.vertices[0] = i;
    f.vertices[1] = j;
  };
  const Vector3d ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) {
    vertex(0);
    return a;
  }
  const Vector3d bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) {
    vertex(1);
    return b;
  }
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    edge(0, 1);
    return a + (d1 / (d1 - d3)) * ab;
  }
  const Vector3d cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) {
    vertex(2);
    return c;
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    edge(0, 2);
    return a + (d2 / (d2 - d6)) * ac;
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    edge(1, 2);
    return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  }
  f.kind = TriangleFeature::kFace;
  const double denom = 1.0 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

// The index's data (declared in shapes.h, built by BuildMeshIndex).
struct MeshIndex {
  // A box of the tree: a leaf holds order[first, first + count), an inner node (count = 0) has
  // its children at nodes[first] and nodes[first + 1].
  struct Node {
    std::array<double, 3> lo, hi;
    int first = 0;
    int count = 0;
  };
  std::vector<Node> nodes;
  std::vector<int> order;  // triangle indices, grouped by leaf
  double scale = 0.0;      // M: the largest |coordinate| of a vertex
  // The triangles at vertex v: vertex_triangles[vertex_start[v], vertex_start[v + 1]), ascending.
  std::vector<int> vertex_start;
  std::vector<int> vertex_triangles;
  std::vector<Eigen::Vector3d> normals;        // unit normal of each triangle
  std::vector<Eigen::Vector3d> vertex_pseudo;  // angle-weighted sum of the normals at each vertex
  std::vector<char> vertex_boundary;           // an edge at the vertex has < 2 triangles
  // The mesh it was built from.
  const Eigen::Vector3d* vertices_data = nullptr;
  std::size_t num_vertices = 0;
  const std::array<int, 3>* triangles_data = nullptr;
  std::size_t num_triangles = 0;
};

namespace {

// Relative margin ε of the tree's pruning bound (geometry3d.h, BuildMeshIndex).
constexpr double kPruneMargin = 1e-7;
// Most triangles in a leaf of the tree.
constexpr int kLeafTriangles = 4;

const Vector3d& Vertex(const TriangleMesh& m, const std::array<int, 3>& t, int k) {
  return m.vertices[static_cast<std::size_t>(t[static_cast<std::size_t>(k)])];
}

// Unit normal of a triangle, (v1 − v0) × (v2 − v0) normalized.
Vector3d TriangleNormal(const TriangleMesh& m, const std::array<int, 3>& t) {
  return (Vertex(m, t, 1) - Vertex(m, t, 0)).cross(Vertex(m, t, 2) - Vertex(m, t, 0)).normalized();
}

// Squared distance from p to triangle f, its closest point x and region: the one per-triangle
// computation of the brute-force loop and of the tree (not inlined, so that both run exactly the
// same instructions).
[[gnu::noinline]] double TriangleDistance2(const TriangleMesh& m, std::size_t f, const Vector3d& p,
                                           Vector3d& x, TriangleFeature& feature) {
  const auto& t = m.triangles[f];
  x = ClosestPointOnTriangle(p, Vertex(m, t, 0), Vertex(m, t, 1), Vertex(m, t, 2), &feature);
  return (x - p).squaredNorm();
}

const MeshIndex* IndexOf(const TriangleMesh& m) {
  const MeshIndex* index = m.index.get();
  if (index == nullptr || index->vertices_data != m.vertices.data() ||
      index->num_vertices != m.vertices.size() || index->triangles_data != m.triangles.data() ||
      index->num_triangles != m.triangles.size()) {
    return nullptr;
  }
  return index;
}

// Squared distance from p to the box of a node (0 inside).
double BoxDistance2(const MeshIndex::Node& node, const Vector3d& p) {
  double sum = 0.0;
  for (std::size_t k = 0; k < 3; ++k) {
    const double below = node.lo[k] - p(static_cast<Eigen::Index>(k));
    const double above = p(static_cast<Eigen::Index>(k)) - node.hi[k];
    const double d = below > 0.0 ? below : (above > 0.0 ? above : 0.0);
    sum += d * d;
  }
  return sum;
}

// Builds the subtree of order[begin, end) into nodes[at].
void BuildNode(const TriangleMesh& m, const std::vector<Vector3d>& centroids, MeshIndex& index,
               std::size_t at, int begin, int end) {
  MeshIndex::Node node;
  node.lo.fill(std::numeric_limits<double>::infinity());
  node.hi.fill(-std::numeric_limits<double>::infinity());
  Vector3d c_lo = Vector3d::Constant(std::numeric_limits<double>::infinity());
  Vector3d c_hi = -c_lo;
  for (int i = begin; i < end; ++i) {
    const int f = index.order[static_cast<std::size_t>(i)];
    const auto& t = m.triangles[static_cast<std::size_t>(f)];
    for (int k = 0; k < 3; ++k) {
      const Vector3d& x = Vertex(m, t, k);
      for (std::size_t a = 0; a < 3; ++a) {
        node.lo[a] = std::min(node.lo[a], x(static_cast<Eigen::Index>(a)));
        node.hi[a] = std::max(node.hi[a], x(static_cast<Eigen::Index>(a)));
      }
    }
    c_lo = c_lo.cwiseMin(centroids[static_cast<std::size_t>(f)]);
    c_hi = c_hi.cwiseMax(centroids[static_cast<std::size_t>(f)]);
  }
  if (end - begin <= kLeafTriangles) {
    node.first = begin;
    node.count = end - begin;
    index.nodes[at] = node;
    return;
  }
  Eigen::Index axis = 0;
  (c_hi - c_lo).maxCoeff(&axis);
  const int mid = begin + (end - begin) / 2;
  std::nth_element(index.order.begin() + begin, index.order.begin() + mid,
                   index.order.begin() + end, [&](int a, int b) {
                     const double ca = centroids[static_cast<std::size_t>(a)](axis);
                     const double cb = centroids[static_cast<std::size_t>(b)](axis);
                     return ca < cb || (ca == cb && a < b);
                   });
  const std::size_t left = index.nodes.size();
  index.nodes.resize(left + 2);
  node.first = static_cast<int>(left);
  node.count = 0;
  index.nodes[at] = node;
  BuildNode(m, centroids, index, left, begin, mid);
  BuildNode(m, centroids, index, left + 1, mid, end);
}

MeshClosest ClosestPointBruteForce(const TriangleMesh& m, const Vector3d& p) {
  MeshClosest out;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t f = 0; f < m.triangles.size(); ++f) {
    TriangleFeature feature;
    Vector3d x;
    const double dist2 = TriangleDistance2(m, f, p, x, feature);
    if (dist2 < best) {
      best = dist2;
      out.point = x;
      out.triangle = static_cast<int>(f);
      out.feature = feature;
    }
  }
  return out;
}

MeshClosest ClosestPointWithIndex(const TriangleMesh& m, const MeshIndex& index,
                                  const Vector3d& p) {
  MeshClosest out;
  double best = std::numeric_limits<double>::infinity();
  int best_triangle = -1;
  double bound2 = std::numeric_limits<double>::infinity();  // boxes farther than this are skipped
  // Depth first, nearer child first; a median-split tree has depth ≤ log2(T) + 1 < 64, and the
  // stack holds at most one entry per level plus one.
  std::array<int, 128> stack;
  std::size_t size = 0;
  stack[size++] = 0;
  while (size > 0) {
    const MeshIndex::Node& node = index.nodes[static_cast<std::size_t>(stack[--size])];
    if (BoxDistance2(node, p) > bound2) continue;
    if (node.count == 0) {
      const int a = node.first, b = node.first + 1;
      const double da = BoxDistance2(index.nodes[static_cast<std::size_t>(a)], p);
      const double db = BoxDistance2(index.nodes[static_cast<std::size_t>(b)], p);
      const bool a_nearer = !(db < da);
      if (!((a_nearer ? db : da) > bound2)) stack[size++] = a_nearer ? b : a;
      if (!((a_nearer ? da : db) > bound2)) stack[size++] = a_nearer ? a : b;
      continue;
    }
    for (int i = node.first; i < node.first + node.count; ++i) {
      const int f = index.order[static_cast<std::size_t>(i)];
      TriangleFeature feature;
      Vector3d x;
      const double dist2 = TriangleDistance2(m, static_cast<std::size_t>(f), p, x, feature);
      // (dist2, f) < (best, best_triangle) lexicographically; never at dist2 = ∞ or NaN, like
      // the brute force.
      if (dist2 < best || (dist2 == best && f < best_triangle)) {
        best = dist2;
        best_triangle = f;
        out.point = x;
        out.triangle = f;
        out.feature = feature;
        const double dist = std::sqrt(best);
        const double reach = dist + kPruneMargin * (dist + index.scale);
        bound2 = reach * reach;
      }
    }
  }
  return out;
}

}  // namespace

std::shared_ptr<const MeshIndex> BuildMeshIndex(const TriangleMesh& m) {
  auto index = std::make_shared<MeshIndex>();
  const std::size_t nt = m.triangles.size(), nv = m.vertices.size();
  index->vertices_data = m.vertices.data();
  index->num_vertices = nv;
  index->triangles_data = m.triangles.data();
  index->num_triangles = nt;
  for (const Vector3d& x : m.vertices) {
    index->scale = std::max(index->scale, x.cwiseAbs().maxCoeff());
  }
  // The tree.
  if (nt > 0) {
    std::vector<Vector3d> centroids(nt);
    for (std::size_t f = 0; f < nt; ++f) {
      const auto& t = m.triangles[f];
      centroids[f] = (Vertex(m, t, 0) + Vertex(m, t, 1) + Vertex(m, t, 2)) / 3.0;
    }
    index->order.resize(nt);
    for (std::size_t f = 0; f < nt; ++f) index->order[f] = static_cast<int>(f);
    index->nodes.reserve(2 * (nt / static_cast<std::size_t>(kLeafTriangles) + 1));
    index->nodes.resize(1);
    BuildNode(m, centroids, *index, 0, 0, static_cast<int>(nt));
  }
  // The triangles at each vertex, ascending (a counting sort over the triangles in order); a
  // vertex listed twice in a triangle counts once (the brute force tests membership).
  const auto distinct = [](const std::array<int, 3>& t, int k) {
    return !((k > 0 && t[static_cast<std::size_t>(k)] == t[0]) ||
             (k > 1 && t[static_cast<std::size_t>(k)] == t[1]));
  };
  index->vertex_start.assign(nv + 1, 0);
  for (const auto& t : m.triangles) {
    for (int k = 0; k < 3; ++k) {
      if (distinct(t, k)) {
        ++index->vertex_start[static_cast<std::size_t>(t[static_cast<std::size_t>(k)]) + 1];
      }
    }
  }
  for (std::size_t v = 0; v < nv; ++v) index->vertex_start[v + 1] += index->vertex_start[v];
  index->vertex_triangles.resize(static_cast<std::size_t>(index->vertex_start[nv]));
  std::vector<int> fill(index->vertex_start.begin(), index->vertex_start.end() - 1);
  for (std::size_t f = 0; f < nt; ++f) {
    const auto& t = m.triangles[f];
    for (int k = 0; k < 3; ++k) {
      if (!distinct(t, k)) continue;
      const auto v = static_cast<std::size_t>(t[static_cast<std::size_t>(k)]);
      index->vertex_triangles[static_cast<std::size_t>(fill[v]++)] = static_cast<int>(f);
    }
  }
  index->normals.resize(nt);
  for (std::size_t f = 0; f < nt; ++f) index->normals[f] = TriangleNormal(m, m.triangles[f]);
  const auto contains = [&](int f, int v) {
    const auto& t = m.triangles[static_cast<std::size_t>(f)];
    return t[0] == v || t[1] == v || t[2] == v;
  };
  // Number of triangles with the edge (a, b).
  const auto shared = [&](int a, int b) {
    int count = 0;
    for (int s = index->vertex_start[static_cast<std::size_t>(a)];
         s < index->vertex_start[static_cast<std::size_t>(a) + 1]; ++s) {
      count += contains(index->vertex_triangles[static_cast<std::size_t>(s)], b) ? 1 : 0;
    }
    return count;
  };
  // Each vertex's pseudo-normal sum and boundary flag: MeshPseudoNormal's brute-force loops.
  index->vertex_pseudo.assign(nv, Vector3d::Zero());
  index->vertex_boundary.assign(nv, 0);
  for (std::size_t v = 0; v < nv; ++v) {
    const int i = static_cast<int>(v);
    Vector3d pseudo = Vector3d::Zero();
    bool boundary = false;
    for (int s = index->vertex_start[v]; s < index->vertex_start[v + 1]; ++s) {
      const auto& tri = m.triangles[static_cast<std::size_t>(index->vertex_triangles[s])];
      int at_i = -1;
      for (int k = 0; k < 3; ++k) {
        if (tri[static_cast<std::size_t>(k)] == i) at_i = k;
      }
      const Vector3d& x = m.vertices[v];
      const Vector3d e1 = Vertex(m, tri, (at_i + 1) % 3) - x;
      const Vector3d e2 = Vertex(m, tri, (at_i + 2) % 3) - x;
      pseudo += std::atan2(e1.cross(e2).norm(), e1.dot(e2)) * TriangleNormal(m, tri);
      for (int k = 0; k < 3 && !boundary; ++k) {
        if (tri[static_cast<std::size_t>(k)] != i) continue;
        boundary = shared(i, tri[static_cast<std::size_t>((k + 1) % 3)]) < 2 ||
                   shared(i, tri[static_cast<std::size_t>((k + 2) % 3)]) < 2;
      }
    }
    index->vertex_pseudo[v] = pseudo;
    index->vertex_boundary[v] = boundary ? 1 : 0;
  }
  return index;
}

bool HasMeshIndex(const TriangleMesh& mesh) { return IndexOf(mesh) != nullptr; }

MeshClosest ClosestPointOnMesh(const TriangleMesh& m, const Vector3d& p) {
  const MeshIndex* index = IndexOf(m);
  if (index == nullptr || index->nodes.empty()) return ClosestPointBruteForce(m, p);
  return ClosestPointWithIndex(m, *index, p);
}

Vector3d MeshPseudoNormal(const TriangleMesh& m, const MeshClosest& closest, bool* boundary) {
  const auto& t = m.triangles[static_cast<std::size_t>(closest.triangle)];
  const auto normal = [&](const std::array<int, 3>& tri) { return TriangleNormal(m, tri); };
  bool unused = false;
  bool& on_boundary = boundary != nullptr ? *boundary : unused;
  on_boundary = false;
  if (closest.feature.kind == TriangleFeature::kFace) return normal(t);
  const int i = t[static_cast<std::size_t>(closest.feature.vertices[0])];
  const int j = t[static_cast<std::size_t>(closest.feature.vertices[1])];
  if (const MeshIndex* index = IndexOf(m)) {
    // The brute-force sums below, over the triangles at vertex i in the same (ascending) order.
    const auto v = static_cast<std::size_t>(i);
    Vector3d pseudo = Vector3d::Zero();
    if (closest.feature.kind == TriangleFeature::kEdge) {
      int count = 0;
      for (int s = index->vertex_start[v]; s < index->vertex_start[v + 1]; ++s) {
        const int f = index->vertex_triangles[static_cast<std::size_t>(s)];
        const auto& tri = m.triangles[static_cast<std::size_t>(f)];
        if (tri[0] != j && tri[1] != j && tri[2] != j) continue;
        pseudo += index->normals[static_cast<std::size_t>(f)];
        ++count;
      }
      on_boundary = count < 2;
    } else {
      pseudo = index->vertex_pseudo[v];
      on_boundary = index->vertex_boundary[v] != 0;
    }
    const double length = pseudo.norm();
    return on_boundary || !(length > 0.0) ? normal(t) : Vector3d(pseudo / length);
  }
  // Sum of the normals of the triangles at the edge, or angle-weighted at the vertex.
  Vector3d pseudo = Vector3d::Zero();
  for (const auto& tri : m.triangles) {
    int at_i = -1, at_j = -1;
    for (int k = 0; k < 3; ++k) {
      if (tri[static_cast<std::size_t>(k)] == i) at_i = k;
      if (tri[static_cast<std::size_t>(k)] == j) at_j = k;
    }
    if (at_i < 0 || at_j < 0) continue;
    if (closest.feature.kind == TriangleFeature::kEdge) {
      pseudo += normal(tri);
      continue;
    }
    const Vector3d& x = m.vertices[static_cast<std::size_t>(i)];
    const Vector3d e1 =
        m.vertices[static_cast<std::size_t>(tri[static_cast<std::size_t>((at_i + 1) % 3)])] - x;
    const Vector3d e2 =
        m.vertices[static_cast<std::size_t>(tri[static_cast<std::size_t>((at_i + 2) % 3)])] - x;
    pseudo += std::atan2(e1.cross(e2).norm(), e1.dot(e2)) * normal(tri);
  }
  // Boundary: an edge at the feature shared by fewer than two triangles.
  const auto shared = [&](int a, int b) {
    int count = 0;
    for (const auto& tri : m.triangles) {
      bool has_a = false, has_b = false;
      for (int k : tri) {
        has_a = has_a || k == a;
        has_b = has_b || k == b;
      }
      count += (has_a && has_b) ? 1 : 0;
    }
    return count;
  };
  if (closest.feature.kind == TriangleFeature::kEdge) {
    on_boundary = shared(i, j) < 2;
  } else {
    for (const auto& tri : m.triangles) {
      for (int k = 0; k < 3 && !on_boundary; ++k) {
        if (tri[static_cast<std::size_t>(k)] != i) continue;
        on_boundary = shared(i, tri[static_cast<std::size_t>((k + 1) % 3)]) < 2 ||
                      shared(i, tri[static_cast<std::size_t>((k + 2) % 3)]) < 2;
      }
    }
  }
  const double length = pseudo.norm();
  return on_boundary || !(length > 0.0) ? normal(t) : Vector3d(pseudo / length);
}

double MeshPointSide(const TriangleMesh& m, const MeshClosest& closest, const Vector3d& p) {
  bool boundary = false;
  const Vector3d pseudo = MeshPseudoNormal(m, closest, &boundary);
  if (boundary) return 1.0;
  return pseudo.dot(p - closest.point) < 0.0 ? -1.0 : 1.0;
}

PairDistance MeshPointDistance(const TriangleMesh& m, const Isometry3d& X_mesh, const Vector3d& p,
                               PointNormalRegion* region) {
  const Vector3d c = X_mesh.inverse() * p;
  const MeshClosest closest = ClosestPointOnMesh(m, c);
  const Vector3d delta = c - closest.point;
  const double dist = delta.norm();
  PairDistance d;
  if (region != nullptr) *region = PointNormalRegion{};
  if (closest.feature.kind == TriangleFeature::kFace || dist <= kMeshNearFeature) {
    // g = N·(c − x) with N the face normal or, within kMeshNearFeature of an edge or vertex, its
    // pseudo-normal: smooth through 0, the normal fixed in the mesh.
    d.normal = MeshPseudoNormal(m, closest, nullptr);
    d.gap = d.normal.dot(delta);
  } else {
    const double side = MeshPointSide(m, closest, c);
    d.normal = side * delta / dist;
    d.gap = side * dist;
    if (region != nullptr) {
      const auto& tri = m.triangles[static_cast<std::size_t>(closest.triangle)];
      const auto vertex = [&](int k) -> const Vector3d& {
        return m.vertices[static_cast<std::size_t>(tri[static_cast<std::size_t>(k)])];
      };
      const Vector3d n_f = (vertex(1) - vertex(0)).cross(vertex(2) - vertex(0)).normalized();
      // A flat edge or vertex (every triangle around it coplanar, not on an open boundary): its
      // region has no width, the point is on the boundary of the face regions: kFixed.
      bool boundary = false;
      const Vector3d pseudo = MeshPseudoNormal(m, closest, &boundary);
      constexpr double kFlat = 1e-12;
      if (boundary || pseudo.dot(n_f) < 1.0 - kFlat) {
        if (closest.feature.kind == TriangleFeature::kEdge) {
          region->kind = PointNormalRegion::kEdge;
          region->edge = X_mesh.linear() *
                         (vertex(closest.feature.vertices[1]) - vertex(closest.feature.vertices[0]))
                             .normalized();
        } else {
          region->kind = PointNormalRegion::kVertex;
        }
      }
    }
  }
  d.normal = X_mesh.linear() * d.normal;
  d.point_b = p;
  d.point_a = p - d.gap * d.normal;
  d.analytic = true;
  return d;
}

bool HasAnalyticPath(ShapeType a, ShapeType b) {
  const auto one_way = [](ShapeType x, ShapeType y) {
    if (x == ShapeType::kPlane) return y != ShapeType::kPlane;
    if (x == ShapeType::kSphere) {
      return y == ShapeType::kSphere || y == ShapeType::kBox || y == ShapeType::kCapsule ||
             y == ShapeType::kTriangleMesh;
    }
    return x == ShapeType::kCapsule && y == ShapeType::kCapsule;
  };
  return one_way(a, b) || one_way(b, a);
}

namespace {

PairDistance FclQuery(const Shape& a, const Isometry3d& X_WSa, const Shape& b,
                      const Isometry3d& X_WSb, double tolerance, bool indep, bool signed_distance) {
  const FclBackend& fcl = Fcl();
  const FclBackend::Distance result = fcl.Query(a.fcl_geometry(), X_WSa, b.fcl_geometry(), X_WSb,
                                                tolerance, indep, signed_distance);
  PairDistance d;
  d.gap = result.distance;
  d.point_a = result.point_a;
  d.point_b = result.point_b;
  const Vector3d delta = d.point_b - d.point_a;
  // Below 1e-12 the witness points coincide to round-off and their difference has no direction.
  if (std::abs(d.gap) > 1e-12 && delta.norm() > 1e-12) {
    d.normal = delta / d.gap;
    d.normal.normalize();
  } else {
    const FclBackend::Contact contact =
        fcl.Collide(a.fcl_geometry(), X_WSa, b.fcl_geometry(), X_WSb, indep);
    if (contact.found) {
      d.normal = contact.normal.normalized();  // FCL: from o1 to o2
    } else {
      // Touching without overlap: the direction between the shape centres is the best guess.
      const Vector3d centres = X_WSb.translation() - X_WSa.translation();
      d.normal = centres.norm() > 0.0 ? Vector3d(centres.normalized()) : Vector3d::UnitZ();
    }
  }
  d.analytic = false;
  return d;
}

// For separated convex shapes: the witness distance |p_b − p_a| is an upper bound of the true
// distance, and for the unit normal n the support functions give a lower bound,
//   n·Support_B(−n) − n·Support_A(n) ≤ distance,
// so their difference bounds the error of the gap (it is 0 at the exact solution).
double Bracket(const Shape& a, const Isometry3d& X_a, const Shape& b, const Isometry3d& X_b,
               const PairDistance& d) {
  if (!a.is_convex() || !b.is_convex() || !(d.gap > 0.0)) return 0.0;
  const Vector3d& n = d.normal;
  const Vector3d s_a = X_a * a.Support(X_a.linear().transpose() * n);
  const Vector3d s_b = X_b * b.Support(X_b.linear().transpose() * (-n));
  return (d.point_b - d.point_a).norm() - n.dot(s_b - s_a);
}

}  // namespace

PairDistance FclSignedDistance(const Shape& a, const Isometry3d& X_WSa, const Shape& b,
                               const Isometry3d& X_WSb, const DistanceOptions& options) {
  // Separation first, without FCL's signed-distance (EPA) code: libccd's EPA aborts on an
  // internal assertion (gjk_libccd-inl.h, ComputeVisiblePatch) for some overlapping poses.
  PairDistance d =
      FclQuery(a, X_WSa, b, X_WSb, options.fcl_distance_tolerance, options.fcl_indep_solver, false);
  if (!(d.gap > 0.0)) {
    // Overlap. FCL's signed distance is not usable here: libccd's EPA and the GST_INDEP path
    // both abort on internal assertions for some overlapping poses (FCL 0.7 as packaged keeps
    // its asserts). FCL's collision query (libccd MPR) gives the penetration depth, normal
    // (from A to B) and a contact position midway between the surfaces instead; it is
    // approximate (MPR), adequate for the small penetrations (≥ −τ0) the event loop allows.
    const FclBackend::Contact c =
        Fcl().Collide(a.fcl_geometry(), X_WSa, b.fcl_geometry(), X_WSb, /*indep_solver=*/false);
    PairDistance p;
    const double size = std::min(a.BoundingRadius(), b.BoundingRadius());
    // Below 1e-9 of the size MPR's normal is meaningless (measured: arbitrary directions at a
    // depth of 6e-16 for a cylinder end face touching a box): treated as touching.
    if (c.found && c.depth > 1e-9 * size) {
      p.gap = -c.depth;
      p.normal = c.normal.normalized();
      p.point_a = c.position - 0.5 * p.gap * p.normal;
      p.point_b = c.position + 0.5 * p.gap * p.normal;
    } else {
      // Touching (neither query sees a positive distance nor an overlap): take the witness
      // points and normal of B moved away from A by 1e-4 of the shapes' size along the line of
      // centres (closer, the witness-point normal is ill-conditioned: its error grows like
      // 1e-13/distance); the gap is reported as 0, the normal is off by O(1e-4 × curvature).
      Vector3d away = X_WSb.translation() - X_WSa.translation();
      away = away.norm() > 0.0 ? Vector3d(away.normalized()) : Vector3d::UnitZ();
      Isometry3d X_moved = X_WSb;
      X_moved.translation() += 1e-4 * size * away;
      const PairDistance q = FclQuery(a, X_WSa, b, X_moved, options.fcl_distance_tolerance,
                                      options.fcl_indep_solver, false);
      p.gap = 0.0;
      p.normal = q.gap > 0.0 ? q.normal : away;
      p.point_a = q.point_a;
      p.point_b = q.point_a;
    }
    return p;
  }
  d.gap_error = Bracket(a, X_WSa, b, X_WSb, d);
  // libccd leaves a bracket above 1e-12 in ~3% of random separated poses (mostly from its
  // witness points); FCL's own GJK closes most of them. Keep the tighter of the two.
  if (d.gap_error > options.fcl_bracket_tolerance) {
    PairDistance other = FclQuery(a, X_WSa, b, X_WSb, options.fcl_distance_tolerance,
                                  !options.fcl_indep_solver, false);
    other.gap_error = Bracket(a, X_WSa, b, X_WSb, other);
    if (other.gap > 0.0 && other.gap_error < d.gap_error) d = other;
  }
  return d;
}

PairDistance SignedDistance(const Shape& a, const Isometry3d& X_WA, const Shape& b,
                            const Isometry3d& X_WB, const DistanceOptions& options) {
  const bool a_surface = a.type() == ShapeType::kPlane || a.type() == ShapeType::kTriangleMesh;
  const bool b_surface = b.type() == ShapeType::kPlane || b.type() == ShapeType::kTriangleMesh;
  if (a_surface && b_surface) {
    throw std::invalid_argument("SignedDistance: " + a.Label() + " and " + b.Label() +
                                ": pairs of planes or triangle meshes are not supported");
  }
  const Isometry3d X_a = X_WA * a.pose();
  const Isometry3d X_b = X_WB * b.pose();
  if (!options.force_fcl || a.type() == ShapeType::kPlane || b.type() == ShapeType::kPlane) {
    bool done = false;
    PairDistance d = Analytic(a, X_a, b, X_b, done);
    if (done) return d;
    d = Analytic(b, X_b, a, X_a, done);
    if (done) return Swapped(d);
  }
  return FclSignedDistance(a, X_a, b, X_b, options);
}

}  // namespace saltus::contact
