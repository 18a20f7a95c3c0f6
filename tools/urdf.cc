#include "tools/urdf.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>

#include "tools/scene.h"
#include "tools/xml_reader.h"

namespace saltus::tools {

namespace {

using Eigen::Isometry3d;
using Eigen::Vector3d;

// <origin xyz rpy>: the rotation kept as liburdfdom keeps it, a unit quaternion (x, y, z, w).
struct Pose {
  Vector3d xyz = Vector3d::Zero();
  double x = 0, y = 0, z = 0, w = 1;
};

Isometry3d ToIsometry(const Pose& p) {
  Isometry3d X = Isometry3d::Identity();
  X.linear() = Eigen::Quaterniond(p.w, p.x, p.y, p.z).normalized().toRotationMatrix();
  X.translation() = p.xyz;
  return X;
}

struct Geometry {
  enum class Type { kSphere, kBox, kCylinder, kMesh } type = Type::kSphere;
  double radius = 0, length = 0;
  Vector3d size = Vector3d::Zero();
  std::string filename;
  Vector3d scale = Vector3d::Ones();
};

struct Collision {
  int line = 0;
  Pose origin;
  Geometry geometry;
};

struct Inertial {
  Pose origin;
  double mass = 0;
  double ixx = 0, ixy = 0, ixz = 0, iyy = 0, iyz = 0, izz = 0;
};

struct Link {
  std::string name;
  int line = 0;
  std::optional<Inertial> inertial;
  std::vector<Collision> collisions;
  int parent_joint = -1;          // index into the joints; -1: none (the root)
  std::vector<int> child_joints;  // ordered by joint name
};

enum class JointType { kRevolute, kContinuous, kPrismatic, kFixed, kFloating, kPlanar };

struct Limits {
  double lower = 0, upper = 0;
};

struct Dynamics {
  double damping = 0, friction = 0;
};

struct Joint {
  std::string name;
  int line = 0;
  JointType type = JointType::kFixed;
  Pose origin;
  std::string parent, child;
  int child_link = -1;  // index into the links, set with the tree
  Vector3d axis = Vector3d::UnitX();
  std::optional<Limits> limits;
  std::optional<Dynamics> dynamics;
};

bool HasMass(const Link& link) { return link.inertial && link.inertial->mass > 0; }

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
    if (!in) Fail(0, "cannot read the URDF file");
    std::stringstream text;
    text << in.rdbuf();
    XmlElement robot;
    try {
      robot = ReadXml(text.str());
    } catch (const XmlError& e) {
      Fail(e.line(), std::string("malformed URDF: ") + e.what());
    }
    ReadRobot(robot);
    const int root = Root(robot);
    visited_.assign(links_.size(), false);
    Walk(root);
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (!visited_[i]) {
        Fail(links_[i].line, "link '" + links_[i].name + "' is not connected to the root link '" +
                                 links_[static_cast<std::size_t>(root)].name +
                                 "' (its joints form a loop)");
      }
    }
    for (const auto& [name, value] : positions_) {
      if (!used_positions_.count(name)) {
        Fail(0, "joint_positions: '" + name + "' is not a moving joint of robot '" + robot_.name +
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
  [[noreturn]] void Fail(int line, const std::string& what) const {
    throw SceneError(file_, line, what);
  }

  // ---- Reading the elements ------------------------------------------------------------------

  // A decimal number as liburdfdom reads it (C locale; a leading '+' allowed), finite.
  double Number(const std::string& text, int line, const std::string& item) const {
    std::string_view t = text;
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    if (t.size() > 1 && t[0] == '+' && t[1] != '-' && t[1] != '+') t.remove_prefix(1);
    double value = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(value))
      Fail(line, item + ": '" + text + "' is not a finite number");
    return value;
  }

  // Attribute `key` of `e` as a number; `fallback` when absent, an error when it has none.
  double NumberAttribute(const XmlElement& e, const char* key, const std::string& item,
                         std::optional<double> fallback = std::nullopt) const {
    const std::string* text = e.Attribute(key);
    if (text == nullptr) {
      if (!fallback) Fail(e.line, item + ": attribute '" + key + "' is missing");
      return *fallback;
    }
    return Number(*text, e.line, item + ": " + key);
  }

  // Three numbers separated by whitespace.
  Vector3d VectorAttribute(const XmlElement& e, const char* key, const std::string& item) const {
    const std::string& text = *e.Attribute(key);
    std::vector<double> values;
    std::istringstream words(text);
    for (std::string word; words >> word;) {
      values.push_back(Number(word, e.line, item + ": " + key));
    }
    if (values.size() != 3) {
      Fail(e.line, item + ": " + key + " '" + text + "' has " + std::to_string(values.size()) +
                       " numbers, not 3");
    }
    return {values[0], values[1], values[2]};
  }

  // <origin xyz rpy> of `parent`, identity when absent.
  Pose ReadOrigin(const XmlElement& parent, const std::string& item) const {
    Pose p;
    const XmlElement* o = parent.Child("origin");
    if (o == nullptr) return p;
    if (o->Attribute("xyz")) p.xyz = VectorAttribute(*o, "xyz", item + ": <origin>");
    if (o->Attribute("rpy")) {
      const Vector3d rpy = VectorAttribute(*o, "rpy", item + ": <origin>");
      // The quaternion of R = Rz(yaw) Ry(pitch) Rx(roll), normalized, in liburdfdom's
      // operation order (urdf::Rotation::setFromRPY), so that the model is the same bit for bit.
      const double phi = rpy.x() / 2.0, the = rpy.y() / 2.0, psi = rpy.z() / 2.0;
      p.x = std::sin(phi) * std::cos(the) * std::cos(psi) -
            std::cos(phi) * std::sin(the) * std::sin(psi);
      p.y = std::cos(phi) * std::sin(the) * std::cos(psi) +
            std::sin(phi) * std::cos(the) * std::sin(psi);
      p.z = std::cos(phi) * std::cos(the) * std::sin(psi) -
            std::sin(phi) * std::sin(the) * std::cos(psi);
      p.w = std::cos(phi) * std::cos(the) * std::cos(psi) +
            std::sin(phi) * std::sin(the) * std::sin(psi);
      const double s = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z + p.w * p.w);
      p.x /= s;
      p.y /= s;
      p.z /= s;
      p.w /= s;
    }
    return p;
  }

  const std::string& Name(const XmlElement& e, const std::string& kind) const {
    const std::string* name = e.Attribute("name");
    if (name == nullptr) Fail(e.line, "<" + kind + "> without a name");
    return *name;
  }

  void ReadRobot(const XmlElement& robot) {
    if (robot.name != "robot")
      Fail(robot.line, "the root element is <" + robot.name + ">, not <robot>");
    robot_.name = Name(robot, "robot");
    if (const std::string* version = robot.Attribute("version"); version && *version != "1.0")
      Fail(robot.line,
           "robot '" + robot_.name + "': version '" + *version + "' (only 1.0 is read)");
    std::map<std::string, int> link_index, joint_index;
    for (const XmlElement& e : robot.children) {
      if (e.name != "link") continue;
      Link link = ReadLink(e);
      if (!link_index.emplace(link.name, static_cast<int>(links_.size())).second)
        Fail(e.line, "link '" + link.name + "': duplicate name");
      links_.push_back(std::move(link));
    }
    if (links_.empty()) Fail(robot.line, "robot '" + robot_.name + "' has no link");
    for (const XmlElement& e : robot.children) {
      if (e.name != "joint") continue;
      Joint joint = ReadJoint(e);
      if (!joint_index.emplace(joint.name, static_cast<int>(joints_.size())).second)
        Fail(e.line, "joint '" + joint.name + "': duplicate name");
      joints_.push_back(std::move(joint));
    }
    // The tree: each link the child of at most one joint; children in joint-name order.
    for (const auto& [name, j] : joint_index) {
      const Joint& joint = joints_[static_cast<std::size_t>(j)];
      const std::string item = "joint '" + joint.name + "'";
      const auto parent = link_index.find(joint.parent), child = link_index.find(joint.child);
      if (parent == link_index.end())
        Fail(joint.line, item + ": parent link '" + joint.parent + "' is missing");
      if (child == link_index.end())
        Fail(joint.line, item + ": child link '" + joint.child + "' is missing");
      Link& c = links_[static_cast<std::size_t>(child->second)];
      if (c.parent_joint >= 0) {
        Fail(joint.line, item + ": link '" + c.name + "' is already the child of joint '" +
                             joints_[static_cast<std::size_t>(c.parent_joint)].name + "'");
      }
      c.parent_joint = j;
      joints_[static_cast<std::size_t>(j)].child_link = child->second;
      links_[static_cast<std::size_t>(parent->second)].child_joints.push_back(j);
    }
  }

  Link ReadLink(const XmlElement& e) {
    Link link;
    link.name = Name(e, "link");
    link.line = e.line;
    const std::string item = "link '" + link.name + "'";
    if (const XmlElement* in = e.Child("inertial")) {
      Inertial inertial;
      const std::string where = item + ": <inertial>";
      inertial.origin = ReadOrigin(*in, where);
      const XmlElement* mass = in->Child("mass");
      if (mass == nullptr) Fail(in->line, where + ": <mass> is missing");
      inertial.mass = NumberAttribute(*mass, "value", where + ": <mass>");
      const XmlElement* inertia = in->Child("inertia");
      if (inertia == nullptr) Fail(in->line, where + ": <inertia> is missing");
      const std::string at = where + ": <inertia>";
      inertial.ixx = NumberAttribute(*inertia, "ixx", at);
      inertial.ixy = NumberAttribute(*inertia, "ixy", at);
      inertial.ixz = NumberAttribute(*inertia, "ixz", at);
      inertial.iyy = NumberAttribute(*inertia, "iyy", at);
      inertial.iyz = NumberAttribute(*inertia, "iyz", at);
      inertial.izz = NumberAttribute(*inertia, "izz", at);
      link.inertial = inertial;
    }
    for (const XmlElement& c : e.children) {
      if (c.name != "collision") continue;
      const std::string where =
          item + ": <collision> " + std::to_string(link.collisions.size() + 1);
      Collision collision;
      collision.line = c.line;
      collision.origin = ReadOrigin(c, where);
      const XmlElement* g = c.Child("geometry");
      if (g == nullptr) Fail(c.line, where + ": no geometry");
      collision.geometry = ReadGeometry(*g, where);
      link.collisions.push_back(std::move(collision));
    }
    return link;
  }

  // The first child of <geometry>: sphere, box, cylinder or mesh.
  Geometry ReadGeometry(const XmlElement& g, const std::string& where) const {
    if (g.children.empty()) Fail(g.line, where + ": <geometry> is empty");
    const XmlElement& s = g.children.front();
    const std::string item = where + ": <" + s.name + ">";
    Geometry geometry;
    if (s.name == "sphere") {
      geometry.type = Geometry::Type::kSphere;
      geometry.radius = NumberAttribute(s, "radius", item);
    } else if (s.name == "box") {
      geometry.type = Geometry::Type::kBox;
      if (!s.Attribute("size")) Fail(s.line, item + ": attribute 'size' is missing");
      geometry.size = VectorAttribute(s, "size", item);
    } else if (s.name == "cylinder") {
      geometry.type = Geometry::Type::kCylinder;
      geometry.length = NumberAttribute(s, "length", item);
      geometry.radius = NumberAttribute(s, "radius", item);
    } else if (s.name == "mesh") {
      geometry.type = Geometry::Type::kMesh;
      const std::string* filename = s.Attribute("filename");
      if (filename == nullptr) Fail(s.line, item + ": attribute 'filename' is missing");
      geometry.filename = *filename;
      if (s.Attribute("scale")) geometry.scale = VectorAttribute(s, "scale", item);
    } else {
      Fail(s.line,
           where + ": geometry <" + s.name + "> is not supported (sphere, box, cylinder, mesh)");
    }
    return geometry;
  }

  Joint ReadJoint(const XmlElement& e) const {
    Joint joint;
    joint.name = Name(e, "joint");
    joint.line = e.line;
    const std::string item = "joint '" + joint.name + "'";
    const std::string* type = e.Attribute("type");
    if (type == nullptr) Fail(e.line, item + ": attribute 'type' is missing");
    static const std::map<std::string, JointType, std::less<>> kTypes = {
        {"revolute", JointType::kRevolute},   {"continuous", JointType::kContinuous},
        {"prismatic", JointType::kPrismatic}, {"fixed", JointType::kFixed},
        {"floating", JointType::kFloating},   {"planar", JointType::kPlanar}};
    const auto t = kTypes.find(*type);
    if (t == kTypes.end()) Fail(e.line, item + ": unknown type '" + *type + "'");
    joint.type = t->second;
    joint.origin = ReadOrigin(e, item);
    for (const auto& [tag, name] : {std::pair{"parent", &joint.parent}, {"child", &joint.child}}) {
      const XmlElement* link = e.Child(tag);
      const std::string* link_name = link ? link->Attribute("link") : nullptr;
      if (link_name == nullptr)
        Fail(link ? link->line : e.line, item + ": <" + tag + " link=...> is missing");
      *name = *link_name;
    }
    if (joint.type != JointType::kFixed && joint.type != JointType::kFloating) {
      if (const XmlElement* axis = e.Child("axis")) {
        joint.axis = axis->Attribute("xyz") ? VectorAttribute(*axis, "xyz", item + ": <axis>")
                                            : Vector3d::Zero();
      }
    }
    if (const XmlElement* limit = e.Child("limit")) {
      const std::string where = item + ": <limit>";
      joint.limits = Limits{NumberAttribute(*limit, "lower", where, 0.0),
                            NumberAttribute(*limit, "upper", where, 0.0)};
      NumberAttribute(*limit, "effort", where);  // required by the format, unused here
      NumberAttribute(*limit, "velocity", where);
    } else if (joint.type == JointType::kRevolute || joint.type == JointType::kPrismatic) {
      Fail(e.line, item + ": a " + *type + " joint needs a <limit>");
    }
    if (const XmlElement* dynamics = e.Child("dynamics")) {
      const std::string where = item + ": <dynamics>";
      if (!dynamics->Attribute("damping") && !dynamics->Attribute("friction"))
        Fail(dynamics->line, where + " has neither damping nor friction");
      joint.dynamics = Dynamics{NumberAttribute(*dynamics, "damping", where, 0.0),
                                NumberAttribute(*dynamics, "friction", where, 0.0)};
    }
    if (e.Child("mimic")) Fail(e.Child("mimic")->line, item + ": mimic joints are not supported");
    return joint;
  }

  // The one link that is no joint's child.
  int Root(const XmlElement& robot) const {
    int root = -1;
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (links_[i].parent_joint >= 0) continue;
      if (root >= 0) {
        Fail(links_[i].line, "two root links, '" + links_[static_cast<std::size_t>(root)].name +
                                 "' and '" + links_[i].name +
                                 "' (links that no joint has as child)");
      }
      root = static_cast<int>(i);
    }
    if (root < 0) Fail(robot.line, "no root link: every link is a joint's child (a loop)");
    return root;
  }

