#include "contact/contact_manifold.h"

#include <cmath>
#include <stdexcept>

namespace saltus::contact {
namespace {

using Eigen::Isometry3d;
using Eigen::Vector3d;

// Corner i of the box {|x_j| ≤ h_j}: bit j of i set means +h_j.
Vector3d Corner(const Vector3d& h, int i) {
  return {(i & 1) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(), (i & 4) ? h.z() : -h.z()};
}

PairDistance Swapped(PairDistance d) {
  std::swap(d.point_a, d.point_b);
  d.normal = -d.normal;
  return d;
}

PairDistance OnPlane(const Vector3d& n, double offset, const Vector3d& point_b) {
  PairDistance d;
  d.normal = n;
  d.point_b = point_b;
  d.gap = n.dot(point_b) - offset;
  d.point_a = point_b - d.gap * n;
  d.analytic = true;
  return d;
}

// Unit direction, in the plane of a cylinder's end circles (X_s: the cylinder's pose, axis
// column 2), of the rim point lowest along n: −w/‖w‖ with w = n − (n·e) e. For n ∥ e (‖w‖ ≤
// kUpright) every point of the end face is equally low: the zero vector, i.e. the witness at the
// circle's centre, so that a cylinder standing on an end gets no moment from its row (the gap
// changes by r ‖w‖ ≤ 1e-13 m, continuous to round-off).
constexpr double kUpright = 1e-12;
Vector3d RimDirection(const Vector3d& n, const Isometry3d& X_s) {
  const Vector3d axis = X_s.linear().col(2);
  const Vector3d w = n - n.dot(axis) * axis;
  const double w_norm = w.norm();
  return w_norm > kUpright ? Vector3d(-w / w_norm) : Vector3d(Vector3d::Zero());
}

}  // namespace

ContactManifold::ContactManifold(Shape a, Shape b, DistanceOptions options)
    : a_(std::move(a)), b_(std::move(b)), options_(options) {
  const auto surface = [](const Shape& s) {
    return s.type() == ShapeType::kPlane || s.type() == ShapeType::kTriangleMesh;
  };
  if (surface(a_) && surface(b_)) {
    throw std::invalid_argument("ContactManifold: " + a_.Label() + " and " + b_.Label() +
                                ": pairs of planes or triangle meshes are not supported");
  }
  swapped_ = b_.type() == ShapeType::kPlane || b_.type() == ShapeType::kTriangleMesh;
  const Shape& other = swapped_ ? a_ : b_;
  const bool plane = a_.type() == ShapeType::kPlane || b_.type() == ShapeType::kPlane;
  const bool mesh = a_.type() == ShapeType::kTriangleMesh || b_.type() == ShapeType::kTriangleMesh;
  const auto add = [&](FeatureKind kind, int count) {
    kind_ = kind;
    num_features_ = count;
  };
  if (plane && other.type() == ShapeType::kBox) {
    add(FeatureKind::kPlaneVertex, 8);
  } else if (plane && other.type() == ShapeType::kConvexMesh) {
    add(FeatureKind::kPlaneVertex, static_cast<int>(other.mesh().vertices.size()));
  } else if (plane && other.type() == ShapeType::kCapsule) {
    add(FeatureKind::kPlaneEndBall, 2);
  } else if (plane && other.type() == ShapeType::kCylinder) {
    add(FeatureKind::kPlaneRim, 2);
  } else if (mesh && other.type() == ShapeType::kBox) {
    add(FeatureKind::kMeshVertex, 8);
  } else if (mesh && other.type() == ShapeType::kConvexMesh) {
    add(FeatureKind::kMeshVertex, static_cast<int>(other.mesh().vertices.size()));
  } else if (mesh && other.type() == ShapeType::kCapsule) {
    add(FeatureKind::kMeshEndBall, 2);
  } else if (mesh && other.type() == ShapeType::kEllipsoid) {
    add(FeatureKind::kSurfaceSupport, 1);
  } else if (mesh && other.type() == ShapeType::kCylinder) {
    add(FeatureKind::kSurfaceRim, 2);
  } else if (a_.type() == ShapeType::kBox &&
             (b_.type() == ShapeType::kEllipsoid || b_.type() == ShapeType::kCylinder)) {
    swapped_ = false;
    add(b_.type() == ShapeType::kEllipsoid ? FeatureKind::kSurfaceSupport
                                           : FeatureKind::kSurfaceRim,
        b_.type() == ShapeType::kEllipsoid ? 1 : 2);
  } else if (b_.type() == ShapeType::kBox &&
             (a_.type() == ShapeType::kEllipsoid || a_.type() == ShapeType::kCylinder)) {
    swapped_ = true;
    add(a_.type() == ShapeType::kEllipsoid ? FeatureKind::kSurfaceSupport
                                           : FeatureKind::kSurfaceRim,
        a_.type() == ShapeType::kEllipsoid ? 1 : 2);
  } else if (a_.type() == ShapeType::kBox && b_.type() == ShapeType::kCapsule) {
    swapped_ = false;
    add(FeatureKind::kBoxEndBall, 2);
  } else if (a_.type() == ShapeType::kCapsule && b_.type() == ShapeType::kBox) {
    swapped_ = true;
    add(FeatureKind::kBoxEndBall, 2);
  } else if (a_.type() == ShapeType::kBox && b_.type() == ShapeType::kBox) {
    swapped_ = false;
    add(FeatureKind::kBoxCornerOfB, 16);  // 8–15: the corners of A (feature())
  } else {
    swapped_ = false;
    add(FeatureKind::kSignedDistance, 1);
  }
}

PairDistance ContactManifold::Evaluate(int i, const Isometry3d& X_WA, const Isometry3d& X_WB,
                                       NormalTurn* turn) const {
  if (turn != nullptr) *turn = NormalTurn{};
  if (i < 0 || i >= num_features()) {
    throw std::invalid_argument("ContactManifold::Evaluate: feature " + std::to_string(i) +
                                " out of range (" + std::to_string(num_features()) + ")");
  }
  const ContactFeature f = feature(i);
  switch (f.kind) {
    case FeatureKind::kSignedDistance:
      return SignedDistance(a_, X_WA, b_, X_WB, options_);
    case FeatureKind::kBoxCornerOfB: {
      const Isometry3d X_a = X_WA * a_.pose(), X_b = X_WB * b_.pose();
      return BoxPointDistance(a_.half_size(), X_a, X_b * Corner(b_.half_size(), f.index));
    }
    case FeatureKind::kBoxCornerOfA: {
      const Isometry3d X_a = X_WA * a_.pose(), X_b = X_WB * b_.pose();
      return Swapped(BoxPointDistance(b_.half_size(), X_b, X_a * Corner(a_.half_size(), f.index)));
    }
    case FeatureKind::kMeshVertex:
    case FeatureKind::kMeshEndBall:
    case FeatureKind::kBoxEndBall: {
      // Computed with the mesh or the box as A (the surface side S, the convex side C).
      const Shape& surface = swapped_ ? b_ : a_;
      const Shape& body = swapped_ ? a_ : b_;
      const Isometry3d X_s = (swapped_ ? X_WB : X_WA) * surface.pose();
      const Isometry3d X_c = (swapped_ ? X_WA : X_WB) * body.pose();
      Vector3d x;
      double radius = 0.0;
      if (f.kind == FeatureKind::kMeshVertex) {
        x = X_c * (body.type() == ShapeType::kBox
                       ? Corner(body.half_size(), f.index)
                       : body.mesh().vertices[static_cast<std::size_t>(f.index)]);
      } else {
        x = X_c * Vector3d(0.0, 0.0, (f.index == 0 ? -0.5 : 0.5) * body.length());
        radius = body.radius();
      }
      PairDistance d = f.kind == FeatureKind::kBoxEndBall
                           ? BoxPointDistance(surface.half_size(), X_s, x)
                           : MeshPointDistance(surface.mesh(), X_s, x);
      d.gap -= radius;
      d.point_b -= radius * d.normal;
      return swapped_ ? Swapped(d) : d;
    }
    case FeatureKind::kSurfaceSupport:
    case FeatureKind::kSurfaceRim: {
      // With the mesh or the box as A: the gap and normal of the centre, less the support
      // function of the ellipsoid or of the rim circle along the normal.
      const Shape& surface = swapped_ ? b_ : a_;
      const Shape& body = swapped_ ? a_ : b_;
      const Isometry3d X_s = (swapped_ ? X_WB : X_WA) * surface.pose();
      const Isometry3d X_c = (swapped_ ? X_WA : X_WB) * body.pose();
      const Vector3d c =
          f.kind == FeatureKind::kSurfaceSupport
              ? X_c.translation()
              : Vector3d(X_c * Vector3d(0.0, 0.0, (f.index == 0 ? -0.5 : 0.5) * body.length()));
      PointNormalRegion region;
      PairDistance d = surface.type() == ShapeType::kBox
                           ? BoxPointDistance(surface.half_size(), X_s, c, &region)
                           : MeshPointDistance(surface.mesh(), X_s, c, &region);
      const Vector3d n = d.normal;
      Vector3d offset;  // support point − c along −n
      if (f.kind == FeatureKind::kSurfaceSupport) {
        const Vector3d m = X_c.linear().transpose() * n;  // n in the ellipsoid's frame
        const Vector3d am = body.radii().cwiseProduct(body.radii()).cwiseProduct(m);
        const double h = std::sqrt(m.dot(am));
        offset = -(X_c.linear() * am) / h;
      } else {
        offset = body.radius() * RimDirection(n, X_c);
      }
      const double centre_gap = d.gap;
      d.point_b = c + offset;
      d.gap += n.dot(offset);
      d.point_a = d.point_b - d.gap * n;
      d.analytic = true;
      if (turn != nullptr && region.kind != PointNormalRegion::kFixed) {
        // w = P (p − c)/δ, P = I − n nᵀ (− e eᵀ beside an edge): the header's derivation. δ is
        // the centre's gap, > kMeshNearFeature (mesh) or > 0 (box) in these regions.
        Vector3d w = offset - n.dot(offset) * n;
        if (region.kind == PointNormalRegion::kEdge) w -= region.edge.dot(w) * region.edge;
        turn->w = (swapped_ ? -1.0 : 1.0) * w / centre_gap;
        turn->point = c;
      }
      return swapped_ ? Swapped(d) : d;
    }
    case FeatureKind::kPlaneVertex:
    case FeatureKind::kPlaneEndBall:
    case FeatureKind::kPlaneRim:
      break;
  }
  // Plane features, computed with the plane as A.
  const Shape& plane = swapped_ ? b_ : a_;
  const Shape& body = swapped_ ? a_ : b_;
  const Isometry3d X_p = (swapped_ ? X_WB : X_WA) * plane.pose();
  const Isometry3d X_s = (swapped_ ? X_WA : X_WB) * body.pose();
  const Vector3d n = X_p.linear() * plane.plane_normal();
  const double offset = plane.plane_offset() + n.dot(X_p.translation());
  PairDistance d;
  const double end = f.index == 0 ? -0.5 : 0.5;
  if (f.kind == FeatureKind::kPlaneVertex) {
    const Vector3d v = body.type() == ShapeType::kBox
                           ? Corner(body.half_size(), f.index)
                           : body.mesh().vertices[static_cast<std::size_t>(f.index)];
    d = OnPlane(n, offset, X_s * v);
  } else if (f.kind == FeatureKind::kPlaneEndBall) {
    const Vector3d c = X_s * Vector3d(0.0, 0.0, end * body.length());
    d = OnPlane(n, offset, c - body.radius() * n);
  } else {
    const Vector3d c = X_s * Vector3d(0.0, 0.0, end * body.length());
    d = OnPlane(n, offset, c + body.radius() * RimDirection(n, X_s));
  }
  return swapped_ ? Swapped(d) : d;
}

std::vector<int> ContactManifold::Active(const Isometry3d& X_WA, const Isometry3d& X_WB,
                                         double margin) const {
  std::vector<int> active;
  for (int i = 0; i < num_features(); ++i) {
    if (Evaluate(i, X_WA, X_WB).gap <= margin) active.push_back(i);
  }
  return active;
}

}  // namespace saltus::contact
