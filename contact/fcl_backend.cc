// contact::FclBackend (fcl_backend.h): C++ over the plain-data functions of the FCL module
// (fcl_module.h), wherever they come from (fcl_direct.cc or fcl_loader.cc).
#include "contact/fcl_backend.h"

#include <array>
#include <stdexcept>
#include <string>

namespace saltus::contact {
namespace {

using Error = std::array<char, 512>;

// The 12 doubles of a pose in fcl_module.h: R column by column, then p.
std::array<double, 12> ToPose(const Eigen::Isometry3d& X) {
  std::array<double, 12> pose;
  Eigen::Map<Eigen::Matrix3d>(pose.data()) = X.linear();
  Eigen::Map<Eigen::Vector3d>(pose.data() + 9) = X.translation();
  return pose;
}

void Check(int status, const Error& error) {
  if (status != 0) throw std::runtime_error("FCL: " + std::string(error.data()));
}

// The mesh's vertices as x, y, z triples and its triangles as index triples, as the module takes
// them (null for an empty vector: data() of an empty vector may be null).
const double* VertexData(const TriangleMesh& mesh) {
  static_assert(sizeof(Eigen::Vector3d) == 3 * sizeof(double));
  return mesh.vertices.empty() ? nullptr : mesh.vertices.front().data();
}

const int* TriangleData(const TriangleMesh& mesh) {
  static_assert(sizeof(std::array<int, 3>) == 3 * sizeof(int));
  return mesh.triangles.empty() ? nullptr : mesh.triangles.front().data();
}

}  // namespace

FclGeometry FclBackend::Wrap(SaltusFclGeometry* geometry, const char* error) const {
  if (geometry == nullptr) throw std::runtime_error("FCL: " + std::string(error));
  const auto release = api_.release_geometry;
  return FclGeometry(geometry, [release](const SaltusFclGeometry* g) {
    release(const_cast<SaltusFclGeometry*>(g));
  });
}

FclGeometry FclBackend::Sphere(double radius) const {
  Error error{};
  const double p[] = {radius};
  return Wrap(api_.new_shape(SALTUS_FCL_SPHERE, p, error.data(), error.size()), error.data());
}

FclGeometry FclBackend::Box(const Eigen::Vector3d& side) const {
  Error error{};
  return Wrap(api_.new_shape(SALTUS_FCL_BOX, side.data(), error.data(), error.size()),
              error.data());
}

FclGeometry FclBackend::Cylinder(double radius, double length) const {
  Error error{};
  const double p[] = {radius, length};
  return Wrap(api_.new_shape(SALTUS_FCL_CYLINDER, p, error.data(), error.size()), error.data());
}

FclGeometry FclBackend::Capsule(double radius, double length) const {
  Error error{};
  const double p[] = {radius, length};
  return Wrap(api_.new_shape(SALTUS_FCL_CAPSULE, p, error.data(), error.size()), error.data());
}

FclGeometry FclBackend::Ellipsoid(const Eigen::Vector3d& radii) const {
  Error error{};
  return Wrap(api_.new_shape(SALTUS_FCL_ELLIPSOID, radii.data(), error.data(), error.size()),
              error.data());
}

FclGeometry FclBackend::Halfspace(const Eigen::Vector3d& normal, double offset) const {
  Error error{};
  const double p[] = {normal.x(), normal.y(), normal.z(), offset};
  return Wrap(api_.new_shape(SALTUS_FCL_HALFSPACE, p, error.data(), error.size()), error.data());
}

FclGeometry FclBackend::Convex(const TriangleMesh& mesh) const {
  Error error{};
  return Wrap(api_.new_mesh(1, VertexData(mesh), mesh.vertices.size(), TriangleData(mesh),
                            mesh.triangles.size(), error.data(), error.size()),
              error.data());
}

FclGeometry FclBackend::TriangleSoup(const TriangleMesh& mesh) const {
  Error error{};
  return Wrap(api_.new_mesh(0, VertexData(mesh), mesh.vertices.size(), TriangleData(mesh),
                            mesh.triangles.size(), error.data(), error.size()),
              error.data());
}

FclBackend::Distance FclBackend::Query(const FclGeometry& a, const Eigen::Isometry3d& X_WA,
                                       const FclGeometry& b, const Eigen::Isometry3d& X_WB,
                                       double tolerance, bool indep_solver,
                                       bool signed_distance) const {
  Error error{};
  SaltusFclDistance d{};
  const auto pose_a = ToPose(X_WA), pose_b = ToPose(X_WB);
  Check(api_.distance(a.get(), pose_a.data(), b.get(), pose_b.data(), tolerance, indep_solver,
                      signed_distance, &d, error.data(), error.size()),
        error);
  return {d.distance, Eigen::Vector3d(d.point_a[0], d.point_a[1], d.point_a[2]),
          Eigen::Vector3d(d.point_b[0], d.point_b[1], d.point_b[2])};
}

FclBackend::Contact FclBackend::Collide(const FclGeometry& a, const Eigen::Isometry3d& X_WA,
                                        const FclGeometry& b, const Eigen::Isometry3d& X_WB,
                                        bool indep_solver) const {
  Error error{};
  SaltusFclContact c{};
  const auto pose_a = ToPose(X_WA), pose_b = ToPose(X_WB);
  Check(api_.collide(a.get(), pose_a.data(), b.get(), pose_b.data(), indep_solver, &c, error.data(),
                     error.size()),
        error);
  Contact contact;
  if (c.found == 0) return contact;
  contact.found = true;
  contact.depth = c.depth;
  contact.normal = Eigen::Vector3d(c.normal[0], c.normal[1], c.normal[2]);
  contact.position = Eigen::Vector3d(c.position[0], c.position[1], c.position[2]);
  return contact;
}

std::unique_ptr<FclBoxTree> FclBackend::NewBoxTree() const {
  return std::make_unique<FclBoxTree>(api_);
}

FclBoxTree::FclBoxTree(const SaltusFclApi& api) : api_(api) {
  Error error{};
  tree_ = api_.new_box_tree(error.data(), error.size());
  if (tree_ == nullptr) throw std::runtime_error("FCL: " + std::string(error.data()));
}

FclBoxTree::~FclBoxTree() { api_.release_box_tree(tree_); }

int FclBoxTree::Add(const Eigen::Vector3d& size, const Eigen::Isometry3d& X_WBox, int id) {
  Error error{};
  int handle = -1;
  const auto pose = ToPose(X_WBox);
  Check(api_.box_tree_add(tree_, size.data(), pose.data(), id, &handle, error.data(), error.size()),
        error);
  return handle;
}

void FclBoxTree::Resize(int handle, const Eigen::Vector3d& size) {
  Error error{};
  Check(api_.box_tree_resize(tree_, handle, size.data(), error.data(), error.size()), error);
}

void FclBoxTree::SetPose(int handle, const Eigen::Isometry3d& X_WBox) {
  Error error{};
  const auto pose = ToPose(X_WBox);
  Check(api_.box_tree_set_pose(tree_, handle, pose.data(), error.data(), error.size()), error);
}

void FclBoxTree::Refit() {
  Error error{};
  Check(api_.box_tree_refit(tree_, error.data(), error.size()), error);
}

void FclBoxTree::OverlappingPairs(std::vector<std::pair<int, int>>* pairs) {
  Error error{};
  std::size_t count = 0;
  Check(api_.box_tree_collide(tree_, &count, error.data(), error.size()), error);
  ids_.resize(2 * count);
  api_.box_tree_pairs(tree_, ids_.data());
  for (std::size_t i = 0; i < count; ++i) pairs->emplace_back(ids_[2 * i], ids_[2 * i + 1]);
}

const FclBackend& Fcl() {
  static const FclBackend backend(FclApi());
  return backend;
}

}  // namespace saltus::contact
