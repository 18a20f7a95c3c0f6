// Every call Saltus makes into FCL 0.7 (its geometries, its distance and collision queries, its
// dynamic AABB tree) goes through FclBackend: C++ over the plain-data interface of
// contact/fcl_module.h, which crosses from Saltus into the FCL module.
//
// Why a module: libfcl is the largest library Saltus links (29,000 symbol relocations, with
// liboctomap 30,000; a program that only links it spends 2.4 ms in the dynamic loader, measured
// against an empty program: docs/benchmarks.md, "Start-up without FCL"). Most runs never touch a
// 3D shape (every planar scene: the bouncing ball, mechanisms, the planar contact examples), so
// the `saltus` command line loads FCL on demand: the module libsaltus_fcl.so, opened (dlopen) by
// the first call of Fcl() (fcl_loader.cc). Why plain data: the command line links its C++ runtime
// statically and the module brings the shared one (fcl_module.h). Every other program, the tests,
// the Python module and outside projects link the same functions directly (fcl_direct.cc); which
// one a program gets is chosen by its CMake property SALTUS_FCL_ON_DEMAND
// (contact/CMakeLists.txt). Errors reported by the module are thrown here as std::runtime_error.
#pragma once

#include <Eigen/Geometry>
#include <memory>
#include <utility>
#include <vector>

#include "contact/fcl_module.h"
#include "contact/shapes.h"  // TriangleMesh

namespace saltus::contact {

// A geometry of the module, released by the module when the last copy goes.
using FclGeometry = std::shared_ptr<const SaltusFclGeometry>;

// FCL's dynamic AABB tree over boxes, each with an integer id (contact::Broadphase).
class FclBoxTree {
 public:
  explicit FclBoxTree(const SaltusFclApi& api);
  ~FclBoxTree();
  FclBoxTree(const FclBoxTree&) = delete;
  FclBoxTree& operator=(const FclBoxTree&) = delete;
  // Adds a box of the given side lengths, centred on its frame at pose X_WBox, with identifier
  // `id`; returns its handle for the calls below (0, 1, … in the order of addition).
  int Add(const Eigen::Vector3d& size, const Eigen::Isometry3d& X_WBox, int id);
  // New side lengths of box `handle`.
  void Resize(int handle, const Eigen::Vector3d& size);
  // Pose of box `handle` in the world.
  void SetPose(int handle, const Eigen::Isometry3d& X_WBox);
  // Rebuilds or refits the tree to the boxes' current sizes and poses.
  void Refit();
  // Appends the ids of every pair of overlapping boxes, each as (min, max) (as of the last Refit).
  void OverlappingPairs(std::vector<std::pair<int, int>>* pairs);

 private:
  const SaltusFclApi& api_;
  SaltusFclBoxTree* tree_;
  std::vector<int> ids_;  // workspace of OverlappingPairs
};

class FclBackend {
 public:
  explicit FclBackend(const SaltusFclApi& api) : api_(api) {}

  // Geometries in the shape frame (contact::Shape's factories; sizes as FCL takes them).
  FclGeometry Sphere(double radius) const;
  FclGeometry Box(const Eigen::Vector3d& side) const;
  FclGeometry Cylinder(double radius, double length) const;
  FclGeometry Capsule(double radius, double length) const;
  FclGeometry Ellipsoid(const Eigen::Vector3d& radii) const;
  FclGeometry Halfspace(const Eigen::Vector3d& normal, double offset) const;
  // A convex polytope (fcl::Convex) and a triangle soup in an OBBRSS tree (fcl::BVHModel).
  FclGeometry Convex(const TriangleMesh& mesh) const;
  FclGeometry TriangleSoup(const TriangleMesh& mesh) const;

  // fcl::distance with nearest points: the distance and the witness points in the world.
  struct Distance {
    double distance = 0.0;
    Eigen::Vector3d point_a = Eigen::Vector3d::Zero();
    Eigen::Vector3d point_b = Eigen::Vector3d::Zero();
  };
  Distance Query(const FclGeometry& a, const Eigen::Isometry3d& X_WA, const FclGeometry& b,
                 const Eigen::Isometry3d& X_WB, double tolerance, bool indep_solver,
                 bool signed_distance) const;
  // fcl::collide with one contact: whether they overlap, and FCL's first contact (normal from A
  // to B, penetration depth, position).
  struct Contact {
    bool found = false;
    double depth = 0.0;
    Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
    Eigen::Vector3d position = Eigen::Vector3d::Zero();
  };
  Contact Collide(const FclGeometry& a, const Eigen::Isometry3d& X_WA, const FclGeometry& b,
                  const Eigen::Isometry3d& X_WB, bool indep_solver) const;

  std::unique_ptr<FclBoxTree> NewBoxTree() const;

 private:
  FclGeometry Wrap(SaltusFclGeometry* geometry, const char* error) const;
  const SaltusFclApi& api_;
};

// The backend of this program (loaded on the first call where it is a module). Throws
// std::runtime_error naming the module and the loader's message if it cannot be loaded.
const FclBackend& Fcl();

// The module's functions (fcl_direct.cc or fcl_loader.cc; Fcl() wraps them). Throws as Fcl().
const SaltusFclApi& FclApi();

// Whether this program's FCL backend is in use (always true where FCL is linked directly; after
// the first Fcl() call where it is loaded on demand).
bool FclLoaded();

}  // namespace saltus::contact
