#include "tools/urdf.h"

#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <set>
#include <sstream>

#include "tools/scene.h"

namespace saltus::tools {

namespace {

using Eigen::Isometry3d;
using Eigen::Vector3d;

Vector3d ToVector(const urdf::Vector3& v) { return {v.x, v.y, v.z}; }

Isometry3d ToIsometry(const urdf::Pose& p) {
  double x = 0, y = 0, z = 0, w = 1;
  p.rotation.getQuaternion(x, y, z, w);
  Isometry3d X = Isometry3d::Identity();
  X.linear() = Eigen::Quaterniond(w, x, y, z).normalized().toRotationMatrix();
  X.translation() = ToVector(p.position);
  return X;
}

// Collects what liburdfdom reports through console_bridge while it parses (it returns only a
// null model on errors), so that the messages can go into the SceneError.
class MessageCapture : public console_bridge::OutputHandler {
 public:
  MessageCapture() : previous_(console_bridge::getOutputHandler()) {
    console_bridge::useOutputHandler(this);
  }
  ~MessageCapture() override { console_bridge::useOutputHandler(previous_); }
  MessageCapture(const MessageCapture&) = delete;
  MessageCapture& operator=(const MessageCapture&) = delete;
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_WARN)
      messages_ += (messages_.empty() ? "" : "; ") + text;
  }
  const std::string& messages() const { return messages_; }

 private:
  console_bridge::OutputHandler* previous_;
  std::string messages_;
};

bool HasMass(const urdf::Link& link) { return link.inertial && link.inertial->mass > 0; }

// Where a link's frame is: the body carrying it (kGround for the root and links merged into it)
// and the link frame in that body's frame.
struct Host {
  int body = engine::kGround;
  Isometry3d X = Isometry3d::Identity();
};

class UrdfReader {
 public:
  UrdfReader(std::string file, const std::map<std::string, double>& positions)
      : file_(std::move(file)), positions_(positions) {}

