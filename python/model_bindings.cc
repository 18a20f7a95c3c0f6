// Models built in Python code (issues 3, 4, 9): saltus.PlanarBuilder and saltus.SpatialBuilder
// wrap engine::PlanarModelBuilder (+ planar contacts) / engine::SpatialModelBuilder, and
// saltus.Model.lagrangian builds a Lagrangian system
//
//   M(q) v̇ = F(t, q, v) + Gᵀ λ,   g(t, q) = 0 (bilateral rows) or 0 ≤ g ⊥ λ ≥ 0 (unilateral),
//
// (engine/lagrangian_system.h) with M, F and the constraint rows g, G = ∂g/∂q, γ (the v̇-free
// part of g̈ = G v̇ + γ) and ∂g/∂t as Python callables on numpy arrays (saltus.Constraints).
// SpatialBuilder offers every item of a `dimension: 3` scene file (docs/scene-format.md):
// bodies, joints, drivers (rheonomic rows with a constant-rate, polynomial or sine profile),
// spring-dampers, torsional spring-dampers, loads with an optional time profile, prismatic
// friction, shapes and contact pairs (groups/masks, exclusions, per-pair restitution), and
// builds them with the scene loader's own construction (tools::BuildSceneSystem,
// tools::SelectContactPairs): the same items give the same system and assembled initial state.
// Every argument is checked when the item is added, and every array a callable returns is
// checked for its size when it is evaluated: both raise saltus.InvalidArgument naming the item.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contact/planar_contacts.h"
#include "engine/planar_model.h"
#include "engine/spatial_model.h"
#include "python/bindings.h"
#include "tools/scene.h"

namespace py = pybind11;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace saltus::python {

VectorXd ToVector(const py::handle& o, const std::string& what, Eigen::Index n) {
  using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
  Array a;
  if (!o.is_none()) {
    a = Array::ensure(o);  // null (and no Python error) when o is not numeric
  }
  if (!a || a.ndim() != 1) {
    throw InvalidArgument(what + " must be a 1-D array of floats" +
                          (n >= 0 ? " of size " + std::to_string(n) : std::string()));
  }
  if (n >= 0 && a.shape(0) != n) {
    throw InvalidArgument(what + " must have size " + std::to_string(n) + ", got " +
                          std::to_string(a.shape(0)));
  }
  return Eigen::Map<const VectorXd>(a.data(), a.shape(0));
}

MatrixXd ToMatrix(const py::handle& o, const std::string& what, Eigen::Index rows,
                  Eigen::Index cols) {
  using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
  Array a;
  if (!o.is_none()) a = Array::ensure(o);
  const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
  if (!a || a.ndim() < 1 || a.ndim() > 2) {
    throw InvalidArgument(what + " must be a " + shape + " array of floats");
  }
  const Eigen::Index r = a.ndim() == 2 ? a.shape(0) : 1;
  const Eigen::Index c = a.ndim() == 2 ? a.shape(1) : a.shape(0);
  if (r != rows || c != cols || (a.ndim() == 1 && rows != 1)) {
    throw InvalidArgument(what + " must be " + shape + ", got " +
                          (a.ndim() == 2 ? std::to_string(r) + " x " : std::string("size ")) +
                          std::to_string(c));
  }
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return Eigen::Map<const RowMajor>(a.data(), rows, cols);
}

py::function ToCallable(const py::handle& o, const std::string& what,
                        const std::string& signature) {
  if (o.is_none() || !PyCallable_Check(o.ptr())) {
    throw InvalidArgument(what + " must be callable " + signature);
  }
  return py::reinterpret_borrow<py::function>(o);
}

namespace {

// Runs a builder call, turning its std::invalid_argument into saltus::InvalidArgument.
template <class Fn>
auto Checked(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::invalid_argument& e) {
    throw InvalidArgument(e.what());
  }
}

template <int N>
Eigen::Matrix<double, N, 1> Fixed(const py::handle& o, const std::string& what) {
  return ToVector(o, what, N);
}

// Body references by name ("ground" or a body added before) or by index.
class BodyNames {
 public:
  void Add(const std::string& name) { index_[name] = static_cast<int>(index_.size()); }
  int Resolve(const py::handle& o, const std::string& item) const {
    if (py::isinstance<py::str>(o)) {
      const std::string name = o.cast<std::string>();
      if (name == "ground") return engine::kGround;
      const auto it = index_.find(name);
      if (it == index_.end()) throw InvalidArgument(item + ": unknown body '" + name + "'");
      return it->second;
    }
    if (py::isinstance<py::int_>(o)) return o.cast<int>();
    throw InvalidArgument(item + ": a body is given by its name or index");
  }

