#include "contact/shapes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

namespace saltus::contact {
namespace {

using Eigen::Isometry3d;
using Eigen::Vector3d;

std::string DataPath(const std::string& name) {
  const char* root = std::getenv("SALTUS_SOURCE_DIR");
  return std::string(root ? root : ".") + "/tests/contact/data/" + name;
}

// The message of the std::invalid_argument thrown by f (empty if none).
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Shapes, DegenerateSizesNameTheShape) {
  EXPECT_NE(ErrorOf([] { Shape::Sphere(0.0, Isometry3d::Identity(), "ball"); }).find("'ball'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              Shape::Box(Vector3d(1, 0, 1), Isometry3d::Identity(), "crate");
            }).find("'crate'"),
            std::string::npos);
  EXPECT_THROW(Shape::Cylinder(1.0, -1.0), std::invalid_argument);
  EXPECT_THROW(Shape::Capsule(0.0, 1.0), std::invalid_argument);
  EXPECT_THROW(Shape::Ellipsoid(Vector3d(1, 1, NAN)), std::invalid_argument);
  EXPECT_THROW(Shape::Plane(Vector3d::Zero(), 0.0), std::invalid_argument);
  Isometry3d sheared = Isometry3d::Identity();
  sheared.linear()(0, 1) = 0.5;
  EXPECT_THROW(Shape::Sphere(1.0, sheared), std::invalid_argument);
  EXPECT_NO_THROW(Shape::Capsule(0.1, 0.0));  // a capsule of length 0 is a sphere
}

TEST(Shapes, PlaneIsNormalized) {
  const Shape p = Shape::Plane(Vector3d(0, 0, 2), 3.0);
  EXPECT_NEAR(p.plane_normal().norm(), 1.0, 1e-15);  // normalized to round-off
  EXPECT_NEAR(p.plane_offset(), 1.5, 1e-15);
}

// The support point maximizes d·x: compare with random points of the shape (sampled on its
// boundary by scaling the support directions) and check it lies on the shape.
// A Shape is a handle: copies share the data (same id), factories build new data. The plane's
// half-space carried to the body frame: x_B = X_BS x_S satisfies n_B·x_B − d_B = n·x_S − d.
TEST(Shapes, CopiesShareDataAndPlaneIsCarriedToTheBody) {
  Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
  pose.linear() = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  pose.translation() = Eigen::Vector3d(0.3, -0.2, 0.5);
  const Shape plane = Shape::Plane(Eigen::Vector3d(0.2, -1.0, 0.4), 0.15, pose, "p");
  const Shape copy = plane;
  EXPECT_EQ(copy.id(), plane.id());
  EXPECT_NE(Shape::Plane(Eigen::Vector3d(0.2, -1.0, 0.4), 0.15, pose, "p").id(), plane.id());
  EXPECT_FALSE(plane.centred());
  EXPECT_TRUE(Shape::Sphere(0.1).centred());
  for (const Eigen::Vector3d& x_s : {Eigen::Vector3d(0.1, 0.2, 0.3),
                                     Eigen::Vector3d(-1.0, 0.5, 2.0), Eigen::Vector3d(0, 0, 0)}) {
    const Eigen::Vector3d x_b = pose * x_s;
    // Round-off of O(1) coordinates through one rotation.
    EXPECT_NEAR(plane.plane_normal_in_body().dot(x_b) - plane.plane_offset_in_body(),
                plane.plane_normal().dot(x_s) - plane.plane_offset(), 1e-14);
  }
}

TEST(Shapes, SupportFunctionsMaximize) {
  std::mt19937 rng(7);
  std::normal_distribution<double> n(0.0, 1.0);
  const std::vector<Shape> shapes = {Shape::Sphere(0.3),
                                     Shape::Box(Vector3d(0.1, 0.2, 0.3)),
                                     Shape::Cylinder(0.2, 0.5),
                                     Shape::Capsule(0.1, 0.4),
                                     Shape::Ellipsoid(Vector3d(0.3, 0.2, 0.1)),
                                     Shape::ConvexMeshFromFile(DataPath("tetra.stl"))};
  for (const Shape& s : shapes) {
    std::vector<Vector3d> points;
    for (int i = 0; i < 2000; ++i) points.push_back(s.Support(Vector3d(n(rng), n(rng), n(rng))));
    for (int i = 0; i < 50; ++i) {
      const Vector3d d(n(rng), n(rng), n(rng));
      const double best = d.dot(s.Support(d));
      for (const Vector3d& x : points) {
        // Tolerance: round-off of O(1) dot products.
        EXPECT_LE(d.dot(x), best + 1e-12) << ToString(s.type());
      }
      // The support point lies inside the local bounding box and ball (round-off slack).
      const Vector3d x = s.Support(d);
      EXPECT_LE(x.norm(), s.BoundingRadius() + 1e-12);
      EXPECT_LE(s.LocalAabb().exteriorDistance(x), 1e-12);
    }
  }
  // Closed form: the ellipsoid support point satisfies the ellipsoid equation.
  const Shape e = Shape::Ellipsoid(Vector3d(0.3, 0.2, 0.1));
  const Vector3d x = e.Support(Vector3d(1, -2, 0.5));
  EXPECT_NEAR(x.cwiseQuotient(e.radii()).squaredNorm(), 1.0, 1e-14);
}

