// Models built in code: saltus::PlanarBuilder and saltus::SpatialBuilder take the items of a
// scene file (docs/scene-format.md) one at a time and build a saltus::Model; the Python
// builders (saltus.PlanarBuilder, saltus.SpatialBuilder) are bindings of these classes.
//
// The items are those of the scene format, with its names and defaults: bodies, joints, drivers
// φ(t) (rheonomic rows g = θ_rel − φ(t) or d − φ(t), engine::TimeProfile), spring-dampers,
// torsional spring-dampers, loads (optionally times φ(t)), unilateral contacts with Newton
// restitution e ∈ [0, 1] and Coulomb friction μ ≥ 0, and, in space, prismatic joint friction,
// contact shapes and the selection of contact pairs among them. Bodies, joints and shapes are
// referred to by name (bodies: "ground" is the world) or by the index their Add returned.
//
// The planar model is built as a planar scene's (engine::PlanarModelBuilder, then
// contact::PlanarContacts, Model::FromPlanar); the spatial one with the scene loader's own
// construction (tools::BuildSceneSystem: engine::SpatialModelBuilder, the contact pairs that
// tools::SelectContactPairs chooses, consistent initialization of the joints at t = 0), so the
// same items give the same system and initial state as the scene file
// (tests/saltus/builder_test.cc). Gravity is 0 until SetGravity (a scene file's default is
// −9.81 along −y, resp. −z).
//
// Errors: every Add checks its item at once and throws saltus::InvalidArgument whose message
// names the item ("joint 'crank': unknown body 'arm' (bodies: ...)"), leaving the builder as it
// was; a planar contact's geometry, restitution and friction are checked by Build, with the
// model (contact::PlanarContacts). Build throws InvalidArgument when the model as a whole is
// inconsistent (e.g. joints that cannot be assembled) and leaves the builder usable: further
// items may be added and Build called again.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "saltus/saltus.h"

namespace saltus {

// A body, joint or shape of a builder: its name, or the index that its Add returned.
class ItemRef {
 public:
  ItemRef() = default;
  ItemRef(const char* name) : name_(name) {}             // NOLINT(google-explicit-constructor)
  ItemRef(std::string name) : name_(std::move(name)) {}  // NOLINT(google-explicit-constructor)
  ItemRef(int index) : index_(index) {}                  // NOLINT(google-explicit-constructor)
  bool by_index() const { return index_.has_value(); }
  const std::string& name() const { return name_; }
  int index() const { return index_.value_or(-1); }

