// The FCL 0.7 side of the plain-data interface contact/fcl_module.h. Built twice: into the module
// libsaltus_fcl.so that the command line opens on demand (fcl_loader.cc) and into the static
// saltus_fcl_direct linked by every other program (fcl_direct.cc). Every entry point catches
// every exception and reports it through the caller's error buffer, so that no exception leaves
// the module's C++ runtime.
#include "contact/fcl_module.h"

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

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

// The opaque handles of fcl_module.h.
struct SaltusFclGeometry {
  std::shared_ptr<fcl::CollisionGeometryd> geometry;
};

struct SaltusFclBoxTree {
  struct Box {
    std::shared_ptr<fcl::Boxd> geometry;
    std::unique_ptr<fcl::CollisionObjectd> object;
  };
  fcl::DynamicAABBTreeCollisionManagerd manager;
  std::vector<Box> boxes;
  std::vector<std::pair<int, int>> pairs;  // of the last box_tree_collide
};

namespace {

Eigen::Isometry3d ToIsometry(const double* pose) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.linear() = Eigen::Map<const Eigen::Matrix3d>(pose);
  X.translation() = Eigen::Map<const Eigen::Vector3d>(pose + 9);
  return X;
}

void Copy(const Eigen::Vector3d& v, double* out) {
  out[0] = v.x();
  out[1] = v.y();
  out[2] = v.z();
}

// Runs f, turning any exception into the message in `error` and a non-zero return.
template <typename F>
int Guard(char* error, std::size_t error_size, F&& f) noexcept {
  const auto report = [&](const char* what) {
    if (error != nullptr && error_size > 0) {
      std::strncpy(error, what, error_size - 1);
      error[error_size - 1] = '\0';
    }
  };
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    report(e.what());
  } catch (...) {
    report("unknown exception in FCL");
  }
  return 1;
}

SaltusFclGeometry* NewShape(int shape, const double* p, char* error, std::size_t error_size) {
  SaltusFclGeometry* result = nullptr;
  Guard(error, error_size, [&] {
    std::shared_ptr<fcl::CollisionGeometryd> g;
    switch (shape) {
      case SALTUS_FCL_SPHERE:
        g = std::make_shared<fcl::Sphered>(p[0]);
        break;
      case SALTUS_FCL_BOX:
        g = std::make_shared<fcl::Boxd>(p[0], p[1], p[2]);
        break;
      case SALTUS_FCL_CYLINDER:
        g = std::make_shared<fcl::Cylinderd>(p[0], p[1]);
        break;
      case SALTUS_FCL_CAPSULE:
        g = std::make_shared<fcl::Capsuled>(p[0], p[1]);
        break;
      case SALTUS_FCL_ELLIPSOID:
        g = std::make_shared<fcl::Ellipsoidd>(p[0], p[1], p[2]);
        break;
      case SALTUS_FCL_HALFSPACE:
        g = std::make_shared<fcl::Halfspaced>(Eigen::Vector3d(p[0], p[1], p[2]), p[3]);
        break;
      default:
        throw std::invalid_argument("unknown shape kind");
    }
    result = new SaltusFclGeometry{std::move(g)};
  });
  return result;
}

SaltusFclGeometry* NewMesh(int convex, const double* v, std::size_t vertex_count, const int* t,
                           std::size_t triangle_count, char* error, std::size_t error_size) {
  SaltusFclGeometry* result = nullptr;
  Guard(error, error_size, [&] {
    std::vector<Eigen::Vector3d> vertices(vertex_count);
    for (std::size_t i = 0; i < vertex_count; ++i)
      vertices[i] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
    if (convex != 0) {
      auto faces = std::make_shared<std::vector<int>>();
      faces->reserve(4 * triangle_count);
      for (std::size_t i = 0; i < triangle_count; ++i) {
        faces->push_back(3);
        faces->insert(faces->end(), t + 3 * i, t + 3 * i + 3);
      }
      result = new SaltusFclGeometry{std::make_shared<fcl::Convexd>(
          std::make_shared<std::vector<Eigen::Vector3d>>(std::move(vertices)),
          static_cast<int>(triangle_count), faces)};
      return;
    }
    auto bvh = std::make_shared<fcl::BVHModel<fcl::OBBRSSd>>();
    std::vector<fcl::Triangle> triangles;
    triangles.reserve(triangle_count);
    for (std::size_t i = 0; i < triangle_count; ++i) {
      triangles.emplace_back(static_cast<std::size_t>(t[3 * i]),
                             static_cast<std::size_t>(t[3 * i + 1]),
                             static_cast<std::size_t>(t[3 * i + 2]));
    }
    bvh->beginModel();
    bvh->addSubModel(vertices, triangles);
    bvh->endModel();
    bvh->computeLocalAABB();
    result = new SaltusFclGeometry{std::move(bvh)};
  });
  return result;
}

void ReleaseGeometry(SaltusFclGeometry* geometry) { delete geometry; }