TEST(Shapes, LoadsObjQuadsAndNegativeIndices) {
  const TriangleMesh m = LoadMesh(DataPath("cube.obj"));
  EXPECT_EQ(m.vertices.size(), 8u);
  EXPECT_EQ(m.triangles.size(), 12u);  // 6 quads, 2 triangles each
  const Shape cube = Shape::ConvexMeshFromFile(DataPath("cube.obj"), Isometry3d::Identity(), "c");
  const Vector3d x = cube.Support(Vector3d(1, 1, -1));
  EXPECT_LT((x - Vector3d(0.5, 0.5, -0.5)).norm(), 1e-15);
}

TEST(Shapes, LoadsAsciiAndBinaryStl) {
  const TriangleMesh ascii = LoadMesh(DataPath("tetra.stl"));
  EXPECT_EQ(ascii.vertices.size(), 4u);  // 12 vertex lines merged into 4
  EXPECT_EQ(ascii.triangles.size(), 4u);
  // Binary copy written here.
  const auto path = std::filesystem::temp_directory_path() / "saltus_shapes_test_tetra.STL";
  {
    std::ofstream out(path, std::ios::binary);
    char header[80] = {};
    out.write(header, 80);
    const std::uint32_t count = static_cast<std::uint32_t>(ascii.triangles.size());
    out.write(reinterpret_cast<const char*>(&count), 4);
    for (const auto& t : ascii.triangles) {
      float data[12] = {};
      for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < 3; ++i) {
          data[3 + 3 * k + i] = static_cast<float>(
              ascii.vertices[static_cast<std::size_t>(t[static_cast<std::size_t>(k)])](i));
        }
      }
      out.write(reinterpret_cast<const char*>(data), 48);
      const std::uint16_t attributes = 0;
      out.write(reinterpret_cast<const char*>(&attributes), 2);
    }
  }
  const TriangleMesh binary = LoadMesh(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(binary.vertices.size(), 4u);
  EXPECT_EQ(binary.triangles.size(), 4u);
  EXPECT_EQ(binary.triangles, ascii.triangles);
}

TEST(Shapes, BadMeshFilesNameFileAndLine) {
  const std::string missing = ErrorOf([] { LoadMesh(DataPath("no_such_mesh.obj")); });
  EXPECT_NE(missing.find("no_such_mesh.obj"), std::string::npos);
  const std::string bad_index = ErrorOf([] { LoadMesh(DataPath("bad_index.obj")); });
  EXPECT_NE(bad_index.find("bad_index.obj"), std::string::npos);
  EXPECT_NE(bad_index.find("line 4"), std::string::npos);
  EXPECT_THROW(LoadMesh(DataPath("cube.ply")), std::invalid_argument);
  const std::string dented = ErrorOf(
      [] { Shape::ConvexMeshFromFile(DataPath("dented.obj"), Isometry3d::Identity(), "rock"); });
  EXPECT_NE(dented.find("not convex"), std::string::npos);
  EXPECT_NE(dented.find("'rock'"), std::string::npos);
  EXPECT_NE(dented.find("dented.obj"), std::string::npos);
  // The same mesh is a fine triangle surface.
  EXPECT_NO_THROW(Shape::TriangleMeshFromFile(DataPath("dented.obj")));
  // Flat "convex" mesh: no volume.
  TriangleMesh flat;
  flat.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
  flat.triangles = {{0, 1, 2}, {1, 3, 2}};
  EXPECT_THROW(Shape::ConvexMesh(flat), std::invalid_argument);
  TriangleMesh sliver = flat;
  sliver.triangles = {{0, 1, 1}};
  EXPECT_THROW(Shape::TriangleMeshSurface(sliver), std::invalid_argument);
}

TEST(Shapes, BowlFixtureIsAConcaveSurface) {
  const Shape bowl =
      Shape::TriangleMeshFromFile(DataPath("bowl.obj"), Isometry3d::Identity(), "bowl");
  EXPECT_EQ(bowl.type(), ShapeType::kTriangleMesh);
  EXPECT_FALSE(bowl.is_convex());
  EXPECT_THROW(Shape::ConvexMeshFromFile(DataPath("bowl.obj")), std::invalid_argument);
  EXPECT_THROW(bowl.Support(Vector3d::UnitZ()), std::logic_error);
}

}  // namespace
}  // namespace saltus::contact