 private:
  std::map<std::string, int> index_;
};

// ---- planar ---------------------------------------------------------------------------------
class PlanarBuilder {
 public:
  int AddBody(const std::string& name, double mass, double inertia, const py::handle& position,
              const py::handle& velocity) {
    const std::string item = "body '" + name + "'";
    engine::PlanarBody b;
    b.name = name;
    b.mass = mass;
    b.inertia = inertia;
    b.q0 = Fixed<3>(position, item + ": position (x, y, theta)");
    b.v0 = Fixed<3>(velocity, item + ": velocity");
    const int i = Checked([&] { return builder_.AddBody(b); });
    bodies_.Add(name);
    return i;
  }
  int AddJoint(const std::string& name, const std::string& type, const py::handle& body_a,
               const py::handle& body_b, const py::handle& point_a, const py::handle& point_b,
               const py::handle& axis_a, double angle0, double rate, double length) {
    const std::string item = "joint '" + name + "'";
    engine::PlanarJoint j;
    j.name = name;
    using T = engine::PlanarJointType;
    static const std::map<std::string, T> kTypes = {{"revolute", T::kRevolute},
                                                    {"prismatic", T::kPrismatic},
                                                    {"angle_driver", T::kAngleDriver},
                                                    {"distance", T::kDistance},
                                                    {"fixed", T::kFixed},
                                                    {"point_on_line", T::kPointOnLine}};
    const auto type_it = kTypes.find(type);
    if (type_it == kTypes.end()) {
      throw InvalidArgument(
          item + ": unknown type '" + type +
          "' (revolute, prismatic, angle_driver, distance, fixed, point_on_line)");
    }
    j.type = type_it->second;
    j.body_a = bodies_.Resolve(body_a, item);
    j.body_b = bodies_.Resolve(body_b, item);
    j.point_a = Fixed<2>(point_a, item + ": point_a");
    j.point_b = Fixed<2>(point_b, item + ": point_b");
    j.axis_a = Fixed<2>(axis_a, item + ": axis_a");
    j.angle0 = angle0;
    j.rate = rate;
    j.length = length;  // distance: 0 takes the initial distance of the points
    const int i = Checked([&] { return builder_.AddJoint(j); });
    joint_names_.push_back(name);
    return i;
  }
  // Defined after ProfileOf (below): a driver on a joint given by name or index.
  int AddDriver(const std::string& name, const py::handle& joint, const std::string& kind,
                const std::string& profile, const py::object& value0, const py::object& rate,
                const py::object& coefficients, const py::object& amplitude,
                const py::object& frequency, const py::object& phase);
  int AddSpring(const std::string& name, const py::handle& body_a, const py::handle& body_b,
                const py::handle& point_a, const py::handle& point_b, double stiffness,
                double damping, double rest_length) {
    const std::string item = "spring '" + name + "'";
    engine::PlanarSpringDamper s;
    s.name = name;
    s.body_a = bodies_.Resolve(body_a, item);
    s.body_b = bodies_.Resolve(body_b, item);
    s.point_a = Fixed<2>(point_a, item + ": point_a");
    s.point_b = Fixed<2>(point_b, item + ": point_b");
    s.stiffness = stiffness;
    s.damping = damping;
    s.rest_length = rest_length;
    return Checked([&] { return builder_.AddSpringDamper(s); });
  }
  // Defined after ScaleOf and ItemNames (below).
  int AddLoad(const std::string& name, const py::handle& body, const py::handle& force,
              const py::handle& point, double torque, const py::handle& scale);
  int AddTorsionalSpring(const std::string& name, const py::handle& joint, double stiffness,
                         double damping, double angle0);
  int AddContact(const std::string& name, const std::string& type, const py::handle& body_a,
                 const py::handle& body_b, const py::handle& point_a, const py::handle& normal_a,
                 double radius_a, const py::handle& point_b, double radius_b, double restitution,
                 double friction) {
    const std::string item = "contact '" + name + "'";
    contact::PlanarContact c;
    c.name = name;
    if (type == "point_line") {
      c.type = contact::PlanarContactType::kPointLine;
    } else if (type == "disk_line") {
      c.type = contact::PlanarContactType::kDiskLine;
    } else if (type == "disk_disk") {
      c.type = contact::PlanarContactType::kDiskDisk;
    } else {
      throw InvalidArgument(item + ": unknown type '" + type +
                            "' (point_line, disk_line, disk_disk)");
    }
    c.body_a = bodies_.Resolve(body_a, item);
    c.body_b = bodies_.Resolve(body_b, item);
    c.point_a = Fixed<2>(point_a, item + ": point_a");
    c.normal_a = Fixed<2>(normal_a, item + ": normal_a");
    c.radius_a = radius_a;
    c.point_b = Fixed<2>(point_b, item + ": point_b");
    c.radius_b = radius_b;
    c.restitution = restitution;
    c.friction = friction;
    for (const contact::PlanarContact& other : contacts_) {
      if (other.name == name) throw InvalidArgument(item + ": the name is already used");
    }
    contacts_.push_back(c);
    return static_cast<int>(contacts_.size()) - 1;
  }
  void SetGravity(const py::handle& g) {
    Checked([&] { builder_.SetGravity(Fixed<2>(g, "gravity")); });
  }
  // The builder stays usable: Build copies the model. Contacts are validated here, against the
  // bodies (Model::FromPlanar throws InvalidArgument naming a bad contact).
  Model Build() const {
    engine::PlanarModelBuilder copy = builder_;
    return Model::FromPlanar(Checked([&] { return copy.Build(); }), contacts_);
  }

 private:
  engine::PlanarModelBuilder builder_;
  std::vector<contact::PlanarContact> contacts_;
  BodyNames bodies_;
  std::vector<std::string> joint_names_;  // index = joint index
};

// ---- spatial --------------------------------------------------------------------------------
engine::SpatialJointType SpatialJointTypeOf(const std::string& type, const std::string& item) {
  using T = engine::SpatialJointType;
  static const std::map<std::string, T> kTypes = {{"spherical", T::kSpherical},
                                                  {"revolute", T::kRevolute},
                                                  {"universal", T::kUniversal},
                                                  {"cylindrical", T::kCylindrical},
                                                  {"prismatic", T::kPrismatic},
                                                  {"fixed", T::kFixed},
                                                  {"planar", T::kPlanar},
                                                  {"distance", T::kDistance},
                                                  {"point_on_line", T::kPointOnLine},
                                                  {"point_on_plane", T::kPointOnPlane}};
  const auto it = kTypes.find(type);
  if (it == kTypes.end()) {
    std::string known;
    for (const auto& [name, t] : kTypes) known += (known.empty() ? "" : ", ") + name;
    throw InvalidArgument(item + ": unknown type '" + type + "' (" + known + ")");
  }
  return it->second;
}

// A name -> index table for joints and shapes (items referred to by name or index).
class ItemNames {
 public:
  explicit ItemNames(std::string kind) : kind_(std::move(kind)) {}
  void Add(const std::string& name, int index) { index_[name] = index; }
  bool Has(const std::string& name) const { return index_.count(name) != 0; }
  int Resolve(const py::handle& o, const std::string& item, int count) const {
    if (py::isinstance<py::str>(o)) {
      const std::string name = o.cast<std::string>();
      const auto it = index_.find(name);
      if (it == index_.end()) {
        std::string known;
        for (const auto& [n, i] : index_) known += (known.empty() ? "" : ", ") + n;
        throw InvalidArgument(item + ": unknown " + kind_ + " '" + name + "' (" + kind_ +
                              "s: " + (known.empty() ? "none" : known) + ")");
      }
      return it->second;
    }
    if (py::isinstance<py::int_>(o) && !py::isinstance<py::bool_>(o)) {
      const int i = o.cast<int>();
      if (i < 0 || i >= count) {
        throw InvalidArgument(item + ": " + kind_ + " index " + std::to_string(i) +
                              " out of range (" + std::to_string(count) + " " + kind_ + "s)");
      }
      return i;
    }
    throw InvalidArgument(item + ": a " + kind_ + " is given by its name or index");
  }

 private:
  std::string kind_;
  std::map<std::string, int> index_;
};

// A TimeProfile from the keys of the scene format's `profile:` (docs/scene-format.md):
// constant_rate (value0, rate), polynomial (coefficients), sine (value0, amplitude, frequency,
// phase). `given` maps the keys the caller set (None: not set); keys of another profile raise.
// The numbers are checked by the engine builder (engine::SpatialModelBuilder).
engine::TimeProfile ProfileOf(const std::string& item, const std::string& kind,
                              const std::map<std::string, py::object>& given) {
  engine::TimeProfile p;
  std::vector<std::string> allowed;
  if (kind == "constant_rate") {
    p.kind = engine::TimeProfile::Kind::kConstantRate;
    allowed = {"value0", "rate"};
  } else if (kind == "polynomial") {
    p.kind = engine::TimeProfile::Kind::kPolynomial;
    allowed = {"coefficients"};
  } else if (kind == "sine") {
    p.kind = engine::TimeProfile::Kind::kSine;
    allowed = {"value0", "amplitude", "frequency", "phase"};
  } else {
    throw InvalidArgument(item + ": profile '" + kind +
                          "' is unknown (use constant_rate, polynomial or sine)");
  }
  for (const auto& [key, value] : given) {
    if (value.is_none()) continue;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string keys;
      for (const std::string& k : allowed) keys += (keys.empty() ? "" : ", ") + k;
      throw InvalidArgument(item + ": '" + key + "' is not a parameter of a " + kind +
                            " profile (" + keys + ")");
    }
    const std::string what = item + ": " + key;
    if (key == "coefficients") {
      const VectorXd c = ToVector(value, what);
      if (c.size() == 0) {
        throw InvalidArgument(what + " must be a non-empty list [c0, c1, ...] (phi = sum c_k t^k)");
      }
      p.coefficients.assign(c.data(), c.data() + c.size());
      continue;
    }
    double x = 0.0;
    try {
      x = value.cast<double>();
    } catch (const py::cast_error&) {
      throw InvalidArgument(what + " must be a number");
    }
    if (key == "value0") p.value0 = x;
    if (key == "rate") p.rate = x;
    if (key == "amplitude") p.amplitude = x;
    if (key == "frequency") p.frequency = x;
    if (key == "phase") p.phase = x;
  }
  if (p.kind == engine::TimeProfile::Kind::kPolynomial && p.coefficients.empty()) {
    throw InvalidArgument(item + ": a polynomial profile needs coefficients [c0, c1, ...]");
  }
  return p;
}

