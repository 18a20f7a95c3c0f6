// Collision shapes attached to bodies (issue 4). A shape is described in its own frame S and
// carries its pose X_BS in the frame B of the body it is attached to; the world pose of the shape
// is X_WS = X_WB X_BS.
//
//   sphere       radius r, centred at the origin of S
//   box          half sizes (hx, hy, hz) along the axes of S, centred at the origin
//   cylinder     radius r, length L along z (from z = −L/2 to z = L/2)       (FCL's convention)
//   capsule      segment from −L/2 e_z to L/2 e_z swept by a ball of radius r (FCL's convention)
//   ellipsoid    radii (a, b, c): x²/a² + y²/b² + z²/c² ≤ 1
//   plane        half-space {x : n·x ≤ d} of S, n unit; the free side is n·x > d
//   convex mesh  the convex polytope of a vertex set, loaded from an OBJ or STL file; every vertex
//                must lie on the inner side of every face plane (checked)
//   triangle mesh  any triangle soup (terrain, a bowl): a surface, meant for static bodies
//
// Convex shapes (all but plane and triangle mesh) have a support function
//   Support(d) = argmax_{x ∈ S} d·x   (in S),
// which the analytic contact paths use: for a plane with normal n and offset d, the signed
// distance of a convex shape is  min_{x ∈ S} n·x − d = n·Support(−n) − d.
//
// Every shape also owns the FCL 0.7 geometry used for the general narrowphase and broadphase
// (built once at construction). Factories throw std::invalid_argument naming the shape for
// degenerate or non-finite sizes (zero radius or size), unreadable mesh files (naming the file
// and line) and non-convex meshes where a convex one is required.
#pragma once

#include <Eigen/Geometry>
#include <array>
#include <memory>
#include <string>
#include <vector>

struct SaltusFclGeometry;  // contact/fcl_module.h

namespace saltus::contact {

enum class ShapeType {
  kSphere,
  kBox,
  kCylinder,
  kCapsule,
  kEllipsoid,
  kPlane,
  kConvexMesh,
  kTriangleMesh
};

// "sphere", "box", "cylinder", "capsule", "ellipsoid", "plane", "convex_mesh", "triangle_mesh".
const char* ToString(ShapeType type);

// Vertices and triangles (indices into vertices, counter-clockwise seen from outside when the
// file says so; the convex-mesh code does not rely on the orientation).
struct MeshIndex;  // geometry3d.h
struct TriangleMesh {
  std::vector<Eigen::Vector3d> vertices;
  std::vector<std::array<int, 3>> triangles;
  // Acceleration structure of the point queries of geometry3d.h (bounding-volume tree and
  // adjacency), built once by Shape::TriangleMeshSurface and shared by every copy of the shape;
  // null for a mesh built by hand. It is used only while it belongs to these very vectors (same
  // buffers and sizes, see HasMeshIndex): a copy of the mesh, or one whose vectors were resized,
  // falls back to the brute-force queries, with the same results (changing the values in place
  // after BuildMeshIndex is not detected: the index would be stale).
  std::shared_ptr<const MeshIndex> index = nullptr;
};

// Reads a Wavefront OBJ ("v x y z" and "f i j k ..." lines, polygons split into fans, negative
// indices and "i/t/n" forms accepted) or an STL file (ASCII or binary; duplicate vertices are
// merged), chosen by the extension (.obj, .stl, case-insensitive). Throws std::invalid_argument
// naming the file, and the line for OBJ syntax errors, if the file cannot be read, is malformed
// or has no triangle.
TriangleMesh LoadMesh(const std::string& path);

// One planar face of a triangle mesh: a maximal set of triangles connected through shared edges
// whose unit normals (same orientation) agree within the tolerance, e.g. the two triangles of a
// planar quad. `mesh` holds these triangles alone (its own vertex list); `triangles` their
// indices in the input mesh, ascending.
struct PlanarFace {
  TriangleMesh mesh;
  std::vector<int> triangles;
};

// Splits a mesh into its planar faces (docs/contact-geometry.md, "Crease crossings"), in the
// order of each face's first triangle. Two triangles join a face when they share an edge and
// their normals differ by at most `angle_tolerance` radians (each checked against the face's
// first triangle, so a smooth surface is not merged across slowly turning facets). Degenerate
// (zero-area) triangles are faces of their own.
std::vector<PlanarFace> PlanarFaces(const TriangleMesh& mesh, double angle_tolerance = 1e-8);

class Shape {
 public:
  // `name` appears in error messages ("shape 'wheel'"); `pose` is X_BS.
  static Shape Sphere(double radius, const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                      std::string name = "");
  static Shape Box(const Eigen::Vector3d& half_size,
                   const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                   std::string name = "");
  static Shape Cylinder(double radius, double length,
                        const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                        std::string name = "");
  static Shape Capsule(double radius, double length,
                       const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                       std::string name = "");
  static Shape Ellipsoid(const Eigen::Vector3d& radii,
                         const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                         std::string name = "");
  // Half-space {x : normal·x ≤ offset} of S; `normal` is normalized (must be non-zero).
  static Shape Plane(const Eigen::Vector3d& normal, double offset,
                     const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                     std::string name = "");
  // Convex polytope; `source` (a file name) is quoted in error messages. Needs ≥ 4 vertices
  // not all in one plane, every vertex on the inner side of every triangle's plane (to a
  // tolerance of 1e-9 times the mesh size) and a closed surface (every edge shared by exactly
  // two triangles).
  static Shape ConvexMesh(TriangleMesh mesh,
                          const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                          std::string name = "", const std::string& source = "");
  static Shape ConvexMeshFromFile(const std::string& path,
                                  const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                                  std::string name = "");
  // Triangle surface; degenerate (zero-area) triangles are rejected.
  static Shape TriangleMeshSurface(TriangleMesh mesh,
                                   const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                                   std::string name = "", const std::string& source = "");
  static Shape TriangleMeshFromFile(const std::string& path,
                                    const Eigen::Isometry3d& pose = Eigen::Isometry3d::Identity(),
                                    std::string name = "");

