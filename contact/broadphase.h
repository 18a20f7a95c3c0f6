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
#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
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
  // Pose in the world of the box about entry e's local AABB.
  static Eigen::Isometry3d BoxPose(const Entry& e);

  double margin_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<int> planes_;
  std::set<std::pair<int, int>> excluded_;
  struct Tree;
  std::unique_ptr<Tree> tree_;
  bool dirty_ = true;
};

// Overlapping pairs of axis-aligned boxes without a tree, for callers that recompute all boxes
// at every query (contact::SpatialContacts::CandidateRows, once per step and per event of the
// event loop): a uniform grid whose cell size h is the median of the boxes' largest extents. A box
// whose largest extent is ≤ 2h covers at most 3 cells per axis and is entered in each (cells
// hashed into buckets, counting sort); two such boxes are compared only in the cell holding the
// lower corner max(min_a, min_b) of their intersection, which both cover when they overlap, so
// every overlapping pair is found, and found once. Larger boxes (and boxes with non-finite or
// very distant corners) are compared with every box. Cost O(n + k + c) for n boxes, k pairs and c
// comparisons of boxes sharing a cell (a few per box for boxes of similar size, e.g. the spheres
// of a pile), plus O(n L) for L large boxes. No state is kept between calls except the capacity
// of the workspace. Boxes are closed (touching boxes overlap) and the test is FCL's
// AABB::overlap (a box with a NaN corner overlaps everything).
class AabbGrid {
 public:
  // Appends to *pairs every pair (a, b), a < b, of overlapping boxes with groups[a] ≠ groups[b]
  // (e.g. the body of each shape: shapes of one body, or two static shapes, never pair), in no
  // particular order. Throws std::invalid_argument if the spans differ in size.
  void OverlappingPairs(std::span<const Eigen::AlignedBox3d> boxes, std::span<const int> groups,
                        std::vector<std::pair<int, int>>* pairs);
  // The same pairs (in another order) for boxes that move little between calls (box i the same
  // object at every call): while every box lies inside its "fat" box, the pairs of overlapping
  // fat boxes contain every overlapping pair, so only those are tested (O(n + fat pairs)). The
  // fat boxes are the boxes of the call that found them, grown on every side by `slack` times
  // their largest extent; they are found again (OverlappingPairs) when a box leaves its fat box,
  // the number of boxes or their groups change, or the boxes shrink to less than half their
  // total size at the last rebuild. slack ≥ 0 (throws otherwise).
  void OverlappingPairsCached(std::span<const Eigen::AlignedBox3d> boxes,
                              std::span<const int> groups, double slack,
                              std::vector<std::pair<int, int>>* pairs);
  // Number of times OverlappingPairsCached found the fat pairs again.
  long rebuilds() const { return rebuilds_; }

 private:
  struct Entry {
    int box;
    unsigned lower_axes;  // bit k: the cell is the box's lowest along axis k
    std::uint64_t hash;   // of the cell, before reduction to a bucket
    std::array<std::int64_t, 3> cell;
  };
  std::vector<double> extents_;
  std::vector<std::array<std::int64_t, 6>> ranges_;  // cell ranges lo, hi of each small box
  std::vector<int> large_;
  std::vector<char> is_large_;
  std::vector<int> bucket_start_;
  std::vector<Entry> entries_;
  // OverlappingPairsCached: the fat boxes, their groups and overlapping pairs.
  std::vector<Eigen::AlignedBox3d> fat_boxes_;
  std::vector<int> fat_groups_;
  std::vector<std::pair<int, int>> fat_pairs_;
  double fat_extent_sum_ = 0.0;  // Σ largest extents of the boxes at the rebuild
  bool fat_valid_ = false;
  long rebuilds_ = 0;
};

}  // namespace saltus::contact
