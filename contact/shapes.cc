#include "contact/shapes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "contact/fcl_backend.h"
#include "contact/geometry3d.h"

namespace saltus::contact {
namespace {

[[noreturn]] void Fail(const std::string& label, const std::string& what) {
  throw std::invalid_argument(label + ": " + what);
}

void CheckPositive(double x, const std::string& label, const char* what) {
  if (!std::isfinite(x) || !(x > 0.0)) {
    Fail(label, std::string(what) + " must be finite and > 0 (got " + std::to_string(x) + ")");
  }
}

void CheckPose(const Eigen::Isometry3d& pose, const std::string& label) {
  if (!pose.matrix().allFinite()) Fail(label, "pose is not finite");
  const Eigen::Matrix3d R = pose.linear();
  // Tolerance: a rotation built from a unit quaternion in double is orthonormal to ~1e-15.
  if ((R.transpose() * R - Eigen::Matrix3d::Identity()).norm() > 1e-9 || R.determinant() < 0.0) {
    Fail(label, "pose rotation is not a proper rotation");
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TriangleMesh LoadObj(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("mesh file '" + path + "': cannot be opened");
  TriangleMesh mesh;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const auto fail = [&](const std::string& what) {
      throw std::invalid_argument("mesh file '" + path + "': line " + std::to_string(line_number) +
                                  ": " + what);
    };
    std::istringstream ls(line);
    std::string key;
    if (!(ls >> key) || key[0] == '#') continue;
    if (key == "v") {
      Eigen::Vector3d x;
      if (!(ls >> x.x() >> x.y() >> x.z()) || !x.allFinite()) fail("expected 'v x y z'");
      mesh.vertices.push_back(x);
    } else if (key == "f") {
      std::vector<int> face;
      std::string token;
      while (ls >> token) {
        int index = 0;
        try {
          std::size_t used = 0;
          index = std::stoi(token, &used);
          if (used < token.size() && token[used] != '/') fail("bad face index '" + token + "'");
        } catch (const std::logic_error&) {
          fail("bad face index '" + token + "'");
        }
        const int n = static_cast<int>(mesh.vertices.size());
        if (index < 0) index = n + index + 1;  // OBJ: −1 is the last vertex read so far
        if (index < 1 || index > n) fail("face index " + token + " out of range");
        face.push_back(index - 1);
      }
      if (face.size() < 3) fail("a face needs at least 3 vertices");
      for (std::size_t k = 1; k + 1 < face.size(); ++k) {
        mesh.triangles.push_back({face[0], face[k], face[k + 1]});
      }
    }
    // Other keys (vn, vt, o, g, s, usemtl, mtllib) carry nothing the geometry needs.
  }
  if (mesh.triangles.empty()) throw std::invalid_argument("mesh file '" + path + "': no faces");
  return mesh;
}

// Merges bit-identical vertices (STL repeats every vertex once per triangle).
int VertexIndex(const Eigen::Vector3d& x, std::map<std::array<double, 3>, int>& index,
                TriangleMesh& mesh) {
  const std::array<double, 3> key{x.x(), x.y(), x.z()};
  const auto [it, inserted] = index.emplace(key, static_cast<int>(mesh.vertices.size()));
  if (inserted) mesh.vertices.push_back(x);
  return it->second;
}

TriangleMesh LoadStl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("mesh file '" + path + "': cannot be opened");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("mesh file '" + path + "': " + what);
  };
  TriangleMesh mesh;
  std::map<std::array<double, 3>, int> index;
  // Binary STL: 80-byte header, uint32 count, 50 bytes per triangle. Some binary files start
  // with "solid" too, so the size decides.
  bool binary = bytes.size() >= 84;
  std::uint32_t count = 0;
  if (binary) {
    std::memcpy(&count, bytes.data() + 80, 4);
    binary = bytes.size() == 84 + 50 * static_cast<std::size_t>(count);
  }
  if (binary) {
    for (std::uint32_t t = 0; t < count; ++t) {
      const char* p = bytes.data() + 84 + 50 * static_cast<std::size_t>(t) + 12;
      std::array<int, 3> tri{};
      for (int k = 0; k < 3; ++k) {
        float xyz[3];
        std::memcpy(xyz, p + 12 * k, 12);
        const Eigen::Vector3d x(xyz[0], xyz[1], xyz[2]);
        if (!x.allFinite()) fail("triangle " + std::to_string(t) + " has a non-finite vertex");
        tri[static_cast<std::size_t>(k)] = VertexIndex(x, index, mesh);
      }
      mesh.triangles.push_back(tri);
    }
  } else {
    std::istringstream text(bytes);
    std::string line;
    int line_number = 0;
    std::vector<int> pending;
    while (std::getline(text, line)) {
      ++line_number;
      std::istringstream ls(line);
      std::string key;
      if (!(ls >> key)) continue;
      if (key == "vertex") {
        Eigen::Vector3d x;
        if (!(ls >> x.x() >> x.y() >> x.z()) || !x.allFinite()) {
          fail("line " + std::to_string(line_number) + ": expected 'vertex x y z'");
        }
        pending.push_back(VertexIndex(x, index, mesh));
      } else if (key == "endloop") {
        if (pending.size() != 3) {
          fail("line " + std::to_string(line_number) + ": a facet needs exactly 3 vertices");
        }
        mesh.triangles.push_back({pending[0], pending[1], pending[2]});
        pending.clear();
      }
    }
  }
  if (mesh.triangles.empty()) fail("no triangles (neither binary nor ASCII STL)");
  return mesh;
}

void CheckMeshIndices(const TriangleMesh& mesh, const std::string& label) {
  const int n = static_cast<int>(mesh.vertices.size());
  if (mesh.triangles.empty()) Fail(label, "mesh has no triangles");
  for (const Eigen::Vector3d& x : mesh.vertices) {
    if (!x.allFinite()) Fail(label, "mesh has a non-finite vertex");
  }
  for (const auto& t : mesh.triangles) {
    for (int i : t) {
      if (i < 0 || i >= n) Fail(label, "triangle index " + std::to_string(i) + " out of range");
    }
  }
}

double MeshSize(const TriangleMesh& mesh) {
  Eigen::AlignedBox3d box;
  for (const Eigen::Vector3d& x : mesh.vertices) box.extend(x);
  return box.diagonal().norm();
}

}  // namespace