// The kind ("angle" or "displacement") and profile of a driver from add_driver's arguments (the
// planar and spatial builders).
struct DriverMotion {
  engine::DriverKind kind = engine::DriverKind::kAngle;
  engine::TimeProfile profile;
};
DriverMotion DriverMotionOf(const std::string& item, const std::string& kind,
                            const std::string& profile, const py::object& value0,
                            const py::object& rate, const py::object& coefficients,
                            const py::object& amplitude, const py::object& frequency,
                            const py::object& phase) {
  DriverMotion m;
  if (kind == "angle") {
    m.kind = engine::DriverKind::kAngle;
  } else if (kind == "displacement") {
    m.kind = engine::DriverKind::kDisplacement;
  } else {
    throw InvalidArgument(item + ": kind '" + kind + "' is unknown (use angle or displacement)");
  }
  m.profile = ProfileOf(item, profile,
                        {{"value0", value0},
                         {"rate", rate},
                         {"coefficients", coefficients},
                         {"amplitude", amplitude},
                         {"frequency", frequency},
                         {"phase", phase}});
  return m;
}

// A load's `scale`: a dict with the keys of a scene file's `scale:` mapping.
engine::TimeProfile ScaleOf(const std::string& item, const py::handle& scale) {
  if (!py::isinstance<py::dict>(scale)) {
    throw InvalidArgument(item + ": scale must be a dict {'profile': ..., <its parameters>}");
  }
  std::map<std::string, py::object> given;
  std::string kind;
  for (const auto& [k, v] : scale.cast<py::dict>()) {
    const std::string key = py::str(k);
    if (key == "profile") {
      if (!py::isinstance<py::str>(v))
        throw InvalidArgument(item + ": scale.profile must be a string");
      kind = v.cast<std::string>();
    } else if (key == "value0" || key == "rate" || key == "coefficients" || key == "amplitude" ||
               key == "frequency" || key == "phase") {
      given[key] = py::reinterpret_borrow<py::object>(v);
    } else {
      throw InvalidArgument(item + ": scale: unknown key '" + key +
                            "' (profile, value0, rate, coefficients, amplitude, frequency, phase)");
    }
  }
  if (kind.empty()) throw InvalidArgument(item + ": scale needs a 'profile'");
  return ProfileOf(item + ": scale", kind, given);
}

int PlanarBuilder::AddDriver(const std::string& name, const py::handle& joint,
                             const std::string& kind, const std::string& profile,
                             const py::object& value0, const py::object& rate,
                             const py::object& coefficients, const py::object& amplitude,
                             const py::object& frequency, const py::object& phase) {
  const std::string item = "driver '" + name + "'";
  ItemNames joints("joint");
  for (std::size_t j = 0; j < joint_names_.size(); ++j) {
    joints.Add(joint_names_[j], static_cast<int>(j));
  }
  engine::PlanarDriver d;
  d.name = name;
  d.joint = joints.Resolve(joint, item, static_cast<int>(joint_names_.size()));
  const DriverMotion m =
      DriverMotionOf(item, kind, profile, value0, rate, coefficients, amplitude, frequency, phase);
  d.kind = m.kind;
  d.profile = m.profile;
  return Checked([&] { return builder_.AddDriver(d); });
}

int PlanarBuilder::AddLoad(const std::string& name, const py::handle& body, const py::handle& force,
                           const py::handle& point, double torque, const py::handle& scale) {
  const std::string item = "load '" + name + "'";
  engine::PlanarLoad l;
  l.name = name;
  l.body = bodies_.Resolve(body, item);
  l.force = Fixed<2>(force, item + ": force");
  l.point = Fixed<2>(point, item + ": point");
  l.torque = torque;
  if (!scale.is_none()) l.scale = ScaleOf(item, scale);
  return Checked([&] { return builder_.AddLoad(l); });
}

int PlanarBuilder::AddTorsionalSpring(const std::string& name, const py::handle& joint,
                                      double stiffness, double damping, double angle0) {
  const std::string item = "torsional spring '" + name + "'";
  ItemNames joints("joint");
  for (std::size_t j = 0; j < joint_names_.size(); ++j) {
    joints.Add(joint_names_[j], static_cast<int>(j));
  }
  engine::PlanarTorsionalSpring s;
  s.name = name;
  s.joint = joints.Resolve(joint, item, static_cast<int>(joint_names_.size()));
  s.stiffness = stiffness;
  s.damping = damping;
  s.angle0 = angle0;
  return Checked([&] { return builder_.AddTorsionalSpring(s); });
}

