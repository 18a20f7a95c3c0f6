// Narrowphase of two shapes in 3D (issue 4): signed distance, witness points and normal.
//
// For shapes A and B attached to bodies with world poses X_WA, X_WB (each shape adds its own pose
// X_BS, see shapes.h) the query returns
//
//   gap      signed distance: the distance between A and B when they are apart (> 0), minus the
//            penetration depth when they overlap (< 0); the unilateral constraint is gap ≥ 0
//   n        unit normal in the world frame, from A towards B
//   p_a, p_b witness points in the world frame, on the surfaces of A and B, with
//            p_b − p_a = gap · n
//
// n is the gradient of the gap with respect to a rigid displacement of B: moving B by a small
// translation δx and rotation δθ (about a world point o) changes the gap by
//   δgap = n·δx + ((p_b − o) × n)·δθ + O(δ²),
// and a displacement of A changes it by the opposite expression with p_a. This is what the
// Jacobian row G^α of a contact needs (Haddouni et al. 2017, Section 2.1: G = ∇g).
//
// Paths:
//   analytic (exact to round-off): sphere–sphere, sphere–box, sphere–capsule, capsule–capsule
//     (non-parallel axes), sphere–triangle mesh (closest point over all triangles), and plane
//     against every convex shape through the support function, gap = n·Support(−n) − d
//     (sphere, box corners, capsule, cylinder rim, ellipsoid, convex mesh vertices), and plane
//     against a triangle mesh (lowest vertex);
//   FCL 0.7 for every other pair (libccd GJK), with enable_signed_distance and GJK
//     distance_tolerance 1e-16, i.e. iterate until no further progress in double precision.
//     Measured (geometry3d_test.cc, scratch runs on random poses): FCL's default 1e-6 leaves
//     gap errors up to ~1e-4 on curved pairs; 1e-12 still leaves ~1e-10 on sphere–sphere and
//     witness points (hence normals) off by ~5e-5; 1e-16 gives gaps to ~1e-13 and normals to
//     ~3e-7 at ~7 µs per query. (FCL's own GJK, GST_INDEP, is exact on the pairs it solves in
//     closed form but its normals were worse, ~1e-2, at 1e-16 on the general pairs.)
//     For separated convex pairs the result carries a certified error bound (gap_error, from
//     the support functions); when libccd's exceeds 1e-12, FCL's own GJK is tried as well
//     and the tighter result kept (worst bracket measured over 180 000 random poses: 4e-10).
// For the FCL path n = (p_b − p_a)/gap; when |gap| is below 1e-12 the witness points coincide and
// n is taken from FCL's collision contact normal instead. Penetrating FCL pairs use FCL's EPA
// depth, which is less accurate than the separated case; the analytic paths have no such limit.
//
// Degenerate configurations where the normal is not defined (coincident sphere centres, a sphere
// centre exactly on a box's medial surface) return a valid unit normal chosen by a fixed rule
// (documented at each path); the gap is still exact there.
#pragma once

#include <Eigen/Geometry>
#include <memory>

#include "contact/shapes.h"

