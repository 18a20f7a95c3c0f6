#include "contact/broadphase.h"

#include <fcl/broadphase/broadphase_dynamic_AABB_tree.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/narrowphase/collision_object.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace saltus::contact {

struct Broadphase::Entry {
  Shape shape;
  int body = kStaticBody;
  CollisionFilter filter;
  Eigen::Isometry3d X_WB = Eigen::Isometry3d::Identity();
  Eigen::Vector3d aabb_centre = Eigen::Vector3d::Zero();  // of the local AABB, in the shape frame
  Eigen::Vector3d aabb_size = Eigen::Vector3d::Zero();    // of the local AABB
  double inflation = 0.0;
  std::shared_ptr<fcl::Boxd> box;                 // the object's geometry (null for planes)
  std::unique_ptr<fcl::CollisionObjectd> object;  // null for planes
};

struct Broadphase::Tree {
  fcl::DynamicAABBTreeCollisionManagerd manager;
};

namespace {

struct CollectData {
  std::vector<std::pair<int, int>>* pairs;
};

int IdOf(const fcl::CollisionObjectd* o) {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(o->getUserData()));
}

bool Collect(fcl::CollisionObjectd* o1, fcl::CollisionObjectd* o2, void* data) {
  const int a = IdOf(o1), b = IdOf(o2);
  static_cast<CollectData*>(data)->pairs->emplace_back(std::min(a, b), std::max(a, b));
  return false;  // keep going
}

}  // namespace

Broadphase::Broadphase(double margin) : margin_(margin), tree_(std::make_unique<Tree>()) {
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
  auto entry = std::make_unique<Entry>(Entry{shape, body, filter, X_WB, Eigen::Vector3d::Zero(),
                                             Eigen::Vector3d::Zero(), 0.0, nullptr, nullptr});
  if (shape.type() == ShapeType::kPlane) {
    planes_.push_back(id);
  } else {
    const Eigen::AlignedBox3d box = shape.LocalAabb();
    entry->aabb_centre = box.center();
    entry->aabb_size = box.sizes();
    const Eigen::Vector3d size = box.sizes() + Eigen::Vector3d::Constant(margin_);
    entry->box = std::make_shared<fcl::Boxd>(size);
    entry->object = std::make_unique<fcl::CollisionObjectd>(entry->box);
    entry->object->setUserData(reinterpret_cast<void*>(static_cast<std::intptr_t>(id)));
  }
  entries_.push_back(std::move(entry));
  SetBodyPose(id, X_WB);
  if (entries_.back()->object) tree_->manager.registerObject(entries_.back()->object.get());
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
  if (!e.object) {
    e.inflation = inflation;
    return;
  }
  if (inflation != e.inflation) {
    e.inflation = inflation;
    e.box->side = e.aabb_size + Eigen::Vector3d::Constant(margin_ + 2.0 * inflation);
    e.box->computeLocalAABB();
  }
  Eigen::Isometry3d X_box = X_WB * e.shape.pose();
  X_box.translation() = X_box * e.aabb_centre;
  e.object->setTransform(X_box);
  e.object->computeAABB();
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
  if (dirty_) {
    tree_->manager.setup();  // rebuilds (or refits) the tree with the new AABBs
    tree_->manager.update();
    dirty_ = false;
  }
  CollectData data{&raw};
  tree_->manager.collide(&data, &Collect);
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

}  // namespace saltus::contact