// The spatial builder records its items in a tools::Scene (`dimension: 3`) and builds it with
// tools::BuildSceneSystem, the construction a scene file goes through (engine builder, contact
// pairs chosen by tools::SelectContactPairs, consistent initialization): a model built here and
// the same scene file give the same system and initial state. Each item is also handed to an
// engine::SpatialModelBuilder when added, so that a bad item raises at once, naming it.
class SpatialBuilder {
 public:
  SpatialBuilder() {
    scene_.file = "SpatialBuilder";
    scene_.name = "python";
    scene_.dimension = 3;
    scene_.spatial.gravity.setZero();  // engine default (the scene file's default is -9.81 z)
  }
  int AddBody(const std::string& name, double mass, const py::handle& inertia,
              const py::handle& com, const py::handle& position, const py::handle& quaternion,
              const py::handle& velocity, const py::handle& angular_velocity) {
    const std::string item = "body '" + name + "'";
    engine::SpatialBody b;
    b.name = name;
    b.mass = mass;
    // The principal moments (3) or the full 3 × 3 tensor, body axes.
    const py::array arr = py::array::ensure(inertia);
    if (arr && arr.ndim() == 1) {
      b.inertia = Fixed<3>(inertia, item + ": inertia").asDiagonal();
    } else {
      b.inertia = ToMatrix(inertia, item + ": inertia (3 moments or a 3 x 3 tensor)", 3, 3);
    }
    b.com = Fixed<3>(com, item + ": com");
    b.position = Fixed<3>(position, item + ": position");
    b.quaternion = Fixed<4>(quaternion, item + ": quaternion (w, x, y, z)");
    b.velocity = Fixed<3>(velocity, item + ": velocity");
    b.angular_velocity = Fixed<3>(angular_velocity, item + ": angular_velocity");
    const int i = Checked([&] { return builder_.AddBody(b); });
    bodies_.Add(name);
    sp().bodies.push_back(b);
    return i;
  }
  int AddJoint(const std::string& name, const std::string& type, const py::handle& body_a,
               const py::handle& body_b, const py::handle& point_a, const py::handle& point_b,
               const py::handle& axis_a, const py::handle& axis_b, const py::handle& ref_a,
               const py::handle& ref_b, double length) {
    const std::string item = "joint '" + name + "'";
    engine::SpatialJoint j;
    j.name = name;
    j.type = SpatialJointTypeOf(type, item);
    j.body_a = bodies_.Resolve(body_a, item);
    j.body_b = bodies_.Resolve(body_b, item);
    j.point_a = Fixed<3>(point_a, item + ": point_a");
    j.point_b = Fixed<3>(point_b, item + ": point_b");
    j.axis_a = Fixed<3>(axis_a, item + ": axis_a");
    j.axis_b = Fixed<3>(axis_b, item + ": axis_b");
    j.ref_a = Fixed<3>(ref_a, item + ": ref_a");
    j.ref_b = Fixed<3>(ref_b, item + ": ref_b");
    j.length = length;
    const int i = Checked([&] { return builder_.AddJoint(j); });
    joints_.Add(name, i);
    sp().joints.push_back(j);
    return i;
  }
  int AddDriver(const std::string& name, const py::handle& joint, const std::string& kind,
                const std::string& profile, const py::object& value0, const py::object& rate,
                const py::object& coefficients, const py::object& amplitude,
                const py::object& frequency, const py::object& phase) {
    const std::string item = "driver '" + name + "'";
    engine::SpatialDriver d;
    d.name = name;
    d.joint = joints_.Resolve(joint, item, static_cast<int>(sp().joints.size()));
    const DriverMotion m = DriverMotionOf(item, kind, profile, value0, rate, coefficients,
                                          amplitude, frequency, phase);
    d.kind = m.kind;
    d.profile = m.profile;
    const int i = Checked([&] { return builder_.AddDriver(d); });
    sp().drivers.push_back(d);
    return i;
  }
  int AddSpring(const std::string& name, const py::handle& body_a, const py::handle& body_b,
                const py::handle& point_a, const py::handle& point_b, double stiffness,
                double damping, double rest_length) {
    const std::string item = "spring '" + name + "'";
    engine::SpatialSpringDamper s;
    s.name = name;
    s.body_a = bodies_.Resolve(body_a, item);
    s.body_b = bodies_.Resolve(body_b, item);
    s.point_a = Fixed<3>(point_a, item + ": point_a");
    s.point_b = Fixed<3>(point_b, item + ": point_b");
    s.stiffness = stiffness;
    s.damping = damping;
    s.rest_length = rest_length;
    const int i = Checked([&] { return builder_.AddSpringDamper(s); });
    sp().springs.push_back(s);
    return i;
  }
  int AddTorsionalSpring(const std::string& name, const py::handle& joint, double stiffness,
                         double damping, double angle0) {
    const std::string item = "torsional spring '" + name + "'";
    engine::SpatialTorsionalSpring s;
    s.name = name;
    s.joint = joints_.Resolve(joint, item, static_cast<int>(sp().joints.size()));
    s.stiffness = stiffness;
    s.damping = damping;
    s.angle0 = angle0;
    const int i = Checked([&] { return builder_.AddTorsionalSpring(s); });
    sp().torsional_springs.push_back(s);
    return i;
  }
  int AddLoad(const std::string& name, const py::handle& body, const py::handle& force,
              const py::handle& point, const py::handle& torque, const py::handle& scale) {
    const std::string item = "load '" + name + "'";
    engine::SpatialLoad l;
    l.name = name;
    l.body = bodies_.Resolve(body, item);
    l.force = Fixed<3>(force, item + ": force");
    l.point = Fixed<3>(point, item + ": point");
    l.torque = Fixed<3>(torque, item + ": torque");
    if (!scale.is_none()) l.scale = ScaleOf(item, scale);
    const int i = Checked([&] { return builder_.AddLoad(l); });
    sp().loads.push_back(l);
    return i;
  }
  int AddPrismaticFriction(const std::string& name, const py::handle& joint, double mu) {
    const std::string item = "prismatic friction '" + name + "'";
    engine::SpatialPrismaticFriction f;
    f.name = name;
    f.joint = joints_.Resolve(joint, item, static_cast<int>(sp().joints.size()));
    f.mu = mu;
    const int i = Checked([&] { return builder_.AddPrismaticFriction(f); });
    sp().prismatic_frictions.push_back(f);
    return i;
  }
  // A shape of the scene format's `shapes:` (docs/scene-format.md): the parameters of its type
  // only (others raise), the contact::Shape factories check the sizes and read the mesh file.
  int AddShape(const std::string& name, const std::string& type, const py::handle& body,
               const py::handle& position, const py::handle& quaternion,
               const std::map<std::string, py::object>& params, bool per_triangle,
               const py::object& group, const py::object& mask) {
    const std::string item = "shape '" + name + "'";
    if (name.empty()) throw InvalidArgument("shape: the name must not be empty");
    if (shapes_.Has(name)) throw InvalidArgument(item + ": the name is already used");
    static const std::map<std::string, std::vector<std::string>> kParams = {
        {"sphere", {"radius"}},
        {"box", {"half_size"}},
        {"cylinder", {"radius", "length"}},
        {"capsule", {"radius", "length"}},
        {"ellipsoid", {"radii"}},
        {"plane", {"normal", "offset"}},
        {"convex_mesh", {"file"}},
        {"triangle_mesh", {"file"}}};
    const auto kt = kParams.find(type);
    if (kt == kParams.end()) {
      throw InvalidArgument(item + ": unknown type '" + type +
                            "' (box, capsule, convex_mesh, cylinder, ellipsoid, plane, sphere, "
                            "triangle_mesh)");
    }
    const std::vector<std::string>& own = kt->second;
    const auto given = [&](const std::string& key) { return !params.at(key).is_none(); };
    for (const auto& [key, value] : params) {
      if (!value.is_none() && std::find(own.begin(), own.end(), key) == own.end()) {
        throw InvalidArgument(item + ": '" + key + "' is not a parameter of a " + type + " shape");
      }
    }
    if (per_triangle && type != "triangle_mesh") {
      throw InvalidArgument(item + ": per_triangle is for triangle_mesh shapes only");
    }
    for (const std::string& key : own) {
      if (!given(key) && key != "normal" && key != "offset") {
        throw InvalidArgument(item + ": a " + type + " shape needs '" + key + "'");
      }
    }
    const auto number = [&](const std::string& key) {
      try {
        return params.at(key).cast<double>();
      } catch (const py::cast_error&) {
        throw InvalidArgument(item + ": " + key + " must be a number");
      }
    };
    const int b = bodies_.Resolve(body, item);
    if (b != engine::kGround && (b < 0 || b >= static_cast<int>(sp().bodies.size()))) {
      throw InvalidArgument(item + ": body index " + std::to_string(b) + " out of range");
    }
    Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
    pose.translation() = Fixed<3>(position, item + ": position");
    const Eigen::Vector4d Q = Fixed<4>(quaternion, item + ": quaternion (w, x, y, z)");
    if (!(std::abs(Q.norm() - 1.0) <= 1e-6)) {  // the scene loader's rule
      throw InvalidArgument(
          item + ": quaternion must be a unit quaternion (w, x, y, z), got norm " +
          std::to_string(Q.norm()) + " (only norms within 1e-6 of 1 are normalized)");
    }
    pose.linear() = Eigen::Quaterniond(Q(0), Q(1), Q(2), Q(3)).normalized().toRotationMatrix();
    const contact::CollisionFilter filter{BitSet(group, item + ": group", 1u),
                                          BitSet(mask, item + ": mask", 0xFFFFFFFFu)};
    using contact::Shape;
    // The factories name the shape or the mesh file; the message gets the item when it lacks it.
    const auto named = [&](auto make) -> Shape {
      try {
        return make();
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        throw InvalidArgument(what.find(item) == std::string::npos ? item + ": " + what : what);
      }
    };
    const Shape shape = named([&]() -> Shape {
      if (type == "sphere") return Shape::Sphere(number("radius"), pose, name);
      if (type == "box") {
        return Shape::Box(Fixed<3>(params.at("half_size"), item + ": half_size"), pose, name);
      }
      if (type == "cylinder") {
        return Shape::Cylinder(number("radius"), number("length"), pose, name);
      }
      if (type == "capsule") return Shape::Capsule(number("radius"), number("length"), pose, name);
      if (type == "ellipsoid") {
        return Shape::Ellipsoid(Fixed<3>(params.at("radii"), item + ": radii"), pose, name);
      }
      if (type == "plane") {
        const Eigen::Vector3d n = given("normal") ? Fixed<3>(params.at("normal"), item + ": normal")
                                                  : Eigen::Vector3d::UnitZ();
        return Shape::Plane(n, given("offset") ? number("offset") : 0.0, pose, name);
      }
      std::string file;
      try {
        file = params.at("file").cast<std::string>();
      } catch (const py::cast_error&) {
        throw InvalidArgument(item + ": file must be a path (str)");
      }
      if (type == "convex_mesh") return Shape::ConvexMeshFromFile(file, pose, name);
      return Shape::TriangleMeshFromFile(file, pose, name);
    });
    std::vector<Shape> parts;
    if (per_triangle) {
      parts = tools::PerTriangleShapes(shape, name);
    } else {
      parts.push_back(shape);
    }
    const int first = static_cast<int>(sp().shapes.size());
    shapes_.Add(name, first);
    for (Shape& part : parts) {
      sp().shapes.push_back(std::move(part));
      sp().shape_bodies.push_back(b);
      sp().shape_lines.push_back(0);
      sp().shape_filters.push_back(filter);
      shape_items_.push_back(first);
    }
    return first;
  }
  void SetContactDefault(const std::string& value) {
    if (value != "all" && value != "none") {
      throw InvalidArgument(
          "contacts: default must be 'all' (every shape pair may touch) or "
          "'none' (only the listed pairs), got '" +
          value + "'");
    }
    choice_.all_pairs = value == "all";
  }
  void ExcludeContact(const py::handle& a, const py::handle& b) {
    const std::pair<int, int> ij = ShapePair(a, b, "contacts: exclude");
    const std::string item = "contacts: exclude " + PairName(ij);
    if (Listed(ij) != choice_.listed.end())
      throw InvalidArgument(item + ": the pair is also listed");
    if (std::find(choice_.excluded.begin(), choice_.excluded.end(), ij) == choice_.excluded.end()) {
      choice_.excluded.push_back(ij);
    }
  }
  void AddContactPair(const py::handle& a, const py::handle& b, const py::object& restitution,
                      const py::object& friction) {
    const std::pair<int, int> ij = ShapePair(a, b, "contact pair");
    const std::string item = "contact pair " + PairName(ij);
    if (const std::string why = tools::ContactPairObstacle(sp(), ij.first, ij.second);
        !why.empty()) {
      throw InvalidArgument(item + ": " + why);
    }
    if (std::find(choice_.excluded.begin(), choice_.excluded.end(), ij) != choice_.excluded.end()) {
      throw InvalidArgument(item + ": the pair is also excluded");
    }
    if (Listed(ij) != choice_.listed.end())
      throw InvalidArgument(item + ": the pair is listed twice");
    double e = -1.0;
    if (!restitution.is_none()) {
      try {
        e = restitution.cast<double>();
      } catch (const py::cast_error&) {
        throw InvalidArgument(item + ": restitution must be a number in [0, 1]");
      }
      if (!(e >= 0.0 && e <= 1.0)) {
        throw InvalidArgument(item + ": restitution must be in [0, 1], got " + std::to_string(e));
      }
    }
    const double mu = friction.is_none() ? -1.0 : Friction(friction, item);
    choice_.listed.push_back({ij, e, mu, 0});
  }
  // Coulomb μ of the pairs without their own (a scene's simulation.friction).
  void SetFriction(const py::object& friction) {
    choice_.friction = Friction(friction, "friction");
  }
  void SetGravity(const py::handle& g) {
    const Eigen::Vector3d gravity = Fixed<3>(g, "gravity");
    Checked([&] { builder_.SetGravity(gravity); });
    sp().gravity = gravity;
  }
  const std::vector<std::string>& warnings() const { return builder_.warnings(); }
  // Builds the scene's system (tools::BuildSceneSystem: the engine model, one contact block of
  // the selected pairs, the consistent initialization at t = 0). The builder stays usable.
  Model Build() const {
    tools::Scene scene = scene_;
    scene.spatial.contact_pairs.clear();
    scene.spatial.contact_pair_lines.clear();
    tools::SelectContactPairs(choice_, shape_items_, &scene.spatial);
    tools::SceneSystem built = Checked([&] { return tools::BuildSceneSystem(scene); });
    return Model::FromSystem(built.system, built.q0, built.v0);
  }
  // Names of the contact pairs build() would create, in row order.
  std::vector<std::string> ContactPairNames() const {
    tools::SpatialScene s = scene_.spatial;
    s.contact_pairs.clear();
    tools::SelectContactPairs(choice_, shape_items_, &s);
    std::vector<std::string> names;
    for (const auto& p : s.contact_pairs) names.push_back(p.name);
    return names;
  }