namespace saltus::contact {

struct DistanceOptions {
  // FCL GJK/EPA tolerance (DistanceRequest::distance_tolerance); FCL's own default is 1e-6.
  double fcl_distance_tolerance = 1e-16;
  // false: libccd GJK (FCL's GST_LIBCCD, the default); true: FCL's own GJK (GST_INDEP).
  bool fcl_indep_solver = false;
  // Skip the analytic paths (for comparisons against FCL in tests).
  bool force_fcl = false;
  // FCL path, separated convex shapes: if the certified bracket (PairDistance::gap_error) of the
  // first solver exceeds this, the other solver is tried and the tighter result kept.
  double fcl_bracket_tolerance = 1e-12;
};

struct PairDistance {
  double gap = 0.0;
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  // world, unit, from A to B
  Eigen::Vector3d point_a = Eigen::Vector3d::Zero();  // world, on A
  Eigen::Vector3d point_b = Eigen::Vector3d::Zero();  // world, on B
  bool analytic = false;                              // which path computed it
  // FCL path, separated convex shapes: |p_b − p_a| − (n·Support_B(−n) − n·Support_A(n)), an
  // upper bound of the gap's error (the first term is ≥ the true distance, the second ≤ it).
  // 0 for the analytic paths (exact to round-off) and where no bound is available (overlap,
  // triangle meshes).
  double gap_error = 0.0;
};

// True if the pair (in either order) has an analytic path.
bool HasAnalyticPath(ShapeType a, ShapeType b);

// Signed distance between shape `a` on a body at X_WA and shape `b` on a body at X_WB. Throws
// std::invalid_argument for two planes, and for plane or triangle mesh against a triangle mesh
// (surfaces without inside; not supported).
PairDistance SignedDistance(const Shape& a, const Eigen::Isometry3d& X_WA, const Shape& b,
                            const Eigen::Isometry3d& X_WB, const DistanceOptions& options = {});

// The FCL path alone, on shape world poses (X_WS = X_WB X_BS); exposed for tests and benchmarks.
PairDistance FclSignedDistance(const Shape& a, const Eigen::Isometry3d& X_WSa, const Shape& b,
                               const Eigen::Isometry3d& X_WSb, const DistanceOptions& options = {});

// How the normal n of a point–surface distance (BoxPointDistance, MeshPointDistance) moves with
// the point p and the surface's body S (turning at ω_S, world frame):
//   kFixed   n is fixed in S (a face region, the inside of a box, a pseudo-normal within
//            kMeshNearFeature of a mesh edge or vertex): ṅ = ω_S × n;
//   kEdge    n = (p − x)/gap, x the closest point on an edge of direction e (world, unit):
//            ṅ = ω_S × n + (I − n nᵀ − e eᵀ)(v_P(p) − v_S(p)) / gap;
//   kVertex  n = (p − x)/gap, x a vertex: ṅ = ω_S × n + (I − n nᵀ)(v_P(p) − v_S(p)) / gap,
// with v_P(p) the velocity of p and v_S(p) that of the material point of S at p (derivation:
// docs/contact-geometry.md, "Normal turn"). A flat edge or vertex of a triangle mesh (not on an
// open boundary, its pseudo-normal equal to the closest triangle's normal to 1e-12: coplanar
// triangles around it) is reported kFixed: its region has no width, the point lies on the
// boundary of the face regions, where n is that of the faces.
struct PointNormalRegion {
  enum Kind { kFixed, kEdge, kVertex } kind = kFixed;
  Eigen::Vector3d edge = Eigen::Vector3d::Zero();  // kEdge: the edge direction (world, unit)
};

// Signed distance from the box {|x_i| ≤ h_i} at world pose X_box to the world point p: normal
// from the box to p, point_a on the box surface, point_b = p. Inside the box the nearest face
// wins; ties go to the lowest axis index and the + face. `region` (optional) receives how the
// normal turns: outside, one coordinate beyond the half sizes is a face (kFixed), two an edge
// along the third axis, three a vertex.
PairDistance BoxPointDistance(const Eigen::Vector3d& half_size, const Eigen::Isometry3d& X_box,
                              const Eigen::Vector3d& p, PointNormalRegion* region = nullptr);

// The Voronoi region of a triangle (a, b, c) that holds a point's closest point: the face
// interior, an edge (vertices[0], vertices[1]: 0 = a, 1 = b, 2 = c) or a vertex (vertices[0]).
struct TriangleFeature {
  enum Kind { kVertex, kEdge, kFace } kind = kFace;
  int vertices[2] = {0, 0};
};

// Closest point of the triangle (a, b, c) to p (Ericson, Real-Time Collision Detection, 2005,
// Section 5.1.5); exact to round-off, handles every Voronoi region of the triangle. If `feature`
// is non-null it receives the region of the result.
Eigen::Vector3d ClosestPointOnTriangle(const Eigen::Vector3d& p, const Eigen::Vector3d& a,
                                       const Eigen::Vector3d& b, const Eigen::Vector3d& c,
                                       TriangleFeature* feature = nullptr);

// Closest point of a triangle mesh (its own frame) to p: the first triangle (in mesh order) at
// the least distance, the closest point on it and its region. The sphere–triangle-mesh path of
// SignedDistance uses exactly this choice.
struct MeshClosest {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  int triangle = 0;
  TriangleFeature feature;
};
MeshClosest ClosestPointOnMesh(const TriangleMesh& mesh, const Eigen::Vector3d& p);

// Acceleration structure of the mesh point queries (ClosestPointOnMesh, MeshPseudoNormal,
// MeshPointSide, MeshPointDistance), built once per mesh (Shape::TriangleMeshSurface stores it
// in TriangleMesh::index) in O(T log T) for T triangles:
//   - a binary tree of axis-aligned boxes over the triangles (median split of the centroids
//     along their longest extent, leaves of at most 4 triangles). ClosestPointOnMesh descends it
//     nearer box first and skips a box when its squared distance to p exceeds (δ + ε(δ + M))²,
//     δ² the least squared distance so far, M the largest vertex coordinate magnitude and
//     ε = 1e-7: a margin for the round-off of a triangle's computed closest point, which may lie
//     slightly outside the triangle's box (edge and vertex regions: by ≤ 2u·M, u = 2⁻⁵³; face
//     region: by an estimated 4u·δ²/(α²L), L the longest edge, α L² twice the area, so the
//     margin covers δ/L up to ≈ 1e8 α², a pessimistic estimate: no difference was found on
//     random points up to 3000 L away from slivers of α = 1e-2 … 1e-5, mesh_query_test.cc).
//     Without it (ε = 0) the bowl and the closed mesh of mesh_query_test.cc do differ; ε = 1e-15
//     sufficed there. Among the triangles not skipped the result is the least (squared distance,
//     triangle index), lexicographically, which is the brute-force rule "the first triangle in
//     mesh order at the least distance", bit for bit (the same per-triangle arithmetic). Per
//     query: about log2(T/4) + 1 boxes and 4 triangles for a point within a few triangle sizes
//     of a surface (bench/mesh_query.cc);
//   - the triangles at each vertex (ascending), the unit triangle normals, each vertex's
//     angle-weighted pseudo-normal sum and boundary flag, so that MeshPseudoNormal and
//     MeshPointSide cost O(valence) instead of O(T), summing in the brute force's order (the
//     same doubles).
// The structure refers to the mesh's vertex and triangle buffers: it is used only for the mesh it
// was built from (HasMeshIndex); any other mesh gets the brute-force loops. The mesh must not
// change after the index is built (Shape's meshes are immutable).
std::shared_ptr<const MeshIndex> BuildMeshIndex(const TriangleMesh& mesh);
// True if mesh.index was built from this very mesh (same buffers and sizes): the queries use it.
bool HasMeshIndex(const TriangleMesh& mesh);

// Signed distance from a triangle mesh at world pose X_mesh to the world point p (the
// sphere–triangle-mesh path with radius 0, and the vertex and end-ball rows of
// contact_manifold.h): x the closest point (ClosestPointOnMesh), n_f the unit normal of its
// triangle ((v1 − v0) × (v2 − v0), the "outside" of the surface), d = p − x;
//   face region:          gap = n_f·d,            normal n_f (smooth through gap = 0);
//   edge/vertex region:   gap = s ‖d‖, s = MeshPointSide, normal s d/‖d‖;
//   within kMeshNearFeature of an edge or vertex: gap = N·d, normal N (MeshPseudoNormal), so
//   that a point resting over an edge or a vertex of a flat floor keeps the normal n_f instead
//   of the direction of a round-off d (the switch changes the gap by ≤ 2 kMeshNearFeature, and
//   by round-off where the faces at the edge are coplanar).
// point_a = p − gap·n on the surface, point_b = p. `region` (optional) receives how the normal
// turns (PointNormalRegion).
PairDistance MeshPointDistance(const TriangleMesh& mesh, const Eigen::Isometry3d& X_mesh,
                               const Eigen::Vector3d& p, PointNormalRegion* region = nullptr);

// The side s = ±1 of the point p (mesh frame) whose closest point is `closest`: the sign of
// N·(p − x) with N the face normal (face region), the edge's pseudo-normal (sum of the normals
// of the triangles sharing it) or the vertex's angle-weighted pseudo-normal (Bærentzen & Aanæs,
// "Signed distance computation using the angle weighted pseudonormal", IEEE TVCG 11(3), 2005:
// the sign of the signed distance of a closed surface), +1 at 0. On the boundary of an open
// surface (an edge of one triangle, or a vertex of such an edge) there is no inside: +1, the
// unsigned distance. The gap s‖d‖ is then continuous inside each Voronoi region; it jumps from
// −δ to +δ only where a point δ below a face passes into the region of a boundary edge (beyond
// the rim of an open terrain, under it). O(triangles) for edge and vertex regions without a
// MeshIndex, O(valence) with one.
double MeshPointSide(const TriangleMesh& mesh, const MeshClosest& closest,
                     const Eigen::Vector3d& p);
// The unit pseudo-normal at `closest` (mesh frame): the face normal (face region), the
// normalized edge or angle-weighted vertex pseudo-normal, or, on the boundary of an open
// surface (`boundary` set), the closest triangle's normal. O(triangles) off the face region
// without a MeshIndex, O(valence) with one.
Eigen::Vector3d MeshPseudoNormal(const TriangleMesh& mesh, const MeshClosest& closest,
                                 bool* boundary = nullptr);
// Distance (mesh units, m) below which a point's gap to an edge or vertex of a triangle mesh is
// taken along the pseudo-normal (MeshPointDistance).
inline constexpr double kMeshNearFeature = 1e-9;

}  // namespace saltus::contact