  ShapeType type() const { return data_->type; }
  const std::string& name() const { return data_->name; }
  const Eigen::Isometry3d& pose() const { return data_->pose; }  // X_BS
  bool is_convex() const {
    return data_->type != ShapeType::kPlane && data_->type != ShapeType::kTriangleMesh;
  }

  double radius() const { return data_->radius; }                      // sphere, cylinder, capsule
  double length() const { return data_->length; }                      // cylinder, capsule
  const Eigen::Vector3d& half_size() const { return data_->size; }     // box
  const Eigen::Vector3d& radii() const { return data_->size; }         // ellipsoid
  const Eigen::Vector3d& plane_normal() const { return data_->size; }  // plane (unit, in S)
  double plane_offset() const { return data_->radius; }                // plane
  const TriangleMesh& mesh() const { return *data_->mesh; }            // convex and triangle meshes
  // Plane: the half-space in the body frame, {x : plane_normal_in_body()·x ≤
  // plane_offset_in_body()} (R_BS n, d + (R_BS n)·t_BS).
  const Eigen::Vector3d& plane_normal_in_body() const { return data_->normal_in_body; }
  double plane_offset_in_body() const { return data_->offset_in_body; }
  // True when the pose X_BS is the identity (e.g. a sphere centred on its body's origin).
  bool centred() const { return data_->centred; }
  // Identity of the shared data: copies of one shape have the same id, separately built shapes
  // different ones (used to share per-shape work between the pairs of a scene).
  const void* id() const { return data_.get(); }

  // argmax_{x ∈ S} d·x in S, for convex shapes (throws std::logic_error otherwise). Ties (a face
  // or edge orthogonal to d) are broken towards +1 along each axis / the first vertex.
  Eigen::Vector3d Support(const Eigen::Vector3d& d) const;
  // Radius of a ball about the origin of S that contains the shape (infinite for a plane).
  double BoundingRadius() const;
  // Axis-aligned box in S that contains the shape (infinite for a plane).
  Eigen::AlignedBox3d LocalAabb() const;

  // The FCL geometry in S (never null).
  const std::shared_ptr<const SaltusFclGeometry>& fcl_geometry() const { return data_->fcl; }

  // "shape 'name' (type)" for messages.
  std::string Label() const;

 private:
  // The shape's data, shared by every copy: a Shape is a 16-byte handle (copies are cheap, e.g.
  // the two shapes of each of the 500,000 pairs of a pile of 1000 spheres) and immutable once a
  // factory has returned it.
  struct Data {
    ShapeType type = ShapeType::kSphere;
    Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
    std::string name;
    double radius = 0.0;
    double length = 0.0;
    Eigen::Vector3d size = Eigen::Vector3d::Zero();
    std::shared_ptr<const TriangleMesh> mesh;
    std::shared_ptr<const SaltusFclGeometry> fcl;
    // Plane: unit normal and offset in the body frame B ({x_B : n_B·x_B ≤ d_B}).
    Eigen::Vector3d normal_in_body = Eigen::Vector3d::UnitZ();
    double offset_in_body = 0.0;
    bool centred = true;  // pose is the identity
  };

  Shape(ShapeType type, const Eigen::Isometry3d& pose, std::string name);

  std::shared_ptr<Data> data_;
};

}  // namespace saltus::contact