 private:
  tools::SpatialScene& sp() { return scene_.spatial; }
  const tools::SpatialScene& sp() const { return scene_.spatial; }
  // A friction coefficient: a finite number >= 0.
  static double Friction(const py::object& o, const std::string& item) {
    double mu = 0.0;
    try {
      mu = o.cast<double>();
    } catch (const py::cast_error&) {
      throw InvalidArgument(item + ": friction must be a number >= 0");
    }
    if (!std::isfinite(mu) || mu < 0.0) {
      throw InvalidArgument(item + ": friction must be a finite number >= 0, got " +
                            std::to_string(mu));
    }
    return mu;
  }
  static std::uint32_t BitSet(const py::object& o, const std::string& what,
                              std::uint32_t fallback) {
    if (o.is_none()) return fallback;
    if (!py::isinstance<py::int_>(o) || py::isinstance<py::bool_>(o)) {
      throw InvalidArgument(what + " must be an integer bit set in [0, 4294967295]");
    }
    const long long n = o.cast<long long>();
    if (n < 0 || n > 4294967295LL) {
      throw InvalidArgument(what + " must be an integer bit set in [0, 4294967295], got " +
                            std::to_string(n));
    }
    return static_cast<std::uint32_t>(n);
  }
  // Two different shapes (by name or by the index add_shape returned) as (smaller, larger).
  std::pair<int, int> ShapePair(const py::handle& a, const py::handle& b,
                                const std::string& item) const {
    const int count = static_cast<int>(sp().shapes.size());
    int i = shapes_.Resolve(a, item, count);
    int j = shapes_.Resolve(b, item, count);
    i = shape_items_[static_cast<std::size_t>(i)];
    j = shape_items_[static_cast<std::size_t>(j)];
    if (i == j) {
      throw InvalidArgument(item + ": a shape cannot touch itself ('" +
                            sp().shapes[static_cast<std::size_t>(i)].name() + "' twice)");
    }
    return {std::min(i, j), std::max(i, j)};
  }
  std::string PairName(const std::pair<int, int>& ij) const {
    return "'" + sp().shapes[static_cast<std::size_t>(ij.first)].name() + "-" +
           sp().shapes[static_cast<std::size_t>(ij.second)].name() + "'";
  }
  std::vector<tools::ContactPairChoice::Listed>::const_iterator Listed(
      const std::pair<int, int>& ij) const {
    return std::find_if(choice_.listed.begin(), choice_.listed.end(),
                        [&](const tools::ContactPairChoice::Listed& l) { return l.items == ij; });
  }

