// Every call Saltus makes into FCL 0.7 (its geometries, its distance and collision queries, its
// dynamic AABB tree) goes through the interface FclBackend, implemented in fcl_backend.cc.
//
// Why an interface: libfcl is the largest library Saltus links (29,000 symbol relocations, with
// liboctomap 30,000; a program that only links it spends 2.4 ms in the dynamic loader, measured
// against an empty program: docs/benchmarks.md, "Start-up without FCL"). Most runs never touch a
// 3D shape (every planar scene: the bouncing ball, mechanisms, the planar contact examples), so
// the `saltus` command line loads FCL on demand: its FclBackend lives in the module
// libsaltus_fcl.so, opened (dlopen) by the first call of Fcl() (fcl_loader.cc). Every other
// program, the tests, the Python module and outside projects link the same implementation
// directly (fcl_direct.cc); which one a program gets is chosen by its CMake property
// SALTUS_FCL_ON_DEMAND (contact/CMakeLists.txt).
#pragma once

#include <Eigen/Geometry>
#include <memory>
#include <utility>
#include <vector>

#include "contact/shapes.h"  // TriangleMesh and the declaration of fcl::CollisionGeometry

namespace saltus::contact {

using FclGeometry = std::shared_ptr<fcl::CollisionGeometry<double>>;

// FCL's dynamic AABB tree over boxes, each with an integer id (contact::Broadphase).
class FclBoxTree {
 public:
  virtual ~FclBoxTree() = default;
  // Adds a box of the given side lengths, centred on its frame at pose X_WBox, with identifier
  // `id`; returns its handle for the calls below (0, 1, … in the order of addition).
  virtual int Add(const Eigen::Vector3d& size, const Eigen::Isometry3d& X_WBox, int id) = 0;
  // New side lengths of box `handle`.
  virtual void Resize(int handle, const Eigen::Vector3d& size) = 0;
  // Pose of box `handle` in the world.
  virtual void SetPose(int handle, const Eigen::Isometry3d& X_WBox) = 0;
  // Rebuilds or refits the tree to the boxes' current sizes and poses.
  virtual void Refit() = 0;
  // Appends the ids of every pair of overlapping boxes, each as (min, max) (as of the last Refit).
  virtual void OverlappingPairs(std::vector<std::pair<int, int>>* pairs) = 0;
};

class FclBackend {
 public:
  virtual ~FclBackend() = default;

  // Geometries in the shape frame (contact::Shape's factories; sizes as FCL takes them).
  virtual FclGeometry Sphere(double radius) const = 0;
  virtual FclGeometry Box(const Eigen::Vector3d& side) const = 0;
  virtual FclGeometry Cylinder(double radius, double length) const = 0;
  virtual FclGeometry Capsule(double radius, double length) const = 0;
  virtual FclGeometry Ellipsoid(const Eigen::Vector3d& radii) const = 0;
  virtual FclGeometry Halfspace(const Eigen::Vector3d& normal, double offset) const = 0;
  // A convex polytope (fcl::Convex) and a triangle soup in an OBBRSS tree (fcl::BVHModel).
  virtual FclGeometry Convex(const TriangleMesh& mesh) const = 0;
  virtual FclGeometry TriangleSoup(const TriangleMesh& mesh) const = 0;

  // fcl::distance with nearest points: the distance and the witness points in the world.
  struct Distance {
    double distance = 0.0;
    Eigen::Vector3d point_a = Eigen::Vector3d::Zero();
    Eigen::Vector3d point_b = Eigen::Vector3d::Zero();
  };
  virtual Distance Query(const FclGeometry& a, const Eigen::Isometry3d& X_WA, const FclGeometry& b,
                         const Eigen::Isometry3d& X_WB, double tolerance, bool indep_solver,
                         bool signed_distance) const = 0;
  // fcl::collide with one contact: whether they overlap, and FCL's first contact (normal from A
  // to B, penetration depth, position).
  struct Contact {
    bool found = false;
    double depth = 0.0;
    Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
    Eigen::Vector3d position = Eigen::Vector3d::Zero();
  };
  virtual Contact Collide(const FclGeometry& a, const Eigen::Isometry3d& X_WA, const FclGeometry& b,
                          const Eigen::Isometry3d& X_WB, bool indep_solver) const = 0;

  virtual std::unique_ptr<FclBoxTree> NewBoxTree() const = 0;
};

// The backend of this program (loaded on the first call where it is a module). Throws
// std::runtime_error naming the module and the loader's message if it cannot be loaded.
const FclBackend& Fcl();

// Whether this program's FCL backend is in use (always true where FCL is linked directly; after
// the first Fcl() call where it is loaded on demand).
bool FclLoaded();

}  // namespace saltus::contact