  // ---- The model -----------------------------------------------------------------------------

  // Where a joint leads: its child link, where the child's frame is and its world pose.
  struct Placed {
    int link = 0;
    Host host;
    Isometry3d X_W = Isometry3d::Identity();
  };

  // Every link reachable from the root, depth first with children in joint-name order (each
  // link's shapes, then for each child joint its body and joint, then that child's subtree), as
  // a recursive walk would go, with a stack of pending joints instead of the call stack: a chain
  // as deep as a file makes it cannot exhaust the call stack.
  void Walk(int root) {
    struct Pending {
      int joint = 0;
      Host parent;
      Isometry3d X_W_parent = Isometry3d::Identity();
    };
    std::vector<Pending> pending;
    const auto visit = [&](const Placed& p) {
      visited_[static_cast<std::size_t>(p.link)] = true;
      const Link& link = links_[static_cast<std::size_t>(p.link)];
      AddShapes(link, p.host);
      for (auto j = link.child_joints.rbegin(); j != link.child_joints.rend(); ++j)
        pending.push_back({*j, p.host, p.X_W});
    };
    visit(Placed{root, Host{}, Isometry3d::Identity()});
    while (!pending.empty()) {
      const Pending p = pending.back();
      pending.pop_back();
      visit(VisitJoint(joints_[static_cast<std::size_t>(p.joint)], p.parent, p.X_W_parent));
    }
  }