 private:
  std::string name_;
  std::optional<int> index_;
};

// ---- items with references (bodies are engine::PlanarBody / engine::SpatialBody) -------------
// A driver φ(t) on a joint: kind "angle" (revolute; cylindrical in space) or "displacement"
// (prismatic; cylindrical in space).
struct DriverSpec {
  std::string name = {};
  ItemRef joint = {};
  std::string kind = "angle";
  TimeProfile profile = {};
};
// Torque −k (θ − angle0) − c θ̇ on a revolute joint's body_b, the opposite on body_a.
struct TorsionalSpringSpec {
  std::string name = {};
  ItemRef joint = {};
  double stiffness = 0.0;  // N m/rad, ≥ 0
  double damping = 0.0;    // N m s/rad, ≥ 0
  double angle0 = 0.0;     // rad
};

// Planar joint types: revolute, prismatic (axis_a, angle0), angle_driver (angle0 + rate t),
// distance (length; 0: the initial distance of the points), fixed (angle0), point_on_line
// (axis_a). Points and axes in the body frames.
struct PlanarJointSpec {
  std::string name = {};
  std::string type = "revolute";
  ItemRef body_a = "ground";
  ItemRef body_b = "ground";
  Eigen::Vector2d point_a = Eigen::Vector2d::Zero();
  Eigen::Vector2d point_b = Eigen::Vector2d::Zero();
  Eigen::Vector2d axis_a = Eigen::Vector2d::UnitX();
  double angle0 = 0.0;
  double rate = 0.0;
  double length = 0.0;
};
// A linear spring-damper between two body points (N/m, N s/m, m).
struct PlanarSpringSpec {
  std::string name = {};
  ItemRef body_a = "ground";
  ItemRef body_b = "ground";
  Eigen::Vector2d point_a = Eigen::Vector2d::Zero();
  Eigen::Vector2d point_b = Eigen::Vector2d::Zero();
  double stiffness = 0.0;
  double damping = 0.0;
  double rest_length = 0.0;
};
// A world force at a body point and a torque, both times φ(t) when scale is set.
struct PlanarLoadSpec {
  std::string name = {};
  ItemRef body = {};
  Eigen::Vector2d force = Eigen::Vector2d::Zero();
  Eigen::Vector2d point = Eigen::Vector2d::Zero();
  double torque = 0.0;
  std::optional<TimeProfile> scale = {};
};
// A unilateral contact (contact/planar_contacts.h): type point_line (point_b of body_b on the
// line through point_a with normal normal_a of body_a), disk_line (radius_b), disk_disk
// (radius_a, radius_b); restitution in [0, 1] (negative: the simulation's); friction μ ≥ 0
// (> 0 adds the tangential row "<name>.t").
struct PlanarContactSpec {
  std::string name = {};
  std::string type = "disk_line";
  ItemRef body_a = "ground";
  ItemRef body_b = {};
  Eigen::Vector2d point_a = Eigen::Vector2d::Zero();
  Eigen::Vector2d normal_a = Eigen::Vector2d::UnitY();
  double radius_a = 0.0;
  Eigen::Vector2d point_b = Eigen::Vector2d::Zero();
  double radius_b = 0.0;
  double restitution = -1.0;
  double friction = 0.0;
};

// Spatial joint types: spherical, revolute, universal, cylindrical, prismatic, fixed, planar,
// distance, point_on_line, point_on_plane; points and axes in each body's frame, ref: the joint
// frame's x hint (engine/spatial_model.h).
struct SpatialJointSpec {
  std::string name = {};
  std::string type = "revolute";
  ItemRef body_a = "ground";
  ItemRef body_b = "ground";
  Eigen::Vector3d point_a = Eigen::Vector3d::Zero();
  Eigen::Vector3d point_b = Eigen::Vector3d::Zero();
  Eigen::Vector3d axis_a = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d axis_b = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d ref_a = Eigen::Vector3d::Zero();
  Eigen::Vector3d ref_b = Eigen::Vector3d::Zero();
  double length = 0.0;
};
struct SpatialSpringSpec {
  std::string name = {};
  ItemRef body_a = "ground";
  ItemRef body_b = "ground";
  Eigen::Vector3d point_a = Eigen::Vector3d::Zero();
  Eigen::Vector3d point_b = Eigen::Vector3d::Zero();
  double stiffness = 0.0;
  double damping = 0.0;
  double rest_length = 0.0;
};
struct SpatialLoadSpec {
  std::string name = {};
  ItemRef body = {};
  Eigen::Vector3d force = Eigen::Vector3d::Zero();   // world
  Eigen::Vector3d point = Eigen::Vector3d::Zero();   // body frame
  Eigen::Vector3d torque = Eigen::Vector3d::Zero();  // world
  std::optional<TimeProfile> scale = {};
};
// Coulomb friction μ |N| on a prismatic joint, N its normal force of the last step.
struct PrismaticFrictionSpec {
  std::string name = {};
  ItemRef joint = {};
  double mu = 0.0;
};
// A contact shape fixed to a body (or the ground), pose in the body frame, with the parameters
// of its type only: sphere (radius), box (half_size), cylinder and capsule (radius, length),
// ellipsoid (radii), plane (normal, default +z; offset, default 0), convex_mesh and
// triangle_mesh (file, OBJ/STL; per_triangle: one shape per triangle). group/mask: collision
// bit sets (two shapes may touch when each one's group meets the other's mask).
struct ShapeSpec {
  std::string name = {};
  std::string type = {};
  ItemRef body = "ground";
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Vector4d quaternion = Eigen::Vector4d(1, 0, 0, 0);  // (w, x, y, z), unit within 1e-6
  std::optional<double> radius = {};
  std::optional<double> length = {};
  std::optional<double> offset = {};
  std::optional<Eigen::Vector3d> half_size = {};
  std::optional<Eigen::Vector3d> radii = {};
  std::optional<Eigen::Vector3d> normal = {};
  std::optional<std::string> file = {};
  bool per_triangle = false;
  std::uint32_t group = 1u;
  std::uint32_t mask = 0xFFFFFFFFu;
};

// ---- builders -------------------------------------------------------------------------------
class PlanarBuilder {
 public:
  PlanarBuilder();
  ~PlanarBuilder();
  PlanarBuilder(const PlanarBuilder&);
  PlanarBuilder& operator=(const PlanarBuilder&);
  PlanarBuilder(PlanarBuilder&&);  // leaves the source empty
  PlanarBuilder& operator=(PlanarBuilder&&);

