#include "contact/broadphase.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "contact/fcl_backend.h"

namespace saltus::contact {

struct Broadphase::Entry {
  Shape shape;
  int body = kStaticBody;
  CollisionFilter filter;
  Eigen::Isometry3d X_WB = Eigen::Isometry3d::Identity();
  Eigen::Vector3d aabb_centre = Eigen::Vector3d::Zero();  // of the local AABB, in the shape frame
  Eigen::Vector3d aabb_size = Eigen::Vector3d::Zero();    // of the local AABB
  double inflation = 0.0;
  int box = -1;  // the handle of its box in the tree (−1 for planes)
};

struct Broadphase::Tree {
  std::unique_ptr<FclBoxTree> boxes = Fcl().NewBoxTree();
};

Broadphase::Broadphase(double margin) : margin_(margin) {
  if (!std::isfinite(margin) || margin < 0.0) {
    throw std::invalid_argument("Broadphase: margin must be finite and >= 0 (got " +
                                std::to_string(margin) + ")");
  }
}

Broadphase::~Broadphase() = default;

const Shape& Broadphase::shape(int id) const {
  return entries_[static_cast<std::size_t>(id)]->shape;
}
int Broadphase::body(int id) const { return entries_[static_cast<std::size_t>(id)]->body; }
const Eigen::Isometry3d& Broadphase::body_pose(int id) const {
  return entries_[static_cast<std::size_t>(id)]->X_WB;
}

int Broadphase::Add(const Shape& shape, int body, const Eigen::Isometry3d& X_WB,
                    CollisionFilter filter) {
  if (body < kStaticBody) {
    throw std::invalid_argument("Broadphase::Add: " + shape.Label() + ": body " +
                                std::to_string(body) + " is neither a body index nor static");
  }
  if (!X_WB.matrix().allFinite()) {
    throw std::invalid_argument("Broadphase::Add: " + shape.Label() + ": pose is not finite");
  }
  const int id = num_shapes();
  auto entry = std::make_unique<Entry>(
      Entry{shape, body, filter, X_WB, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), 0.0, -1});
  if (shape.type() == ShapeType::kPlane) {
    planes_.push_back(id);
  } else {
    const Eigen::AlignedBox3d box = shape.LocalAabb();
    entry->aabb_centre = box.center();
    entry->aabb_size = box.sizes();
    const Eigen::Vector3d size = box.sizes() + Eigen::Vector3d::Constant(margin_);
    // The tree is made with the first box (a scene of planes alone never loads FCL).
    if (!tree_) tree_ = std::make_unique<Tree>();
    entry->box = tree_->boxes->Add(size, BoxPose(*entry), id);
  }
  entries_.push_back(std::move(entry));
  dirty_ = true;
  return id;
}

void Broadphase::ExcludePair(int id_a, int id_b) {
  if (id_a < 0 || id_a >= num_shapes() || id_b < 0 || id_b >= num_shapes()) {
    throw std::invalid_argument("Broadphase::ExcludePair: unknown shape id " +
                                std::to_string(id_a) + " or " + std::to_string(id_b));
  }
  excluded_.emplace(std::min(id_a, id_b), std::max(id_a, id_b));
}

void Broadphase::SetBodyPose(int id, const Eigen::Isometry3d& X_WB) {
  if (id < 0 || id >= num_shapes()) {
    throw std::invalid_argument("Broadphase::SetBodyPose: unknown shape id " + std::to_string(id));
  }
  SetBodyPose(id, X_WB, entries_[static_cast<std::size_t>(id)]->inflation);
}

void Broadphase::SetBodyPose(int id, const Eigen::Isometry3d& X_WB, double inflation) {
  if (id < 0 || id >= num_shapes()) {
    throw std::invalid_argument("Broadphase::SetBodyPose: unknown shape id " + std::to_string(id));
  }
  if (!std::isfinite(inflation) || inflation < 0.0) {
    throw std::invalid_argument("Broadphase::SetBodyPose: shape " + std::to_string(id) +
                                ": inflation must be finite and >= 0 (got " +
                                std::to_string(inflation) + ")");
  }
  Entry& e = *entries_[static_cast<std::size_t>(id)];
  e.X_WB = X_WB;
  dirty_ = true;
  if (e.box < 0) {
    e.inflation = inflation;
    return;
  }
  if (inflation != e.inflation) {
    e.inflation = inflation;
    tree_->boxes->Resize(e.box, e.aabb_size + Eigen::Vector3d::Constant(margin_ + 2.0 * inflation));
  }
  tree_->boxes->SetPose(e.box, BoxPose(e));
}