  engine::SpatialModelBuilder builder_;  // validates each item as it is added
  tools::Scene scene_;                   // the items, built by tools::BuildSceneSystem
  BodyNames bodies_;
  ItemNames joints_{"joint"};
  ItemNames shapes_{"shape"};
  std::vector<int> shape_items_;  // the first shape of the named shape of every shape
  tools::ContactPairChoice choice_;
};

// ---- Lagrangian systems with callable constraints ------------------------------------------
// A block of constraint rows; its callbacks are bound to the system size n by Model.lagrangian.
struct Constraints {
  std::vector<engine::ConstraintRowInfo> rows;
  py::object g, G, gamma, g_t;
};

Constraints MakeConstraints(const std::vector<std::string>& names, py::object g, py::object G,
                            py::object gamma, py::object g_t, py::object unilateral,
                            py::object restitution) {
  if (names.empty()) throw InvalidArgument("Constraints: at least one row name is needed");
  const std::size_t m = names.size();
  const std::string item = "constraints '" + names.front() + "'";
  Constraints c;
  c.g = ToCallable(g, item + ": g", "g(t, q) -> array(m)");
  c.G = ToCallable(G, item + ": G", "G(t, q) -> array(m, n)");
  if (!gamma.is_none()) c.gamma = ToCallable(gamma, item + ": gamma", "gamma(t, q, v)");
  if (!g_t.is_none()) c.g_t = ToCallable(g_t, item + ": g_t", "g_t(t, q)");
  // `unilateral` and `restitution`: one value for all rows or one per row.
  std::vector<bool> uni(m, false);
  if (py::isinstance<py::bool_>(unilateral)) {
    uni.assign(m, unilateral.cast<bool>());
  } else {
    try {
      uni = unilateral.cast<std::vector<bool>>();
    } catch (const py::cast_error&) {
      throw InvalidArgument(item + ": unilateral must be a bool or a list of bools");
    }
    if (uni.size() != m) {
      throw InvalidArgument(item + ": unilateral must have one entry per row (" +
                            std::to_string(m) + ")");
    }
  }
  VectorXd e = VectorXd::Constant(static_cast<Eigen::Index>(m), -1.0);
  if (py::isinstance<py::float_>(restitution) || py::isinstance<py::int_>(restitution)) {
    e.setConstant(restitution.cast<double>());
  } else {
    e = ToVector(restitution, item + ": restitution", static_cast<Eigen::Index>(m));
  }
  for (std::size_t i = 0; i < m; ++i) {
    engine::ConstraintRowInfo info;
    info.name = names[i];
    info.kind = uni[i] ? engine::ConstraintKind::kUnilateral : engine::ConstraintKind::kBilateral;
    info.restitution = e[static_cast<Eigen::Index>(i)];
    c.rows.push_back(info);
  }
  return c;
}

engine::ConstraintCallbacks Bind(const Constraints& c, int n) {
  const auto m = static_cast<Eigen::Index>(c.rows.size());
  const std::string item = "constraints '" + c.rows.front().name + "'";
  engine::ConstraintCallbacks cb;
  cb.rows = c.rows;
  cb.values = [f = c.g, m, item](double t, const VectorXd& q, VectorXd* g) {
    *g = ToVector(f(t, q), item + ": the result of g(t, q)", m);
  };
  cb.jacobian = [f = c.G, m, n, item](double t, const VectorXd& q, MatrixXd* G) {
    *G = ToMatrix(f(t, q), item + ": the result of G(t, q)", m, n);
  };
  if (c.gamma) {  // null when not given
    cb.gamma = [f = c.gamma, m, item](double t, const VectorXd& q, const VectorXd& v,
                                      VectorXd* gamma) {
      *gamma = ToVector(f(t, q, v), item + ": the result of gamma(t, q, v)", m);
    };
  }
  if (c.g_t) {
    cb.time_derivative = [f = c.g_t, m, item](double t, const VectorXd& q, VectorXd* g_t) {
      *g_t = ToVector(f(t, q), item + ": the result of g_t(t, q)", m);
    };
  }
  return cb;
}

