// Several contact points per shape pair, each with its own gap function that stays continuous
// along a trajectory (issue 4, Section 2).
//
// A manifold is a fixed list of *features* chosen once from the shape types. Every feature is one
// candidate unilateral row g^α(q) ≥ 0 with its own normal and witness points (same conventions
// as geometry3d.h: normal from A to B, p_b − p_a = gap · n). Because the list and the identity
// of each feature (which corner, which end) never change, a row is the same function of the
// poses from one step to the next: this is the point tracking. There is no re-matching of points
// between steps, and so no jump when the nearest feature changes.
//
//   plane A – box B          8 features, the corners v_i:        g_i = n·v_i − d
//   plane A – convex mesh B  one feature per vertex v_i:         g_i = n·v_i − d
//   plane A – capsule B      2 features, the end balls c_i:      g_i = n·c_i − d − r
//   plane A – cylinder B     2 features, the end circles (centre c_i, axis a, radius r): the lowest
//                            point of circle i,                 g_i = n·c_i − d − r √(1 − (n·a)²)
//   box A – box B            16 features: each corner of B against box A and each corner of A
//                            against box B (signed point–box distance, geometry3d.h)
//   triangle mesh A – box B  8 features, the corners v_i:        g_i = signed distance of v_i to
//                            the mesh surface (geometry3d.h, MeshPointDistance: the sphere–mesh
//                            path with radius 0; normal from the closest point's region)
//   triangle mesh A – convex mesh B   one feature per vertex v_i, as for the box
//   triangle mesh A – capsule B       2 features, the end balls c_i:
//                                     g_i = MeshPointDistance(c_i) − r
//   box A – capsule B        2 features, the end balls c_i:      g_i = BoxPointDistance(c_i) − r
//   any other pair           1 feature: the signed distance of the pair (geometry3d.h)
// (either order: a plane, a triangle mesh, the first box of two or the box of a box–capsule
// pair may be B; the result keeps the caller's order.)
//
// A box lying flat on a plane therefore has 4 features at gap 0 (its Delassus matrix has rank 3:
// the LCP and the projections see redundant rows); a cylinder or capsule lying on its side has
// 2, its end points.
//
// When nearest features switch. Each feature's gap is smooth (C^∞ for plane–vertex and plane–end
// ball; the point–box distance is C¹ outside the box), so when a box rolls over an edge the row
// of the corner that lifts off and the row of the corner that lands are both smooth functions
// crossing zero; the event functions stay continuous and the root finder sees ordinary sign
// changes. The single-feature pairs use the signed distance of the two convex shapes, which is
// continuous but whose gradient jumps when the witness features switch (e.g. two boxes whose
// closest features change from vertex–face to edge–edge): the event function is continuous, its
// derivative is not. Known gaps in coverage:
//   - plane – cylinder: at n ∥ a (standing on an end) the rim gap is continuous but not
//     differentiable and a flat end resting on a plane is represented by the single lowest point;
//   - box – box: edge–edge contacts (neither corner inside the other box) are not features; they
//     are found by the single signed distance only for other pairs;
//   - triangle mesh or box – cylinder (and – ellipsoid): one signed-distance row (FCL); a
//     cylinder lying on a mesh or a box has no end-point manifold (docs/contact-geometry.md);
//   - triangle mesh – vertex / end ball: the gap of a point under an open mesh jumps from −δ to
//     +δ where its closest point passes onto a boundary edge (geometry3d.h, MeshPointSide).
#pragma once

#include <Eigen/Geometry>
#include <vector>

#include "contact/geometry3d.h"
#include "contact/shapes.h"

namespace saltus::contact {

enum class FeatureKind {
  kSignedDistance,  // the pair's signed distance (one feature)
  kPlaneVertex,     // vertex `index` of the convex shape against the plane
  kPlaneEndBall,    // end ball `index` (0: z = −L/2, 1: z = +L/2) of a capsule against the plane
  kPlaneRim,      // end circle `index` (0: z = −L/2, 1: z = +L/2) of a cylinder against the plane
  kBoxCornerOfB,  // corner `index` of box B against box A
  kBoxCornerOfA,  // corner `index` of box A against box B
  kMeshVertex,    // vertex `index` of a box or convex mesh against a triangle mesh
  kMeshEndBall,   // end ball `index` of a capsule against a triangle mesh
  kBoxEndBall,    // end ball `index` of a capsule against a box
};

struct ContactFeature {
  FeatureKind kind = FeatureKind::kSignedDistance;
  int index = 0;
};

class ContactManifold {
 public:
  // Copies the shapes (meshes are shared, not copied). Throws std::invalid_argument for pairs
  // SignedDistance rejects (two planes, a plane or a triangle mesh with a triangle mesh).
  ContactManifold(Shape a, Shape b, DistanceOptions options = {});

  const Shape& shape_a() const { return a_; }
  const Shape& shape_b() const { return b_; }
  int num_features() const { return num_features_; }
  // Feature i in [0, num_features()) (box–box: corners of B are 0–7, corners of A 8–15).
  ContactFeature feature(int i) const {
    if (kind_ == FeatureKind::kBoxCornerOfB && i >= 8) return {FeatureKind::kBoxCornerOfA, i - 8};
    return {kind_, i};
  }

  // Gap, normal and witness points of feature i for bodies at X_WA, X_WB.
  PairDistance Evaluate(int i, const Eigen::Isometry3d& X_WA, const Eigen::Isometry3d& X_WB) const;
  // Indices of the features with gap ≤ margin, ascending.
  std::vector<int> Active(const Eigen::Isometry3d& X_WA, const Eigen::Isometry3d& X_WB,
                          double margin) const;

 private:
  Shape a_, b_;
  DistanceOptions options_;
  // The plane, triangle-mesh and box–capsule features are computed with the plane, the mesh or
  // the box as A: swapped_ says the caller's A is the other shape.
  bool swapped_ = false;
  // The features are (kind_, 0), ..., (kind_, num_features_ − 1), except box–box (see feature()):
  // no per-pair list, so that a manifold costs a few dozen bytes.
  FeatureKind kind_ = FeatureKind::kSignedDistance;
  int num_features_ = 1;
};

}  // namespace saltus::contact