  Placed VisitJoint(const Joint& joint, const Host& parent, const Isometry3d& X_W_parent) {
    const std::string item = "joint '" + joint.name + "'";
    const int child_index = joint.child_link;
    const Link& child = links_[static_cast<std::size_t>(child_index)];
    const Isometry3d X_pj = ToIsometry(joint.origin);
    const Isometry3d X_bj = parent.X * X_pj;  // the joint frame in the parent's body
    if (joint.type == JointType::kFixed && !HasMass(child)) {
      return {child_index, Host{parent.body, X_bj}, X_W_parent * X_pj};  // merged into the parent
    }
    const bool revolute =
        joint.type == JointType::kRevolute || joint.type == JointType::kContinuous;
    const bool prismatic = joint.type == JointType::kPrismatic;
    const bool fixed = joint.type == JointType::kFixed;
    if (!revolute && !prismatic && !fixed) {
      Fail(joint.line, item + ": type " +
                           (joint.type == JointType::kFloating ? "floating" : "planar") +
                           " is not supported (revolute, continuous, prismatic, fixed)");
    }
    if (!HasMass(child)) {
      Fail(joint.line, item + ": its child link '" + child.name +
                           "' needs an <inertial> with mass > 0 (a moving joint carries a body)");
    }
    Vector3d axis = joint.axis;
    if (!fixed && !(axis.norm() > 1e-12)) Fail(joint.line, item + ": zero axis");
    if (fixed) axis = Vector3d::UnitZ();
    axis.normalize();
    const Vector3d ref = fixed ? Vector3d::UnitX() : axis.unitOrthogonal();
    double position = 0;
    if (const auto it = positions_.find(joint.name); it != positions_.end()) {
      if (fixed) Fail(joint.line, "joint_positions: " + item + " is fixed");
      position = it->second;
      used_positions_.insert(joint.name);
    }
    Isometry3d motion = Isometry3d::Identity();
    if (revolute) motion.linear() = Eigen::AngleAxisd(position, axis).toRotationMatrix();
    if (prismatic) motion.translation() = position * axis;
    const Isometry3d X_W_child = X_W_parent * X_pj * motion;
    const int body = AddBody(child, X_W_child);

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
    return {child_index, Host{body, Isometry3d::Identity()}, X_W_child};
  }