Model Lagrangian(int n, const py::object& mass, const py::object& force, const py::object& q0,
                 const py::object& v0, std::vector<std::string> names,
                 const std::vector<Constraints>& constraints, const py::object& potential) {
  if (n <= 0) throw InvalidArgument("lagrangian: n must be > 0, got " + std::to_string(n));
  engine::LagrangianCallbacks cb;
  cb.n = n;
  if (!mass.is_none()) {
    if (PyCallable_Check(mass.ptr())) {  // M(q), n × n
      cb.mass = [f = py::reinterpret_borrow<py::function>(mass), n](const VectorXd& q,
                                                                    MatrixXd* M) {
        *M = ToMatrix(f(q), "the result of mass(q)", n, n);
      };
    } else {  // constant: factorized once
      const MatrixXd M = ToMatrix(mass, "mass", n, n);
      if (!M.allFinite() || !M.isApprox(M.transpose()) || M.llt().info() != Eigen::Success) {
        throw InvalidArgument("mass must be symmetric positive definite");
      }
      cb.mass = [M](const VectorXd&, MatrixXd* out) { *out = M; };
      cb.constant_mass = true;
    }
  }
  if (!force.is_none()) {
    cb.forces = [f = ToCallable(force, "force", "f(t, q, v) -> array(n)"), n](
                    double t, const VectorXd& q, const VectorXd& v, VectorXd* F) {
      *F = ToVector(f(t, q, v), "the result of force(t, q, v)", n);
    };
  }
  if (!potential.is_none()) {
    cb.potential = [f = ToCallable(potential, "potential", "V(t, q) -> float")](
                       double t, const VectorXd& q) { return f(t, q).cast<double>(); };
  }
  cb.coordinate_names = std::move(names);
  std::vector<engine::ConstraintCallbacks> blocks;
  for (const Constraints& c : constraints) blocks.push_back(Bind(c, n));
  return Model::FromLagrangian(std::move(cb), std::move(blocks), ToVector(q0, "q0", n),
                               ToVector(v0, "v0", n));
}

}  // namespace