const char* ToString(ShapeType type) {
  switch (type) {
    case ShapeType::kSphere:
      return "sphere";
    case ShapeType::kBox:
      return "box";
    case ShapeType::kCylinder:
      return "cylinder";
    case ShapeType::kCapsule:
      return "capsule";
    case ShapeType::kEllipsoid:
      return "ellipsoid";
    case ShapeType::kPlane:
      return "plane";
    case ShapeType::kConvexMesh:
      return "convex_mesh";
    case ShapeType::kTriangleMesh:
      return "triangle_mesh";
  }
  return "unknown";
}

std::vector<PlanarFace> PlanarFaces(const TriangleMesh& mesh, double angle_tolerance) {
  const std::size_t nt = mesh.triangles.size();
  std::vector<Eigen::Vector3d> normals(nt);
  std::map<std::pair<int, int>, std::vector<std::size_t>> edge_triangles;
  for (std::size_t f = 0; f < nt; ++f) {
    const auto& t = mesh.triangles[f];
    const Eigen::Vector3d& a = mesh.vertices[static_cast<std::size_t>(t[0])];
    const Eigen::Vector3d n = (mesh.vertices[static_cast<std::size_t>(t[1])] - a)
                                  .cross(mesh.vertices[static_cast<std::size_t>(t[2])] - a);
    normals[f] = n.norm() > 0.0 ? Eigen::Vector3d(n.normalized()) : Eigen::Vector3d::Zero();
    for (int k = 0; k < 3; ++k) {
      const int i = t[static_cast<std::size_t>(k)], j = t[static_cast<std::size_t>((k + 1) % 3)];
      edge_triangles[{std::min(i, j), std::max(i, j)}].push_back(f);
    }
  }
  std::vector<int> face_of(nt, -1);
  std::vector<PlanarFace> faces;
  for (std::size_t seed = 0; seed < nt; ++seed) {
    if (face_of[seed] >= 0) continue;
    const int id = static_cast<int>(faces.size());
    std::vector<std::size_t> members = {seed}, stack = {seed};
    face_of[seed] = id;
    while (!stack.empty() && normals[seed].squaredNorm() > 0.0) {
      const std::size_t f = stack.back();
      stack.pop_back();
      const auto& t = mesh.triangles[f];
      for (int k = 0; k < 3; ++k) {
        const int i = t[static_cast<std::size_t>(k)], j = t[static_cast<std::size_t>((k + 1) % 3)];
        for (std::size_t other : edge_triangles[{std::min(i, j), std::max(i, j)}]) {
          // The angle by atan2(|n × m|, n·m): accurate for tiny angles, where 1 − cos is below
          // round-off.
          const double angle = std::atan2(normals[other].cross(normals[seed]).norm(),
                                          normals[other].dot(normals[seed]));
          if (face_of[other] >= 0 || normals[other].squaredNorm() == 0.0 ||
              !(angle <= angle_tolerance)) {
            continue;
          }
          face_of[other] = id;
          members.push_back(other);
          stack.push_back(other);
        }
      }
    }
    std::sort(members.begin(), members.end());
    PlanarFace face;
    std::map<int, int> local;  // input vertex -> face vertex
    for (std::size_t f : members) {
      face.triangles.push_back(static_cast<int>(f));
      std::array<int, 3> tri{};
      for (std::size_t c = 0; c < 3; ++c) {
        const int v = mesh.triangles[f][c];
        const auto [it, fresh] = local.try_emplace(v, static_cast<int>(face.mesh.vertices.size()));
        if (fresh) face.mesh.vertices.push_back(mesh.vertices[static_cast<std::size_t>(v)]);
        tri[c] = it->second;
      }
      face.mesh.triangles.push_back(tri);
    }
    faces.push_back(std::move(face));
  }
  return faces;
}