  int AddBody(const Link& link, const Isometry3d& X_W) {
    const Inertial& in = *link.inertial;
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

  void AddLimits(const Joint& joint, int index) {
    if (!joint.limits || joint.type == JointType::kContinuous || joint.type == JointType::kFixed) {
      return;
    }
    const double lower = joint.limits->lower, upper = joint.limits->upper;
    const std::string item = "joint '" + joint.name + "': <limit>";
    if (lower == 0 && upper == 0) {
      robot_.warnings.push_back(item + " without lower and upper: no stops");
      return;
    }
    if (!(lower < upper)) Fail(joint.line, item + ": lower must be < upper");
    if (joint.type == JointType::kRevolute &&
        (lower < -std::numbers::pi || upper > std::numbers::pi)) {
      if (lower <= -std::numbers::pi && upper >= std::numbers::pi) {
        robot_.warnings.push_back(item + " spans a full turn or more: no stops");
        return;
      }
      Fail(joint.line,
           item + ": stops beyond [-pi, pi] are not supported (the joint angle is atan2-valued)");
    }
    robot_.limits.push_back({joint.name, index, lower, upper, -1.0});
  }

  void AddDynamics(const Joint& joint, int index, bool revolute) {
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

  void AddShapes(const Link& link, const Host& host) {
    for (std::size_t k = 0; k < link.collisions.size(); ++k) {
      const Collision& c = link.collisions[k];
      const std::string name = k == 0 ? link.name : link.name + "." + std::to_string(k);
      const std::string item = "link '" + link.name + "': <collision> " + std::to_string(k + 1);
      const Isometry3d pose = host.X * ToIsometry(c.origin);
      try {
        robot_.shapes.push_back(MakeShape(c.geometry, pose, name, host.body == engine::kGround));
      } catch (const std::invalid_argument& e) {
        Fail(c.line, item + ": " + e.what());
      }
      robot_.shape_bodies.push_back(host.body);
    }
  }

  contact::Shape MakeShape(const Geometry& g, const Isometry3d& pose, const std::string& name,
                           bool on_ground) const {
    switch (g.type) {
      case Geometry::Type::kSphere:
        return contact::Shape::Sphere(g.radius, pose, name);
      case Geometry::Type::kBox:
        return contact::Shape::Box(g.size / 2, pose, name);
      case Geometry::Type::kCylinder:
        return contact::Shape::Cylinder(g.radius, g.length, pose, name);
      case Geometry::Type::kMesh: {
        const std::string path = ResolveMesh(g.filename);
        contact::TriangleMesh m = contact::LoadMesh(path);
        for (Vector3d& v : m.vertices) v = v.cwiseProduct(g.scale);
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

  std::string file_;
  const std::map<std::string, double>& positions_;
  std::vector<Link> links_;
  std::vector<Joint> joints_;
  std::vector<bool> visited_;
  UrdfRobot robot_;
  std::set<std::string> used_positions_;
  std::set<std::pair<int, int>> joined_;  // body pairs joined by a joint (kGround included)
};

}  // namespace

UrdfRobot ReadUrdf(const std::string& path, const std::map<std::string, double>& joint_positions) {
  return UrdfReader(path, joint_positions).Read();
}

}  // namespace saltus::tools