Eigen::Isometry3d Broadphase::BoxPose(const Entry& e) {
  Eigen::Isometry3d X_box = e.X_WB * e.shape.pose();
  X_box.translation() = X_box * e.aabb_centre;
  return X_box;
}

bool Broadphase::MayTouch(int a, int b) const {
  const Entry& ea = *entries_[static_cast<std::size_t>(a)];
  const Entry& eb = *entries_[static_cast<std::size_t>(b)];
  if (ea.body == eb.body) return false;  // same body, or both static
  if ((ea.filter.group & eb.filter.mask) == 0 || (eb.filter.group & ea.filter.mask) == 0) {
    return false;
  }
  return excluded_.count({std::min(a, b), std::max(a, b)}) == 0;
}

std::vector<std::pair<int, int>> Broadphase::CandidatePairs() {
  std::vector<std::pair<int, int>> raw;
  if (tree_) {
    if (dirty_) tree_->boxes->Refit();
    tree_->boxes->OverlappingPairs(&raw);
  }
  dirty_ = false;
  for (int p : planes_) {
    const Entry& plane = *entries_[static_cast<std::size_t>(p)];
    const Eigen::Isometry3d X_p = plane.X_WB * plane.shape.pose();
    const Eigen::Vector3d n = X_p.linear() * plane.shape.plane_normal();
    const double offset = plane.shape.plane_offset() + n.dot(X_p.translation());
    for (int i = 0; i < num_shapes(); ++i) {
      if (i == p) continue;
      const Entry& e = *entries_[static_cast<std::size_t>(i)];
      if (e.shape.type() == ShapeType::kPlane) continue;  // plane–plane is not a contact
      const Eigen::Vector3d centre = e.X_WB * e.shape.pose().translation();
      if (n.dot(centre) - offset - e.shape.BoundingRadius() <=
          margin_ + e.inflation + plane.inflation) {
        raw.emplace_back(std::min(i, p), std::max(i, p));
      }
    }
  }
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(raw.size());
  for (const auto& [a, b] : raw) {
    if (MayTouch(a, b)) pairs.emplace_back(a, b);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

namespace {

// FCL's AABB::overlap on closed boxes.
bool Overlap(const Eigen::AlignedBox3d& a, const Eigen::AlignedBox3d& b) {
  for (int k = 0; k < 3; ++k) {
    if (a.min()[k] > b.max()[k] || b.min()[k] > a.max()[k]) return false;
  }
  return true;
}

std::uint64_t CellHash(const std::array<std::int64_t, 3>& c) {
  // Spatial hashing primes (Teschner et al. 2003, "Optimized Spatial Hashing for Collision
  // Detection of Deformable Objects").
  return static_cast<std::uint64_t>(c[0]) * 73856093ULL ^
         static_cast<std::uint64_t>(c[1]) * 19349663ULL ^
         static_cast<std::uint64_t>(c[2]) * 83492791ULL;
}

}  // namespace

void AabbGrid::OverlappingPairs(std::span<const Eigen::AlignedBox3d> boxes,
                                std::span<const int> groups,
                                std::vector<std::pair<int, int>>* pairs) {
  if (boxes.size() != groups.size()) {
    throw std::invalid_argument("AabbGrid::OverlappingPairs: " + std::to_string(boxes.size()) +
                                " boxes but " + std::to_string(groups.size()) + " groups");
  }
  const int n = static_cast<int>(boxes.size());
  // Cell size: the median of the finite largest extents (1 if there is no positive one).
  extents_.clear();
  for (const auto& b : boxes) {
    const double e = (b.max() - b.min()).maxCoeff();
    if (std::isfinite(e) && e > 0.0) extents_.push_back(e);
  }
  double h = 1.0;
  if (!extents_.empty()) {
    const auto mid = extents_.begin() + static_cast<std::ptrdiff_t>(extents_.size() / 2);
    std::nth_element(extents_.begin(), mid, extents_.end());
    h = *mid;
  }
  // Cell ranges; boxes larger than 2h, or too far out for 64-bit cells, are compared with all.
  constexpr double kFarthestCell = 1e15;
  ranges_.resize(boxes.size());
  is_large_.assign(boxes.size(), 0);
  large_.clear();
  std::size_t num_entries = 0;
  for (int i = 0; i < n; ++i) {
    const auto& b = boxes[static_cast<std::size_t>(i)];
    const double e = (b.max() - b.min()).maxCoeff();
    bool large = !(e <= 2.0 * h);  // also NaN
    std::array<std::int64_t, 6>& r = ranges_[static_cast<std::size_t>(i)];
    for (int k = 0; k < 3 && !large; ++k) {
      const double lo = std::floor(b.min()[k] / h), hi = std::floor(b.max()[k] / h);
      if (!(std::abs(lo) <= kFarthestCell && std::abs(hi) <= kFarthestCell)) {
        large = true;
        break;
      }
      r[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(lo);
      r[static_cast<std::size_t>(k) + 3] = static_cast<std::int64_t>(hi);
    }
    if (large) {
      is_large_[static_cast<std::size_t>(i)] = 1;
      large_.push_back(i);
      continue;
    }
    num_entries +=
        static_cast<std::size_t>((r[3] - r[0] + 1) * (r[4] - r[1] + 1) * (r[5] - r[2] + 1));
  }
  // Buckets: a power of two ≥ 2 entries; counting sort of the entries by bucket.
  std::size_t num_buckets = 16;
  while (num_buckets < 2 * num_entries) num_buckets *= 2;
  const std::size_t mask = num_buckets - 1;
  const auto for_each_cell = [&](int i, auto&& fn) {
    const std::array<std::int64_t, 6>& r = ranges_[static_cast<std::size_t>(i)];
    for (std::int64_t x = r[0]; x <= r[3]; ++x) {
      for (std::int64_t y = r[1]; y <= r[4]; ++y) {
        for (std::int64_t z = r[2]; z <= r[5]; ++z) fn(std::array<std::int64_t, 3>{x, y, z});
      }
    }
  };
  bucket_start_.assign(num_buckets + 1, 0);
  for (int i = 0; i < n; ++i) {
    if (is_large_[static_cast<std::size_t>(i)]) continue;
    for_each_cell(i, [&](const std::array<std::int64_t, 3>& c) {
      ++bucket_start_[(CellHash(c) & mask) + 1];
    });
  }
  for (std::size_t b = 0; b < num_buckets; ++b) bucket_start_[b + 1] += bucket_start_[b];
  entries_.resize(num_entries);
  for (int i = 0; i < n; ++i) {
    if (is_large_[static_cast<std::size_t>(i)]) continue;
    const std::array<std::int64_t, 6>& r = ranges_[static_cast<std::size_t>(i)];
    for_each_cell(i, [&](const std::array<std::int64_t, 3>& c) {
      const std::uint64_t hash = CellHash(c);
      const std::size_t b = hash & mask;
      const unsigned lower_axes =
          (c[0] == r[0] ? 1u : 0u) | (c[1] == r[1] ? 2u : 0u) | (c[2] == r[2] ? 4u : 0u);
      entries_[static_cast<std::size_t>(bucket_start_[b]++)] = Entry{i, lower_axes, hash, c};
    });
  }
  // bucket_start_[b] now holds the end of bucket b, i.e. the start of bucket b + 1.
  for (std::size_t b = 0; b < num_buckets; ++b) {
    const int begin = b == 0 ? 0 : bucket_start_[b - 1], end = bucket_start_[b];
    for (int u = begin; u < end; ++u) {
      const Entry& eu = entries_[static_cast<std::size_t>(u)];
      for (int w = u + 1; w < end; ++w) {
        const Entry& ew = entries_[static_cast<std::size_t>(w)];
        // Only in the cell of the intersection's lower corner: floor is monotone, so that cell
        // is the larger of the two lower cells on each axis, i.e. (both boxes covering the cell)
        // on each axis the lower cell of one of them.
        if ((eu.lower_axes | ew.lower_axes) != 7u) continue;
        // Another cell hashed into the same bucket.
        if (ew.hash != eu.hash || ew.cell[0] != eu.cell[0] || ew.cell[1] != eu.cell[1] ||
            ew.cell[2] != eu.cell[2]) {
          continue;
        }
        if (groups[static_cast<std::size_t>(eu.box)] == groups[static_cast<std::size_t>(ew.box)]) {
          continue;
        }
        if (!Overlap(boxes[static_cast<std::size_t>(eu.box)],
                     boxes[static_cast<std::size_t>(ew.box)])) {
          continue;
        }
        pairs->emplace_back(std::min(eu.box, ew.box), std::max(eu.box, ew.box));
      }
    }
  }
  for (const int l : large_) {
    for (int j = 0; j < n; ++j) {
      // A pair of large boxes is compared from its lower index only.
      if (j == l || (is_large_[static_cast<std::size_t>(j)] && j < l)) continue;
      if (groups[static_cast<std::size_t>(l)] == groups[static_cast<std::size_t>(j)]) continue;
      if (!Overlap(boxes[static_cast<std::size_t>(l)], boxes[static_cast<std::size_t>(j)])) {
        continue;
      }
      pairs->emplace_back(std::min(l, j), std::max(l, j));
    }
  }
}

void AabbGrid::OverlappingPairsCached(std::span<const Eigen::AlignedBox3d> boxes,
                                      std::span<const int> groups, double slack,
                                      std::vector<std::pair<int, int>>* pairs) {
  if (boxes.size() != groups.size()) {
    throw std::invalid_argument(
        "AabbGrid::OverlappingPairsCached: " + std::to_string(boxes.size()) + " boxes but " +
        std::to_string(groups.size()) + " groups");
  }
  if (!(slack >= 0.0) || !std::isfinite(slack)) {
    throw std::invalid_argument("AabbGrid::OverlappingPairsCached: slack must be finite and >= 0");
  }
  bool inside = fat_valid_ && fat_boxes_.size() == boxes.size() &&
                std::equal(groups.begin(), groups.end(), fat_groups_.begin());
  double extent_sum = 0.0;
  for (std::size_t i = 0; i < boxes.size() && inside; ++i) {
    // False for a NaN corner too.
    inside = (boxes[i].min().array() >= fat_boxes_[i].min().array()).all() &&
             (boxes[i].max().array() <= fat_boxes_[i].max().array()).all();
    extent_sum += (boxes[i].max() - boxes[i].min()).maxCoeff();
  }
  // Boxes that shrank to less than half their size at the rebuild (a query with a long horizon
  // or a large margin before) would keep testing the many pairs of the old fat boxes: rebuilt.
  if (inside && extent_sum < 0.5 * fat_extent_sum_) inside = false;
  if (!inside) {
    fat_extent_sum_ = 0.0;
    for (const auto& b : boxes) fat_extent_sum_ += (b.max() - b.min()).maxCoeff();
    fat_boxes_.resize(boxes.size());
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      const double grow = slack * (boxes[i].max() - boxes[i].min()).maxCoeff();
      fat_boxes_[i] = boxes[i];
      if (std::isfinite(grow)) {
        fat_boxes_[i].min().array() -= grow;
        fat_boxes_[i].max().array() += grow;
      }
    }
    fat_groups_.assign(groups.begin(), groups.end());
    fat_pairs_.clear();
    OverlappingPairs(fat_boxes_, fat_groups_, &fat_pairs_);
    fat_valid_ = true;
    ++rebuilds_;
  }
  for (const auto& [a, b] : fat_pairs_) {
    if (Overlap(boxes[static_cast<std::size_t>(a)], boxes[static_cast<std::size_t>(b)])) {
      pairs->emplace_back(a, b);
    }
  }
}

}  // namespace saltus::contact