TriangleMesh LoadMesh(const std::string& path) {
  const std::string lower = Lower(path);
  const auto ends_with = [&](const char* ext) {
    const std::size_t n = std::strlen(ext);
    return lower.size() >= n && lower.compare(lower.size() - n, n, ext) == 0;
  };
  if (ends_with(".obj")) return LoadObj(path);
  if (ends_with(".stl")) return LoadStl(path);
  throw std::invalid_argument("mesh file '" + path +
                              "': unknown extension (expected .obj or .stl)");
}

Shape::Shape(ShapeType type, const Eigen::Isometry3d& pose, std::string name)
    : data_(std::make_shared<Data>()) {
  data_->type = type;
  data_->pose = pose;
  data_->name = std::move(name);
  CheckPose(data_->pose, Label());
  data_->centred = pose.matrix() == Eigen::Matrix4d::Identity();
}

std::string Shape::Label() const {
  return "shape '" + data_->name + "' (" + ToString(data_->type) + ")";
}

Shape Shape::Sphere(double radius, const Eigen::Isometry3d& pose, std::string name) {
  Shape s(ShapeType::kSphere, pose, std::move(name));
  CheckPositive(radius, s.Label(), "radius");
  s.data_->radius = radius;
  s.data_->fcl = Fcl().Sphere(radius);
  return s;
}

Shape Shape::Box(const Eigen::Vector3d& half_size, const Eigen::Isometry3d& pose,
                 std::string name) {
  Shape s(ShapeType::kBox, pose, std::move(name));
  for (int i = 0; i < 3; ++i) CheckPositive(half_size(i), s.Label(), "half size");
  s.data_->size = half_size;
  s.data_->fcl = Fcl().Box(2.0 * half_size);
  return s;
}

Shape Shape::Cylinder(double radius, double length, const Eigen::Isometry3d& pose,
                      std::string name) {
  Shape s(ShapeType::kCylinder, pose, std::move(name));
  CheckPositive(radius, s.Label(), "radius");
  CheckPositive(length, s.Label(), "length");
  s.data_->radius = radius;
  s.data_->length = length;
  s.data_->fcl = Fcl().Cylinder(radius, length);
  return s;
}

Shape Shape::Capsule(double radius, double length, const Eigen::Isometry3d& pose,
                     std::string name) {
  Shape s(ShapeType::kCapsule, pose, std::move(name));
  CheckPositive(radius, s.Label(), "radius");
  if (!std::isfinite(length) || length < 0.0) Fail(s.Label(), "length must be finite and >= 0");
  s.data_->radius = radius;
  s.data_->length = length;
  s.data_->fcl = Fcl().Capsule(radius, length);
  return s;
}

Shape Shape::Ellipsoid(const Eigen::Vector3d& radii, const Eigen::Isometry3d& pose,
                       std::string name) {
  Shape s(ShapeType::kEllipsoid, pose, std::move(name));
  for (int i = 0; i < 3; ++i) CheckPositive(radii(i), s.Label(), "radius");
  s.data_->size = radii;
  s.data_->fcl = Fcl().Ellipsoid(radii);
  return s;
}

Shape Shape::Plane(const Eigen::Vector3d& normal, double offset, const Eigen::Isometry3d& pose,
                   std::string name) {
  Shape s(ShapeType::kPlane, pose, std::move(name));
  const double norm = normal.norm();
  if (!normal.allFinite() || !(norm > 0.0)) Fail(s.Label(), "normal must be finite and non-zero");
  if (!std::isfinite(offset)) Fail(s.Label(), "offset must be finite");
  s.data_->size = normal / norm;
  s.data_->radius = offset / norm;
  s.data_->fcl = Fcl().Halfspace(s.data_->size, s.data_->radius);
  s.data_->normal_in_body = pose.linear() * s.data_->size;
  s.data_->offset_in_body = s.data_->radius + s.data_->normal_in_body.dot(pose.translation());
  return s;
}