void BindModelBuilders(py::module_& m, py::class_<Model>& model) {
  const py::list zeros2 = py::cast(std::vector<double>{0, 0});
  const py::list zeros3 = py::cast(std::vector<double>{0, 0, 0});

  py::class_<PlanarBuilder>(m, "PlanarBuilder",
                            "Planar bodies (x, y, theta), joints, springs, loads and contacts; "
                            "build() gives a Model. Bodies are referred to by name or index.")
      .def(py::init<>(), "An empty planar model (gravity (0, -9.81)).")
      .def("add_body", &PlanarBuilder::AddBody, py::arg("name"), py::arg("mass") = 1.0,
           py::arg("inertia") = 1.0, py::arg("position") = zeros3, py::arg("velocity") = zeros3,
           "A rigid body: mass (kg), inertia about its centre (kg m^2), initial (x, y, theta) "
           "and velocities. Returns its index.")
      .def("add_joint", &PlanarBuilder::AddJoint, py::arg("name"), py::arg("type") = "revolute",
           py::arg("body_a") = "ground", py::arg("body_b") = "ground", py::arg("point_a") = zeros2,
           py::arg("point_b") = zeros2, py::arg("axis_a") = py::cast(std::vector<double>{1, 0}),
           py::arg("angle0") = 0.0, py::arg("rate") = 0.0, py::arg("length") = 0.0,
           "Joint types: revolute, prismatic, angle_driver, distance (length; 0: the initial "
           "distance of the points), fixed (angle0), point_on_line (axis_a).")
      .def("add_driver", &PlanarBuilder::AddDriver, py::arg("name"), py::arg("joint"),
           py::arg("kind") = "angle", py::arg("profile") = "constant_rate",
           py::arg("value0") = py::none(), py::arg("rate") = py::none(),
           py::arg("coefficients") = py::none(), py::arg("amplitude") = py::none(),
           py::arg("frequency") = py::none(), py::arg("phase") = py::none(),
           "Prescribed joint angle (kind 'angle': revolute) or displacement ('displacement': "
           "prismatic) phi(t), with the profiles and keys of SpatialBuilder.add_driver.")
      .def("add_spring", &PlanarBuilder::AddSpring, py::arg("name"), py::arg("body_a"),
           py::arg("body_b"), py::arg("point_a") = zeros2, py::arg("point_b") = zeros2,
           py::arg("stiffness") = 0.0, py::arg("damping") = 0.0, py::arg("rest_length") = 0.0,
           "A linear spring-damper between two body points (N/m, N s/m, m).")
      .def("add_torsional_spring", &PlanarBuilder::AddTorsionalSpring, py::arg("name"),
           py::arg("joint"), py::arg("stiffness") = 0.0, py::arg("damping") = 0.0,
           py::arg("angle0") = 0.0,
           "Torque -k (theta_b - theta_a - angle0) - c (theta_b' - theta_a') on body_b of a "
           "revolute joint (given by name or index), the opposite on body_a.")
      .def("add_load", &PlanarBuilder::AddLoad, py::arg("name"), py::arg("body"),
           py::arg("force") = zeros2, py::arg("point") = zeros2, py::arg("torque") = 0.0,
           py::arg("scale") = py::none(),
           "A world force at a body point and a torque, both times phi(t) when scale is given "
           "(a dict: {'profile': 'sine', 'amplitude': ..., ...}, the keys of add_driver).")
      .def("add_contact", &PlanarBuilder::AddContact, py::arg("name"),
           py::arg("type") = "disk_line", py::arg("body_a") = "ground", py::arg("body_b"),
           py::arg("point_a") = zeros2, py::arg("normal_a") = py::cast(std::vector<double>{0, 1}),
           py::arg("radius_a") = 0.0, py::arg("point_b") = zeros2, py::arg("radius_b") = 0.0,
           py::arg("restitution") = -1.0, py::arg("friction") = 0.0,
           "A unilateral contact (docs/scene-format.md, contacts): restitution in [0, 1] "
           "(negative: the simulation's), Coulomb friction mu >= 0 (> 0 adds the tangential row "
           "'<name>.t').")
      .def("set_gravity", &PlanarBuilder::SetGravity, py::arg("g"), "Gravity (gx, gy), m/s^2.")
      .def("build", &PlanarBuilder::Build, "The Model of the items added so far.");

  const py::object none = py::none();
  py::class_<SpatialBuilder>(
      m, "SpatialBuilder",
      "Spatial quaternion bodies, joints, drivers, springs, torsional springs, loads, "
      "shapes and contact pairs: everything of a `dimension: 3` scene file "
      "(docs/scene-format.md); build() gives a Model assembled like the scene file's. Bodies, "
      "joints and shapes are referred to by name or index.")
      .def(py::init<>(), "An empty spatial model (gravity (0, 0, -9.81)).")
      .def("add_body", &SpatialBuilder::AddBody, py::arg("name"), py::arg("mass") = 1.0,
           py::arg("inertia") = py::cast(std::vector<double>{1, 1, 1}), py::arg("com") = zeros3,
           py::arg("position") = zeros3,
           py::arg("quaternion") = py::cast(std::vector<double>{1, 0, 0, 0}),
           py::arg("velocity") = zeros3, py::arg("angular_velocity") = zeros3,
           "A rigid body: mass, inertia (3 diagonal entries or 3x3, about the centre of mass, "
           "body axes), centre of mass in the body frame, initial pose (quaternion w, x, y, z), "
           "velocity (world) and angular velocity (body frame). Returns its index.")
      .def("add_joint", &SpatialBuilder::AddJoint, py::arg("name"), py::arg("type") = "revolute",
           py::arg("body_a") = "ground", py::arg("body_b") = "ground", py::arg("point_a") = zeros3,
           py::arg("point_b") = zeros3, py::arg("axis_a") = py::cast(std::vector<double>{0, 0, 1}),
           py::arg("axis_b") = py::cast(std::vector<double>{0, 0, 1}), py::arg("ref_a") = zeros3,
           py::arg("ref_b") = zeros3, py::arg("length") = 0.0,
           "A joint between two bodies (or 'ground'): spherical, revolute, universal, "
           "cylindrical, prismatic, fixed, planar, distance, point_on_line, point_on_plane; "
           "points and axes in each body's frame, ref: the joint frame's x hint.")
      .def("add_driver", &SpatialBuilder::AddDriver, py::arg("name"), py::arg("joint"),
           py::arg("kind") = "angle", py::arg("profile") = "constant_rate",
           py::arg("value0") = none, py::arg("rate") = none, py::arg("coefficients") = none,
           py::arg("amplitude") = none, py::arg("frequency") = none, py::arg("phase") = none,
           "Prescribed joint angle (kind 'angle': revolute, cylindrical) or displacement "
           "('displacement': prismatic, cylindrical) phi(t): profile 'constant_rate' (value0, "
           "rate), 'polynomial' (coefficients c0, c1, ...), 'sine' (value0, amplitude, "
           "frequency [rad/s], phase).")
      .def("add_spring", &SpatialBuilder::AddSpring, py::arg("name"), py::arg("body_a"),
           py::arg("body_b"), py::arg("point_a") = zeros3, py::arg("point_b") = zeros3,
           py::arg("stiffness") = 0.0, py::arg("damping") = 0.0, py::arg("rest_length") = 0.0,
           "A linear spring-damper between two body points (N/m, N s/m, m).")
      .def("add_torsional_spring", &SpatialBuilder::AddTorsionalSpring, py::arg("name"),
           py::arg("joint"), py::arg("stiffness") = 0.0, py::arg("damping") = 0.0,
           py::arg("angle0") = 0.0, "Torque -k (theta - angle0) - c theta' on a revolute joint.")
      .def("add_load", &SpatialBuilder::AddLoad, py::arg("name"), py::arg("body"),
           py::arg("force") = zeros3, py::arg("point") = zeros3, py::arg("torque") = zeros3,
           py::arg("scale") = none,
           "A world force at a body point and a world torque, both times phi(t) when scale is "
           "given (a dict: {'profile': 'sine', 'amplitude': ..., ...}, the keys of add_driver).")
      .def("add_prismatic_friction", &SpatialBuilder::AddPrismaticFriction, py::arg("name"),
           py::arg("joint"), py::arg("mu"),
           "Coulomb friction mu |N| on a prismatic joint, N its normal force of the last step.")
      .def(
          "add_shape",
          [](SpatialBuilder& b, const std::string& name, const std::string& type,
             const py::handle& body, const py::handle& position, const py::handle& quaternion,
             py::object radius, py::object length, py::object half_size, py::object radii,
             py::object normal, py::object offset, py::object file, bool per_triangle,
             py::object group, py::object mask) {
            return b.AddShape(name, type, body, position, quaternion,
                              {{"radius", radius},
                               {"length", length},
                               {"half_size", half_size},
                               {"radii", radii},
                               {"normal", normal},
                               {"offset", offset},
                               {"file", file}},
                              per_triangle, group, mask);
          },
          py::arg("name"), py::arg("type"), py::arg("body") = "ground",
          py::arg("position") = zeros3,
          py::arg("quaternion") = py::cast(std::vector<double>{1, 0, 0, 0}),
          py::arg("radius") = none, py::arg("length") = none, py::arg("half_size") = none,
          py::arg("radii") = none, py::arg("normal") = none, py::arg("offset") = none,
          py::arg("file") = none, py::arg("per_triangle") = false, py::arg("group") = none,
          py::arg("mask") = none,
          "A contact shape fixed to a body (or 'ground'), pose in the body frame: sphere "
          "(radius), box (half_size), cylinder and capsule (radius, length), ellipsoid (radii), "
          "plane (normal, offset), convex_mesh and triangle_mesh (file, OBJ/STL; per_triangle). "
          "group/mask: collision bit sets. Returns the shape's index.")
      .def("set_contact_default", &SpatialBuilder::SetContactDefault, py::arg("default"),
           "'all' (every shape pair that can touch gets a contact row; the default) or 'none' "
           "(only the pairs of add_contact_pair).")
      .def("exclude_contact", &SpatialBuilder::ExcludeContact, py::arg("shape_a"),
           py::arg("shape_b"), "No contact row between these two shapes.")
      .def("add_contact_pair", &SpatialBuilder::AddContactPair, py::arg("shape_a"),
           py::arg("shape_b"), py::arg("restitution") = none, py::arg("friction") = none,
           "A contact pair (needed with set_contact_default('none')), with its own Newton "
           "restitution in [0, 1] (default: the simulation's) and Coulomb friction mu >= 0 "
           "(default: set_friction's, 0).")
      .def("set_friction", &SpatialBuilder::SetFriction, py::arg("friction"),
           "Coulomb friction mu >= 0 of every contact pair without its own (a scene's "
           "simulation.friction; default 0). mu > 0 gives each normal row two tangential rows "
           "'<row>.t1', '<row>.t2'.")
      .def_property_readonly("contact_pairs", &SpatialBuilder::ContactPairNames,
                             "Names of the contact pairs build() would make.")
      .def("set_gravity", &SpatialBuilder::SetGravity, py::arg("g"), "Gravity (gx, gy, gz), m/s^2.")
      .def_property_readonly("warnings", &SpatialBuilder::warnings,
                             "Remarks on the items (e.g. a quaternion normalized).")
      .def("build", &SpatialBuilder::Build,
           "The Model of the items added so far, assembled like a scene file's.");

  py::class_<Constraints>(m, "Constraints",
                          "Constraint rows of a Lagrangian model from callables: g(t, q) -> (m,), "
                          "G(t, q) -> (m, n), gamma(t, q, v) -> (m,) (default 0), "
                          "g_t(t, q) -> (m,) (default 0).")
      .def(py::init(&MakeConstraints), py::arg("names"), py::arg("g"), py::arg("G"),
           py::arg("gamma") = py::none(), py::arg("g_t") = py::none(),
           py::arg("unilateral") = false, py::arg("restitution") = -1.0,
           "Rows named `names`; unilateral: a bool or a list per row; restitution per row or "
           "one for all (negative: the simulation's).")
      .def_property_readonly(
          "names",
          [](const Constraints& c) {
            std::vector<std::string> names;
            for (const auto& r : c.rows) names.push_back(r.name);
            return names;
          },
          "The row names.");

  model.def_static(
      "lagrangian", &Lagrangian, py::arg("n"), py::arg("mass") = py::none(),
      py::arg("force") = py::none(), py::arg("q0"), py::arg("v0"),
      py::arg("names") = std::vector<std::string>{},
      py::arg("constraints") = std::vector<Constraints>{}, py::arg("potential") = py::none(),
      "A Lagrangian system M(q) v' = f(t, q, v) + G^T lambda: mass an n x n array (constant) or "
      "a callable M(q) (default identity), force f(t, q, v), constraint blocks "
      "(saltus.Constraints), potential V(t, q) for energy reports.");
}

}  // namespace saltus::python