  UrdfRobot Read() {
    std::ifstream in(file_, std::ios::binary);
    if (!in) Fail("cannot read the URDF file");
    std::stringstream text;
    text << in.rdbuf();
    urdf::ModelInterfaceSharedPtr model;
    {
      MessageCapture capture;
      model = urdf::parseURDF(text.str());
      if (!model)
        Fail("malformed URDF: " +
             (capture.messages().empty() ? std::string("unknown error") : capture.messages()));
    }
    model_ = model.get();
    robot_.name = model->getName();
    const urdf::LinkConstSharedPtr root = model->getRoot();
    if (!root) Fail("robot '" + robot_.name + "' has no root link");
    Visit(*root, Host{}, Isometry3d::Identity());
    for (const auto& [name, value] : positions_) {
      if (!used_positions_.count(name)) {
        Fail("joint_positions: '" + name + "' is not a moving joint of robot '" + robot_.name +
             "'");
      }
    }
    for (int i = 0; i < static_cast<int>(robot_.shapes.size()); ++i) {
      for (int j = i + 1; j < static_cast<int>(robot_.shapes.size()); ++j) {
        const auto pair = std::minmax(robot_.shape_bodies[static_cast<std::size_t>(i)],
                                      robot_.shape_bodies[static_cast<std::size_t>(j)]);
        if (joined_.count(pair)) robot_.adjacent_shapes.emplace_back(i, j);
      }
    }
    return robot_;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { throw SceneError(file_, 0, what); }

  // The link's shapes and its subtree. host: where the link frame is; X_W: its world pose.
  void Visit(const urdf::Link& link, const Host& host, const Isometry3d& X_W) {
    AddShapes(link, host);
    for (const urdf::JointSharedPtr& joint : link.child_joints) VisitJoint(*joint, host, X_W);
  }

  void VisitJoint(const urdf::Joint& joint, const Host& parent, const Isometry3d& X_W_parent) {
    const std::string item = "joint '" + joint.name + "'";
    const urdf::LinkConstSharedPtr child = model_->getLink(joint.child_link_name);
    if (!child) Fail(item + ": child link '" + joint.child_link_name + "' is missing");
    if (joint.mimic) Fail(item + ": mimic joints are not supported");
    const Isometry3d X_pj = ToIsometry(joint.parent_to_joint_origin_transform);
    const Isometry3d X_bj = parent.X * X_pj;  // the joint frame in the parent's body
    if (joint.type == urdf::Joint::FIXED && !HasMass(*child)) {
      Visit(*child, Host{parent.body, X_bj}, X_W_parent * X_pj);  // merged into the parent
      return;
    }
    const bool revolute =
        joint.type == urdf::Joint::REVOLUTE || joint.type == urdf::Joint::CONTINUOUS;
    const bool prismatic = joint.type == urdf::Joint::PRISMATIC;
    if (!revolute && !prismatic && joint.type != urdf::Joint::FIXED) {
      Fail(item + ": type " + TypeName(joint.type) +
           " is not supported (revolute, continuous, prismatic, fixed)");
    }
    if (!HasMass(*child)) {
      Fail(item + ": its child link '" + child->name +
           "' needs an <inertial> with mass > 0 (a moving joint carries a body)");
    }
    Vector3d axis = ToVector(joint.axis);
    if (joint.type != urdf::Joint::FIXED && !(axis.norm() > 1e-12)) Fail(item + ": zero axis");
    if (joint.type == urdf::Joint::FIXED) axis = Vector3d::UnitZ();
    axis.normalize();
    const Vector3d ref =
        joint.type == urdf::Joint::FIXED ? Vector3d::UnitX() : axis.unitOrthogonal();
    double position = 0;
    if (const auto it = positions_.find(joint.name); it != positions_.end()) {
      if (joint.type == urdf::Joint::FIXED) Fail("joint_positions: " + item + " is fixed");
      position = it->second;
      used_positions_.insert(joint.name);
    }
    Isometry3d motion = Isometry3d::Identity();
    if (revolute) motion.linear() = Eigen::AngleAxisd(position, axis).toRotationMatrix();
    if (prismatic) motion.translation() = position * axis;
    const Isometry3d X_W_child = X_W_parent * X_pj * motion;
    const int body = AddBody(*child, X_W_child);

    engine::SpatialJoint j;
    j.name = joint.name;
    j.type = revolute    ? engine::SpatialJointType::kRevolute
             : prismatic ? engine::SpatialJointType::kPrismatic
                         : engine::SpatialJointType::kFixed;
    j.body_a = parent.body;
    j.body_b = body;
    j.point_a = X_bj.translation();
    j.axis_a = X_bj.linear() * axis;
    j.ref_a = X_bj.linear() * ref;
    j.axis_b = axis;
    j.ref_b = ref;
    const int index = static_cast<int>(robot_.joints.size());
    robot_.joints.push_back(j);
    joined_.insert(std::minmax(parent.body, body));
    AddLimits(joint, index);
    AddDynamics(joint, index, revolute);
    Visit(*child, Host{body, Isometry3d::Identity()}, X_W_child);
  }

  int AddBody(const urdf::Link& link, const Isometry3d& X_W) {
    const urdf::Inertial& in = *link.inertial;
    Eigen::Matrix3d I;
    I << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
    const Isometry3d X_li = ToIsometry(in.origin);
    engine::SpatialBody b;
    b.name = link.name;
    b.mass = in.mass;
    b.inertia = X_li.linear() * I * X_li.linear().transpose();
    b.com = X_li.translation();
    b.position = X_W.translation();
    const Eigen::Quaterniond Q(X_W.linear());
    b.quaternion = Eigen::Vector4d(Q.w(), Q.x(), Q.y(), Q.z());
    robot_.bodies.push_back(b);
    return static_cast<int>(robot_.bodies.size()) - 1;
  }

  void AddLimits(const urdf::Joint& joint, int index) {
    if (!joint.limits || joint.type == urdf::Joint::CONTINUOUS ||
        joint.type == urdf::Joint::FIXED) {
      return;
    }
    const double lower = joint.limits->lower, upper = joint.limits->upper;
    const std::string item = "joint '" + joint.name + "': <limit>";
    if (lower == 0 && upper == 0) {
      robot_.warnings.push_back(item + " without lower and upper: no stops");
      return;
    }
    if (!(lower < upper)) Fail(item + ": lower must be < upper");
    if (joint.type == urdf::Joint::REVOLUTE &&
        (lower < -std::numbers::pi || upper > std::numbers::pi)) {
      if (lower <= -std::numbers::pi && upper >= std::numbers::pi) {
        robot_.warnings.push_back(item + " spans a full turn or more: no stops");
        return;
      }
      Fail(item + ": stops beyond [-pi, pi] are not supported (the joint angle is atan2-valued)");
    }
    robot_.limits.push_back({joint.name, index, lower, upper, -1.0});
  }

  void AddDynamics(const urdf::Joint& joint, int index, bool revolute) {
    if (!joint.dynamics) return;
    const std::string item = "joint '" + joint.name + "': <dynamics>";
    if (joint.dynamics->damping > 0) {
      if (revolute) {
        robot_.dampers.push_back(
            {joint.name + "_damping", index, 0.0, joint.dynamics->damping, 0.0});
      } else {
        robot_.warnings.push_back(item + " damping of a prismatic joint is ignored");
      }
    }
    if (joint.dynamics->friction > 0) robot_.warnings.push_back(item + " friction is ignored");
  }

  void AddShapes(const urdf::Link& link, const Host& host) {
    for (std::size_t k = 0; k < link.collision_array.size(); ++k) {
      const urdf::Collision& c = *link.collision_array[k];
      const std::string name = k == 0 ? link.name : link.name + "." + std::to_string(k);
      const std::string item = "link '" + link.name + "': <collision> " + std::to_string(k + 1);
      if (!c.geometry) Fail(item + ": no geometry");
      const Isometry3d pose = host.X * ToIsometry(c.origin);
      try {
        robot_.shapes.push_back(MakeShape(*c.geometry, pose, name, host.body == engine::kGround));
      } catch (const std::invalid_argument& e) {
        Fail(item + ": " + e.what());
      }
      robot_.shape_bodies.push_back(host.body);
    }
  }

  contact::Shape MakeShape(const urdf::Geometry& g, const Isometry3d& pose, const std::string& name,
                           bool on_ground) const {
    switch (g.type) {
      case urdf::Geometry::SPHERE:
        return contact::Shape::Sphere(static_cast<const urdf::Sphere&>(g).radius, pose, name);
      case urdf::Geometry::BOX:
        return contact::Shape::Box(ToVector(static_cast<const urdf::Box&>(g).dim) / 2, pose, name);
      case urdf::Geometry::CYLINDER: {
        const auto& cyl = static_cast<const urdf::Cylinder&>(g);
        return contact::Shape::Cylinder(cyl.radius, cyl.length, pose, name);
      }
      case urdf::Geometry::MESH: {
        const auto& mesh = static_cast<const urdf::Mesh&>(g);
        const std::string path = ResolveMesh(mesh.filename);
        contact::TriangleMesh m = contact::LoadMesh(path);
        const Vector3d scale = ToVector(mesh.scale);
        for (Vector3d& v : m.vertices) v = v.cwiseProduct(scale);
        // A moving body needs a convex shape; the ground may have any surface.
        return on_ground ? contact::Shape::TriangleMeshSurface(std::move(m), pose, name, path)
                         : contact::Shape::ConvexMesh(std::move(m), pose, name, path);
      }
    }
    throw std::invalid_argument("unknown geometry type");
  }

  // file:// and plain paths relative to the URDF's folder; package://<package>/<rest> as <rest>
  // relative to the URDF's folder or one of its parents (URDFs usually sit in <package>/urdf/).
  std::string ResolveMesh(const std::string& uri) const {
    namespace fs = std::filesystem;
    const fs::path base = fs::path(file_).parent_path();
    std::string rest = uri;
    if (rest.rfind("file://", 0) == 0) rest = rest.substr(7);
    if (rest.rfind("package://", 0) == 0) {
      rest = rest.substr(10);
      const std::size_t slash = rest.find('/');
      rest = slash == std::string::npos ? "" : rest.substr(slash + 1);
      for (fs::path dir = fs::absolute(base);; dir = dir.parent_path()) {
        if (fs::exists(dir / rest)) return (dir / rest).string();
        if (dir == dir.parent_path()) break;
      }
      throw std::invalid_argument("mesh '" + uri +
                                  "' not found under the URDF's folder or its parents");
    }
    const fs::path path = fs::path(rest).is_absolute() ? fs::path(rest) : base / rest;
    return path.string();
  }

  static std::string TypeName(int type) {
    switch (type) {
      case urdf::Joint::FLOATING:
        return "floating";
      case urdf::Joint::PLANAR:
        return "planar";
      default:
        return "unknown";
    }
  }

  std::string file_;
  const std::map<std::string, double>& positions_;
  const urdf::ModelInterface* model_ = nullptr;
  UrdfRobot robot_;
  std::set<std::string> used_positions_;
  std::set<std::pair<int, int>> joined_;  // body pairs joined by a joint (kGround included)
};

}  // namespace

UrdfRobot ReadUrdf(const std::string& path, const std::map<std::string, double>& joint_positions) {
  return UrdfReader(path, joint_positions).Read();
}

}  // namespace saltus::tools