Shape Shape::ConvexMesh(TriangleMesh mesh, const Eigen::Isometry3d& pose, std::string name,
                        const std::string& source) {
  Shape s(ShapeType::kConvexMesh, pose, std::move(name));
  const std::string label = source.empty() ? s.Label() : s.Label() + " from '" + source + "'";
  CheckMeshIndices(mesh, label);
  const double size = MeshSize(mesh);
  if (mesh.vertices.size() < 4 || !(size > 0.0)) Fail(label, "degenerate mesh (no volume)");
  // Tolerance: coordinates read from text carry ~1e-15 relative error; 1e-9 of the size
  // accepts them and still rejects any visible dent.
  const double tol = 1e-9 * size;
  double max_extent = 0.0;
  for (std::size_t f = 0; f < mesh.triangles.size(); ++f) {
    const auto& t = mesh.triangles[f];
    const Eigen::Vector3d& x0 = mesh.vertices[static_cast<std::size_t>(t[0])];
    Eigen::Vector3d n = (mesh.vertices[static_cast<std::size_t>(t[1])] - x0)
                            .cross(mesh.vertices[static_cast<std::size_t>(t[2])] - x0);
    const double area2 = n.norm();
    if (!(area2 > tol * size)) continue;  // a sliver says nothing about convexity
    n /= area2;
    double lo = 0.0, hi = 0.0;
    for (const Eigen::Vector3d& x : mesh.vertices) {
      const double h = n.dot(x - x0);
      lo = std::min(lo, h);
      hi = std::max(hi, h);
    }
    if (lo < -tol && hi > tol) {
      Fail(label, "mesh is not convex: vertices lie on both sides of triangle " +
                      std::to_string(f) + " (by " + std::to_string(std::min(-lo, hi)) + ")");
    }
    max_extent = std::max(max_extent, hi - lo);
  }
  if (!(max_extent > tol)) Fail(label, "degenerate mesh (all vertices in one plane)");
  // Closed surface: every edge is shared by exactly two triangles (an open cap of a sphere passes
  // the plane test above but bounds no solid).
  std::map<std::pair<int, int>, int> edges;
  for (const auto& t : mesh.triangles) {
    for (std::size_t k = 0; k < 3; ++k) {
      const int i = t[k], j = t[(k + 1) % 3];
      ++edges[{std::min(i, j), std::max(i, j)}];
    }
  }
  for (const auto& [edge, count] : edges) {
    if (count != 2) {
      Fail(label, "mesh is not a closed surface: edge (" + std::to_string(edge.first + 1) + ", " +
                      std::to_string(edge.second + 1) + ") is used by " + std::to_string(count) +
                      " triangle(s)");
    }
  }
  s.data_->fcl = Fcl().Convex(mesh);
  s.data_->mesh = std::make_shared<const TriangleMesh>(std::move(mesh));
  return s;
}

Shape Shape::ConvexMeshFromFile(const std::string& path, const Eigen::Isometry3d& pose,
                                std::string name) {
  return ConvexMesh(LoadMesh(path), pose, std::move(name), path);
}

Shape Shape::TriangleMeshSurface(TriangleMesh mesh, const Eigen::Isometry3d& pose, std::string name,
                                 const std::string& source) {
  Shape s(ShapeType::kTriangleMesh, pose, std::move(name));
  const std::string label = source.empty() ? s.Label() : s.Label() + " from '" + source + "'";
  CheckMeshIndices(mesh, label);
  const double size = MeshSize(mesh);
  for (std::size_t f = 0; f < mesh.triangles.size(); ++f) {
    const auto& t = mesh.triangles[f];
    const Eigen::Vector3d& x0 = mesh.vertices[static_cast<std::size_t>(t[0])];
    const double area2 = (mesh.vertices[static_cast<std::size_t>(t[1])] - x0)
                             .cross(mesh.vertices[static_cast<std::size_t>(t[2])] - x0)
                             .norm();
    // Tolerance: a zero-area triangle has no normal; 1e-12 of size² is round-off level.
    if (!(area2 > 1e-12 * size * size)) {
      Fail(label, "triangle " + std::to_string(f) + " has zero area");
    }
  }
  s.data_->fcl = Fcl().TriangleSoup(mesh);
  // The point-query index (geometry3d.h) refers to the vectors' buffers, which the move keeps.
  mesh.index = BuildMeshIndex(mesh);
  s.data_->mesh = std::make_shared<const TriangleMesh>(std::move(mesh));
  return s;
}

