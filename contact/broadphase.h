// Broadphase of 3D shapes (issue 4): the candidate pairs that may be within a margin of each
// other, before the narrowphase (geometry3d.h, contact_manifold.h) decides.
//
// Every shape except planes is represented by its local axis-aligned box (Shape::LocalAabb)
// grown by margin/2 on every side, as an FCL box at the shape's world pose, kept in FCL's
// DynamicAABBTreeCollisionManager; two shapes are candidates when the world AABBs of these
// grown boxes overlap. If the true distance of two shapes is ≤ margin, their grown boxes
// overlap, so no pair within the margin is missed (the test is conservative: candidates may be
// farther apart). Planes (infinite) are kept out of the tree and tested against every other shape
// with the shape's bounding ball: n·c − d − R ≤ margin. Cost per query: O(N log N + K) for N
// shapes and K candidate pairs, plus O(N P) for P planes.
//
// Per-shape inflation (SetBodyPose with `inflation` δ ≥ 0, e.g. the distance the shape can travel
// within a time step): the box of shape i is grown by margin/2 + δ_i, and the plane test becomes
// n·c − d − R ≤ margin + δ_i + δ_plane, so a pair is a candidate whenever its distance is
// ≤ margin + δ_a + δ_b (each shape may move by its δ towards the other).
//
// Which pairs may touch (all by default):
//   - never two shapes on the same body, never two static shapes (body < 0, the world);
//   - group/mask filter as in Bullet and ODE: a and b may touch iff
//       (a.group & b.mask) != 0 and (b.group & a.mask) != 0;
//   - pairs excluded by ExcludePair.
#pragma once

#include <Eigen/Geometry>
#include <cstdint>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "contact/shapes.h"

namespace saltus::contact {

// Body index of shapes fixed in the world.
constexpr int kStaticBody = -1;

struct CollisionFilter {
  std::uint32_t group = 1;           // the groups this shape belongs to (bit set)
  std::uint32_t mask = 0xFFFFFFFFu;  // the groups it may touch
};

class Broadphase {
 public:
  // margin ≥ 0 (throws std::invalid_argument otherwise).
  explicit Broadphase(double margin);
  ~Broadphase();
  Broadphase(const Broadphase&) = delete;
  Broadphase& operator=(const Broadphase&) = delete;

  // Adds `shape` carried by `body` (≥ 0, or kStaticBody) at body pose X_WB; returns the shape's
  // id (0, 1, … in the order of addition). Throws std::invalid_argument for body < −1 or a
  // non-finite pose.
  int Add(const Shape& shape, int body,
          const Eigen::Isometry3d& X_WB = Eigen::Isometry3d::Identity(),
          CollisionFilter filter = {});
  // This pair never becomes a candidate (ids from Add; throws std::invalid_argument if unknown).
  void ExcludePair(int id_a, int id_b);
  // Moves shape `id` with its body to X_WB (the shape's own pose in the body is applied here).
  void SetBodyPose(int id, const Eigen::Isometry3d& X_WB);
  // The same with the shape's inflation δ ≥ 0 (see above; throws std::invalid_argument if
  // negative or not finite). The plain overload keeps the current δ (0 initially).
  void SetBodyPose(int id, const Eigen::Isometry3d& X_WB, double inflation);

  int num_shapes() const { return static_cast<int>(entries_.size()); }
  // Accessors for a valid id (not checked).
  const Shape& shape(int id) const;
  int body(int id) const;
  const Eigen::Isometry3d& body_pose(int id) const;

  // Candidate pairs (id_a < id_b), sorted, after the filters above.
  std::vector<std::pair<int, int>> CandidatePairs();

 private:
  struct Entry;
  bool MayTouch(int a, int b) const;

  double margin_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<int> planes_;
  std::set<std::pair<int, int>> excluded_;
  struct Tree;
  std::unique_ptr<Tree> tree_;
  bool dirty_ = true;
};

}  // namespace saltus::contact