  // Each returns the item's index (bodies, joints, ...: the engine's; contacts: their order).
  int AddBody(const PlanarBody& body);
  int AddJoint(const PlanarJointSpec& joint);
  int AddDriver(const DriverSpec& driver);  // after its joint
  int AddSpring(const PlanarSpringSpec& spring);
  int AddTorsionalSpring(const TorsionalSpringSpec& spring);  // on a revolute joint
  int AddLoad(const PlanarLoadSpec& load);
  int AddContact(const PlanarContactSpec& contact);
  void SetGravity(const Eigen::Vector2d& g);  // m/s²
  Model Build() const;

 private:
  struct Items;  // the engine builder, the contacts and the name tables
  std::unique_ptr<Items> items_;
};

class SpatialBuilder {
 public:
  SpatialBuilder();
  ~SpatialBuilder();
  SpatialBuilder(const SpatialBuilder&);
  SpatialBuilder& operator=(const SpatialBuilder&);
  SpatialBuilder(SpatialBuilder&&);  // leaves the source empty
  SpatialBuilder& operator=(SpatialBuilder&&);

  int AddBody(const SpatialBody& body);
  int AddJoint(const SpatialJointSpec& joint);
  int AddDriver(const DriverSpec& driver);
  int AddSpring(const SpatialSpringSpec& spring);
  int AddTorsionalSpring(const TorsionalSpringSpec& spring);
  int AddLoad(const SpatialLoadSpec& load);
  int AddPrismaticFriction(const PrismaticFrictionSpec& friction);
  // Returns the shape's index (a mesh split per triangle: the index of its first triangle).
  int AddShape(const ShapeSpec& shape);
  // "all" (every shape pair that can touch gets a contact row; the default) or "none" (only the
  // pairs of AddContactPair).
  void SetContactDefault(const std::string& value);
  void ExcludeContact(const ItemRef& shape_a, const ItemRef& shape_b);
  // A contact pair with its own restitution in [0, 1] (default: the simulation's), Coulomb
  // friction μ ≥ 0 (default: SetFriction's) and rolling / spinning resistance μ_R, μ_S ≥ 0
  // (lengths in m; default: SetResistance's; only on a pair with a sphere on one side:
  // docs/friction.md, "Rolling and spinning resistance").
  void AddContactPair(const ItemRef& shape_a, const ItemRef& shape_b,
                      std::optional<double> restitution = std::nullopt,
                      std::optional<double> friction = std::nullopt,
                      std::optional<double> rolling_friction = std::nullopt,
                      std::optional<double> spinning_friction = std::nullopt);
  // μ of the pairs without their own (a scene's simulation.friction; default 0). μ > 0 gives
  // each normal row two tangential rows "<row>.t1", "<row>.t2".
  void SetFriction(double friction);
  // μ_R, μ_S ≥ 0 (m) of the pairs with a sphere on one side and without their own (a scene's
  // simulation.rolling_friction and spinning_friction; default 0). μ_R > 0 gives each such normal
  // row two rolling rows "<row>.r1", "<row>.r2", μ_S > 0 a spinning row "<row>.s".
  void SetResistance(double rolling_friction, double spinning_friction);
  void SetGravity(const Eigen::Vector3d& g);  // m/s²
  // Names of the contact pairs Build would make, in row order.
  std::vector<std::string> ContactPairNames() const;
  // Remarks on the items (e.g. a quaternion normalized).
  const std::vector<std::string>& warnings() const;
  Model Build() const;

 private:
  struct Items;  // the recorded scene (tools::Scene), the engine builder and the name tables
  std::unique_ptr<Items> items_;
};

}  // namespace saltus