Shape Shape::TriangleMeshFromFile(const std::string& path, const Eigen::Isometry3d& pose,
                                  std::string name) {
  return TriangleMeshSurface(LoadMesh(path), pose, std::move(name), path);
}

Eigen::Vector3d Shape::Support(const Eigen::Vector3d& d) const {
  const auto sign = [](double x) { return x < 0.0 ? -1.0 : 1.0; };
  switch (data_->type) {
    case ShapeType::kSphere: {
      const double n = d.norm();
      return n > 0.0 ? Eigen::Vector3d(data_->radius * d / n)
                     : Eigen::Vector3d(0.0, 0.0, data_->radius);
    }
    case ShapeType::kBox:
      return {sign(d.x()) * data_->size.x(), sign(d.y()) * data_->size.y(),
              sign(d.z()) * data_->size.z()};
    case ShapeType::kCapsule: {
      const double n = d.norm();
      const Eigen::Vector3d ball = n > 0.0 ? Eigen::Vector3d(data_->radius * d / n)
                                           : Eigen::Vector3d(0.0, 0.0, data_->radius);
      return ball + Eigen::Vector3d(0.0, 0.0, sign(d.z()) * 0.5 * data_->length);
    }
    case ShapeType::kCylinder: {
      const double rho = std::hypot(d.x(), d.y());
      Eigen::Vector3d x(0.0, 0.0, sign(d.z()) * 0.5 * data_->length);
      if (rho > 0.0) {
        x.x() = data_->radius * d.x() / rho;
        x.y() = data_->radius * d.y() / rho;
      } else {
        x.x() = data_->radius;  // d along the axis: the whole end disk supports; pick a rim point
      }
      return x;
    }
    case ShapeType::kEllipsoid: {
      // max d·x on x = D u, ‖u‖ = 1 (D = diag(radii)): u = D d / ‖D d‖, x = D² d / ‖D d‖.
      const Eigen::Vector3d Dd = data_->size.cwiseProduct(d);
      const double n = Dd.norm();
      if (!(n > 0.0)) return {0.0, 0.0, data_->size.z()};
      return data_->size.cwiseProduct(Dd) / n;
    }
    case ShapeType::kConvexMesh: {
      std::size_t best = 0;
      double best_value = -std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < data_->mesh->vertices.size(); ++i) {
        const double value = d.dot(data_->mesh->vertices[i]);
        if (value > best_value) {
          best_value = value;
          best = i;
        }
      }
      return data_->mesh->vertices[best];
    }
    case ShapeType::kPlane:
    case ShapeType::kTriangleMesh:
      break;
  }
  throw std::logic_error(Label() + ": no support function (not convex)");
}

double Shape::BoundingRadius() const {
  switch (data_->type) {
    case ShapeType::kSphere:
      return data_->radius;
    case ShapeType::kBox:
      return data_->size.norm();
    case ShapeType::kCapsule:
      return data_->radius + 0.5 * data_->length;
    case ShapeType::kCylinder:
      return std::hypot(data_->radius, 0.5 * data_->length);
    case ShapeType::kEllipsoid:
      return data_->size.maxCoeff();
    case ShapeType::kPlane:
      return std::numeric_limits<double>::infinity();
    case ShapeType::kConvexMesh:
    case ShapeType::kTriangleMesh: {
      double r = 0.0;
      for (const Eigen::Vector3d& x : data_->mesh->vertices) r = std::max(r, x.norm());
      return r;
    }
  }
  return std::numeric_limits<double>::infinity();
}

Eigen::AlignedBox3d Shape::LocalAabb() const {
  const double inf = std::numeric_limits<double>::infinity();
  Eigen::Vector3d h = Eigen::Vector3d::Zero();
  switch (data_->type) {
    case ShapeType::kSphere:
      h.setConstant(data_->radius);
      break;
    case ShapeType::kBox:
    case ShapeType::kEllipsoid:
      h = data_->size;
      break;
    case ShapeType::kCapsule:
      h = {data_->radius, data_->radius, data_->radius + 0.5 * data_->length};
      break;
    case ShapeType::kCylinder:
      h = {data_->radius, data_->radius, 0.5 * data_->length};
      break;
    case ShapeType::kPlane:
      h.setConstant(inf);
      break;
    case ShapeType::kConvexMesh:
    case ShapeType::kTriangleMesh: {
      Eigen::AlignedBox3d box;
      for (const Eigen::Vector3d& x : data_->mesh->vertices) box.extend(x);
      return box;
    }
  }
  return Eigen::AlignedBox3d(-h, h);
}

}  // namespace saltus::contact
