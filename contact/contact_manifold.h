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
//   triangle mesh or box A – ellipsoid B   1 feature, the support point: with c the ellipsoid's
//                            centre, (δ, n) = MeshPointDistance(c) or BoxPointDistance(c) (gap
//                            and normal of the centre) and M = R diag(a², b², c²) Rᵀ,
//                                g = δ − h(n),  h(n) = √(nᵀ M n)  (the support function),
//                            witness point_b = p = c − M n / h(n), the ellipsoid's point lowest
//                            along n; point_a = p − g n.
//   triangle mesh or box A – cylinder B    2 features, the end circles (centre c_i, axis e,
//                            radius r): (δ_i, n_i) = MeshPointDistance(c_i) or
//                            BoxPointDistance(c_i),   g_i = δ_i − h(n_i), h(n) = r √(1 − (n·e)²),
//                            witness p = the rim point lowest along n_i (as plane–cylinder; the
//                            centre c_i itself when n_i ∥ e to 1e-12, a cylinder standing on an
//                            end: no moment from the row).
//     Rate of these rows (the Jacobian G). With v_X(x) the velocity of the material point of
//     body X (A: the surface S, B: the convex body C) at the world point x, and the envelope
//     theorem for the distance δ (its gradient in c is n, its rate for a moving S is that of S's
//     point at the closest point x) and for the support function (∂h/∂n = c − p; at fixed n the
//     rotation of C changes h by −n·(ω_C × (p − c))):
//         ġ = δ̇ − (c − p)·ṅ + n·(ω_C × (p − c)) = n·(v_C(p) − v_S(x)) + (p − c)·ṅ.
//     Where n is fixed in S (c in a face region, inside the box, within kMeshNearFeature of a
//     mesh edge or vertex: pseudo-normal, or beside a flat mesh edge or vertex, geometry3d.h)
//     ṅ = ω_S × n, and with point_a = p − g n (so that
//     point_a − x is the part t of p − c orthogonal to n) this is the witness-point form
//         ġ = n·(v_C(point_b) − v_S(point_a))
//     of every other row. Where c is in the region of an edge (direction e_E) or a vertex of
//     the surface, n = (c − x)/δ turns with c (geometry3d.h, PointNormalRegion):
//         ṅ = ω_S × n + P (v_C(c) − v_S(c))/δ,  P = I − n nᵀ − e_E e_Eᵀ (edge), I − n nᵀ (vertex),
//     which adds w·(v_C(c) − v_S(c)) with w = P (p − c)/δ (NormalTurn, w → −w with the shapes
//     swapped): G gets a second pair of blocks at the point c with the direction w.
//     Smoothness: g is C^∞ inside each region of c (away from n ∥ e for a rim). Across the
//     boundary between a face region and an edge or vertex region g is continuous but G jumps
//     by the turn term (w is 0 on the face side, P (p − c)/δ on the other): zero only when
//     p − c ∥ n (an ellipsoid with a principal axis along n, a cylinder lying level), as the
//     gradient of the signed distance jumps where witness features switch (below); γ jumps too
//     (the surface's curvature seen by c goes from 0 to 1/δ). γ of these rows is the central
//     difference of G v (spatial_contacts.h, DifferenceGamma), which smears those jumps over
//     ±6e-6 of the motion. g is the distance of the shape to the plane through x orthogonal to n
//     (the face's plane, or beside an edge or vertex the tangent plane of the surface's offset
//     around c): the true distance while the support or rim point lies over the same face as c.
//     Not covered: (i) the support or rim point over another face than c: over a convex ridge
//     or a box edge the row keeps the plane of c's face, which passes above the other face: the
//     shape hangs above it by up to its extent times the angle between the faces (a lower bound
//     of the distance for a box, any convex surface); over a concave valley that plane passes
//     below the other face, and the shape may sink into it by as much; (ii) one row per
//     ellipsoid and per end circle: an ellipsoid touching two faces of a valley at once is held
//     by one (c's nearest face); (iii) a cylinder standing on an end face has one row per end
//     circle (its centre), so a tilted standing cylinder has a single lowest rim point, and its
//     gap is C⁰ (r |tilt|) at n ∥ e, as on a plane; (iv) a centre inside the box (deep
//     penetration): the nearest face; (v) a centre under an open mesh passing into a boundary
//     edge's region: the gap jumps from −δ to +δ (MeshPointSide).
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
//     differentiable and a flat end resting on a plane is represented by one row whose witness
//     is the end circle's centre (‖n − (n·a) a‖ ≤ 1e-12; no moment, so it stands), tilted by
//     the single lowest rim point;
//   - box – box: edge–edge contacts (neither corner inside the other box) are not features; they
//     are found by the single signed distance only for other pairs;
//   - triangle mesh or box – cylinder or ellipsoid: the plane of the centre's closest point
//     (above), not the true distance over edges and ridges; one row per ellipsoid or end circle;
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
  kSurfaceSupport,  // an ellipsoid's support point against a triangle mesh or a box (index 0)
  kSurfaceRim,      // end circle `index` of a cylinder against a triangle mesh or a box
};

// The part of ġ that comes from the turn of a feature's normal (kSurfaceSupport, kSurfaceRim
// with the centre c in an edge or vertex region of the surface, see above):
//   ġ = n·(v_B(p_b) − v_A(p_a)) + w·(v_B(c) − v_A(c)),
// with v_X(x) the velocity of the material point of body X at the world point x. w = 0 (and the
// first term alone, the witness-point form of every other row) wherever n is fixed in a body.
struct NormalTurn {
  Eigen::Vector3d w = Eigen::Vector3d::Zero();      // world
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // c, world
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
  // `turn` (optional) receives the normal-turn term of ġ (NormalTurn; w = 0 for most rows).
  PairDistance Evaluate(int i, const Eigen::Isometry3d& X_WA, const Eigen::Isometry3d& X_WB,
                        NormalTurn* turn = nullptr) const;
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
