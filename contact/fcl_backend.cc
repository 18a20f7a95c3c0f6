// The FCL 0.7 implementation of contact::FclBackend (fcl_backend.h). Built twice: into the module
// libsaltus_fcl.so that the command line opens on demand (entry point saltus_fcl_backend below)
// and into the static saltus_fcl_direct linked by every other program.
#include "contact/fcl_backend.h"

#include <fcl/broadphase/broadphase_dynamic_AABB_tree.h>
#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/geometry/shape/cylinder.h>
#include <fcl/geometry/shape/ellipsoid.h>
#include <fcl/geometry/shape/halfspace.h>
#include <fcl/geometry/shape/sphere.h>
#include <fcl/math/bv/OBBRSS.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/collision_object.h>
#include <fcl/narrowphase/distance.h>
#include <cstdint>

#include "contact/shapes.h"

namespace saltus::contact {
namespace {

class BoxTree final : public FclBoxTree {
 public:
  int Add(const Eigen::Vector3d& size, const Eigen::Isometry3d& X_WBox, int id) override {
    Box box;
    box.geometry = std::make_shared<fcl::Boxd>(size);
    box.object = std::make_unique<fcl::CollisionObjectd>(box.geometry);
    box.object->setUserData(reinterpret_cast<void*>(static_cast<std::intptr_t>(id)));
    box.object->setTransform(X_WBox);
    box.object->computeAABB();
    manager_.registerObject(box.object.get());
    boxes_.push_back(std::move(box));
    return static_cast<int>(boxes_.size()) - 1;
  }

  void Resize(int handle, const Eigen::Vector3d& size) override {
    Box& box = boxes_[static_cast<std::size_t>(handle)];
    box.geometry->side = size;
    box.geometry->computeLocalAABB();
  }

  void SetPose(int handle, const Eigen::Isometry3d& X_WBox) override {
    fcl::CollisionObjectd& object = *boxes_[static_cast<std::size_t>(handle)].object;
    object.setTransform(X_WBox);
    object.computeAABB();
  }

  void Refit() override {
    manager_.setup();  // rebuilds (or refits) the tree with the new AABBs
    manager_.update();
  }

  void OverlappingPairs(std::vector<std::pair<int, int>>* pairs) override {
    manager_.collide(pairs, &Collect);
  }

 private:
  struct Box {
    std::shared_ptr<fcl::Boxd> geometry;
    std::unique_ptr<fcl::CollisionObjectd> object;
  };

  static int IdOf(const fcl::CollisionObjectd* o) {
    return static_cast<int>(reinterpret_cast<std::intptr_t>(o->getUserData()));
  }

  static bool Collect(fcl::CollisionObjectd* o1, fcl::CollisionObjectd* o2, void* data) {
    const int a = IdOf(o1), b = IdOf(o2);
    static_cast<std::vector<std::pair<int, int>>*>(data)->emplace_back(std::min(a, b),
                                                                       std::max(a, b));
    return false;  // keep going
  }

  fcl::DynamicAABBTreeCollisionManagerd manager_;
  std::vector<Box> boxes_;
};

class Backend final : public FclBackend {
 public:
  FclGeometry Sphere(double radius) const override {
    return std::make_shared<fcl::Sphered>(radius);
  }
  FclGeometry Box(const Eigen::Vector3d& side) const override {
    return std::make_shared<fcl::Boxd>(side);
  }
  FclGeometry Cylinder(double radius, double length) const override {
    return std::make_shared<fcl::Cylinderd>(radius, length);
  }
  FclGeometry Capsule(double radius, double length) const override {
    return std::make_shared<fcl::Capsuled>(radius, length);
  }
  FclGeometry Ellipsoid(const Eigen::Vector3d& radii) const override {
    return std::make_shared<fcl::Ellipsoidd>(radii);
  }
  FclGeometry Halfspace(const Eigen::Vector3d& normal, double offset) const override {
    return std::make_shared<fcl::Halfspaced>(normal, offset);
  }

  FclGeometry Convex(const TriangleMesh& mesh) const override {
    auto vertices = std::make_shared<std::vector<Eigen::Vector3d>>(mesh.vertices);
    auto faces = std::make_shared<std::vector<int>>();
    faces->reserve(4 * mesh.triangles.size());
    for (const auto& t : mesh.triangles) {
      faces->push_back(3);
      faces->insert(faces->end(), t.begin(), t.end());
    }
    return std::make_shared<fcl::Convexd>(vertices, static_cast<int>(mesh.triangles.size()), faces);
  }

  FclGeometry TriangleSoup(const TriangleMesh& mesh) const override {
    auto bvh = std::make_shared<fcl::BVHModel<fcl::OBBRSSd>>();
    std::vector<fcl::Triangle> triangles;
    triangles.reserve(mesh.triangles.size());
    for (const auto& t : mesh.triangles) {
      triangles.emplace_back(static_cast<std::size_t>(t[0]), static_cast<std::size_t>(t[1]),
                             static_cast<std::size_t>(t[2]));
    }
    bvh->beginModel();
    bvh->addSubModel(mesh.vertices, triangles);
    bvh->endModel();
    bvh->computeLocalAABB();
    return bvh;
  }

  Distance Query(const FclGeometry& a, const Eigen::Isometry3d& X_WA, const FclGeometry& b,
                 const Eigen::Isometry3d& X_WB, double tolerance, bool indep_solver,
                 bool signed_distance) const override {
    fcl::DistanceRequestd request;
    request.enable_nearest_points = true;
    request.enable_signed_distance = signed_distance;
    request.distance_tolerance = tolerance;
    request.gjk_solver_type = indep_solver ? fcl::GST_INDEP : fcl::GST_LIBCCD;
    fcl::DistanceResultd result;
    fcl::distance(a.get(), X_WA, b.get(), X_WB, request, result);
    return {result.min_distance, result.nearest_points[0], result.nearest_points[1]};
  }

  Contact Collide(const FclGeometry& a, const Eigen::Isometry3d& X_WA, const FclGeometry& b,
                  const Eigen::Isometry3d& X_WB, bool indep_solver) const override {
    fcl::CollisionRequestd request;
    request.enable_contact = true;
    request.gjk_solver_type = indep_solver ? fcl::GST_INDEP : fcl::GST_LIBCCD;
    fcl::CollisionResultd result;
    fcl::collide(a.get(), X_WA, b.get(), X_WB, request, result);
    Contact c;
    if (result.numContacts() == 0) return c;
    const fcl::Contactd& first = result.getContact(0);
    c.found = true;
    c.depth = first.penetration_depth;
    c.normal = first.normal;
    c.position = first.pos;
    return c;
  }

  std::unique_ptr<FclBoxTree> NewBoxTree() const override { return std::make_unique<BoxTree>(); }
};

}  // namespace
}  // namespace saltus::contact

// The module's entry point (looked up by name: fcl_loader.cc), also called by fcl_direct.cc.
extern "C" __attribute__((visibility("default"))) const saltus::contact::FclBackend*
saltus_fcl_backend() {
  static const saltus::contact::Backend backend;
  return &backend;
}