int Distance(const SaltusFclGeometry* a, const double* pose_a, const SaltusFclGeometry* b,
             const double* pose_b, double tolerance, int indep_solver, int signed_distance,
             SaltusFclDistance* out, char* error, std::size_t error_size) {
  return Guard(error, error_size, [&] {
    fcl::DistanceRequestd request;
    request.enable_nearest_points = true;
    request.enable_signed_distance = signed_distance != 0;
    request.distance_tolerance = tolerance;
    request.gjk_solver_type = indep_solver != 0 ? fcl::GST_INDEP : fcl::GST_LIBCCD;
    fcl::DistanceResultd result;
    fcl::distance(a->geometry.get(), ToIsometry(pose_a), b->geometry.get(), ToIsometry(pose_b),
                  request, result);
    out->distance = result.min_distance;
    Copy(result.nearest_points[0], out->point_a);
    Copy(result.nearest_points[1], out->point_b);
  });
}

int Collide(const SaltusFclGeometry* a, const double* pose_a, const SaltusFclGeometry* b,
            const double* pose_b, int indep_solver, SaltusFclContact* out, char* error,
            std::size_t error_size) {
  return Guard(error, error_size, [&] {
    fcl::CollisionRequestd request;
    request.enable_contact = true;
    request.gjk_solver_type = indep_solver != 0 ? fcl::GST_INDEP : fcl::GST_LIBCCD;
    fcl::CollisionResultd result;
    fcl::collide(a->geometry.get(), ToIsometry(pose_a), b->geometry.get(), ToIsometry(pose_b),
                 request, result);
    *out = SaltusFclContact{0, 0.0, {0, 0, 1}, {0, 0, 0}};
    if (result.numContacts() == 0) return;
    const fcl::Contactd& first = result.getContact(0);
    out->found = 1;
    out->depth = first.penetration_depth;
    Copy(first.normal, out->normal);
    Copy(first.pos, out->position);
  });
}

SaltusFclBoxTree* NewBoxTree(char* error, std::size_t error_size) {
  SaltusFclBoxTree* result = nullptr;
  Guard(error, error_size, [&] { result = new SaltusFclBoxTree; });
  return result;
}

void ReleaseBoxTree(SaltusFclBoxTree* tree) { delete tree; }

int IdOf(const fcl::CollisionObjectd* o) {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(o->getUserData()));
}

bool CollectPair(fcl::CollisionObjectd* o1, fcl::CollisionObjectd* o2, void* data) {
  const int a = IdOf(o1), b = IdOf(o2);
  static_cast<std::vector<std::pair<int, int>>*>(data)->emplace_back(std::min(a, b),
                                                                     std::max(a, b));
  return false;  // keep going
}

int BoxTreeAdd(SaltusFclBoxTree* tree, const double* size, const double* pose, int id, int* handle,
               char* error, std::size_t error_size) {
  return Guard(error, error_size, [&] {
    SaltusFclBoxTree::Box box;
    box.geometry = std::make_shared<fcl::Boxd>(size[0], size[1], size[2]);
    box.object = std::make_unique<fcl::CollisionObjectd>(box.geometry);
    box.object->setUserData(reinterpret_cast<void*>(static_cast<std::intptr_t>(id)));
    box.object->setTransform(ToIsometry(pose));
    box.object->computeAABB();
    tree->manager.registerObject(box.object.get());
    tree->boxes.push_back(std::move(box));
    *handle = static_cast<int>(tree->boxes.size()) - 1;
  });
}

int BoxTreeResize(SaltusFclBoxTree* tree, int handle, const double* size, char* error,
                  std::size_t error_size) {
  return Guard(error, error_size, [&] {
    fcl::Boxd& box = *tree->boxes.at(static_cast<std::size_t>(handle)).geometry;
    box.side = Eigen::Vector3d(size[0], size[1], size[2]);
    box.computeLocalAABB();
  });
}

int BoxTreeSetPose(SaltusFclBoxTree* tree, int handle, const double* pose, char* error,
                   std::size_t error_size) {
  return Guard(error, error_size, [&] {
    fcl::CollisionObjectd& object = *tree->boxes.at(static_cast<std::size_t>(handle)).object;
    object.setTransform(ToIsometry(pose));
    object.computeAABB();
  });
}

int BoxTreeRefit(SaltusFclBoxTree* tree, char* error, std::size_t error_size) {
  return Guard(error, error_size, [&] {
    tree->manager.setup();  // rebuilds (or refits) the tree with the new AABBs
    tree->manager.update();
  });
}

int BoxTreeCollide(SaltusFclBoxTree* tree, std::size_t* count, char* error,
                   std::size_t error_size) {
  return Guard(error, error_size, [&] {
    tree->pairs.clear();
    tree->manager.collide(&tree->pairs, &CollectPair);
    *count = tree->pairs.size();
  });
}

void BoxTreePairs(const SaltusFclBoxTree* tree, int* pairs) {
  for (std::size_t i = 0; i < tree->pairs.size(); ++i) {
    pairs[2 * i] = tree->pairs[i].first;
    pairs[2 * i + 1] = tree->pairs[i].second;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const SaltusFclApi* saltus_fcl_api(void) {
  static const SaltusFclApi api = {SALTUS_FCL_ABI_VERSION,
                                   NewShape,
                                   NewMesh,
                                   ReleaseGeometry,
                                   Distance,
                                   Collide,
                                   NewBoxTree,
                                   ReleaseBoxTree,
                                   BoxTreeAdd,
                                   BoxTreeResize,
                                   BoxTreeSetPose,
                                   BoxTreeRefit,
                                   BoxTreeCollide,
                                   BoxTreePairs};
  return &api;
}
