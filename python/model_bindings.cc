// Models built in Python code (issue 9): saltus.PlanarBuilder and saltus.SpatialBuilder wrap
// engine::PlanarModelBuilder / engine::SpatialModelBuilder (+ planar contacts), and
// saltus.Model.lagrangian builds a Lagrangian system
//
//   M(q) v̇ = F(t, q, v) + Gᵀ λ,   g(t, q) = 0 (bilateral rows) or 0 ≤ g ⊥ λ ≥ 0 (unilateral),
//
// (engine/lagrangian_system.h) with M, F and the constraint rows g, G = ∂g/∂q, γ (the v̇-free
// part of g̈ = G v̇ + γ) and ∂g/∂t as Python callables on numpy arrays (saltus.Constraints).
// Every argument is checked when the item is added, and every array a callable returns is
// checked for its size when it is evaluated: both raise saltus.InvalidArgument naming the item.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contact/planar_contacts.h"
#include "engine/planar_model.h"
#include "engine/spatial_model.h"
#include "python/bindings.h"

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
               const py::handle& axis_a, double angle0, double rate) {
    const std::string item = "joint '" + name + "'";
    engine::PlanarJoint j;
    j.name = name;
    if (type == "revolute") {
      j.type = engine::PlanarJointType::kRevolute;
    } else if (type == "prismatic") {
      j.type = engine::PlanarJointType::kPrismatic;
    } else if (type == "angle_driver") {
      j.type = engine::PlanarJointType::kAngleDriver;
    } else {
      throw InvalidArgument(item + ": unknown type '" + type +
                            "' (revolute, prismatic, angle_driver)");
    }
    j.body_a = bodies_.Resolve(body_a, item);
    j.body_b = bodies_.Resolve(body_b, item);
    j.point_a = Fixed<2>(point_a, item + ": point_a");
    j.point_b = Fixed<2>(point_b, item + ": point_b");
    j.axis_a = Fixed<2>(axis_a, item + ": axis_a");
    j.angle0 = angle0;
    j.rate = rate;
    return Checked([&] { return builder_.AddJoint(j); });
  }
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
  int AddLoad(const std::string& name, const py::handle& body, const py::handle& force,
              const py::handle& point, double torque) {
    const std::string item = "load '" + name + "'";
    engine::PlanarLoad l;
    l.name = name;
    l.body = bodies_.Resolve(body, item);
    l.force = Fixed<2>(force, item + ": force");
    l.point = Fixed<2>(point, item + ": point");
    l.torque = torque;
    return Checked([&] { return builder_.AddLoad(l); });
  }
  int AddContact(const std::string& name, const std::string& type, const py::handle& body_a,
                 const py::handle& body_b, const py::handle& point_a, const py::handle& normal_a,
                 double radius_a, const py::handle& point_b, double radius_b, double restitution) {
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

class SpatialBuilder {
 public:
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
    return Checked([&] { return builder_.AddJoint(j); });
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
    return Checked([&] { return builder_.AddSpringDamper(s); });
  }
  int AddLoad(const std::string& name, const py::handle& body, const py::handle& force,
              const py::handle& point, const py::handle& torque) {
    const std::string item = "load '" + name + "'";
    engine::SpatialLoad l;
    l.name = name;
    l.body = bodies_.Resolve(body, item);
    l.force = Fixed<3>(force, item + ": force");
    l.point = Fixed<3>(point, item + ": point");
    l.torque = Fixed<3>(torque, item + ": torque");
    return Checked([&] { return builder_.AddLoad(l); });
  }
  void SetGravity(const py::handle& g) {
    Checked([&] { builder_.SetGravity(Fixed<3>(g, "gravity")); });
  }
  const std::vector<std::string>& warnings() const { return builder_.warnings(); }
  Model Build() const {
    engine::SpatialModelBuilder copy = builder_;
    const std::shared_ptr<const engine::SpatialModel> model = Checked([&] { return copy.Build(); });
    auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
    return Model::FromSystem(system, model->InitialPositions(), model->InitialVelocities());
  }

 private:
  engine::SpatialModelBuilder builder_;
  BodyNames bodies_;
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
      .def(py::init<>())
      .def("add_body", &PlanarBuilder::AddBody, py::arg("name"), py::arg("mass") = 1.0,
           py::arg("inertia") = 1.0, py::arg("position") = zeros3, py::arg("velocity") = zeros3)
      .def("add_joint", &PlanarBuilder::AddJoint, py::arg("name"), py::arg("type") = "revolute",
           py::arg("body_a") = "ground", py::arg("body_b") = "ground", py::arg("point_a") = zeros2,
           py::arg("point_b") = zeros2, py::arg("axis_a") = py::cast(std::vector<double>{1, 0}),
           py::arg("angle0") = 0.0, py::arg("rate") = 0.0)
      .def("add_spring", &PlanarBuilder::AddSpring, py::arg("name"), py::arg("body_a"),
           py::arg("body_b"), py::arg("point_a") = zeros2, py::arg("point_b") = zeros2,
           py::arg("stiffness") = 0.0, py::arg("damping") = 0.0, py::arg("rest_length") = 0.0)
      .def("add_load", &PlanarBuilder::AddLoad, py::arg("name"), py::arg("body"),
           py::arg("force") = zeros2, py::arg("point") = zeros2, py::arg("torque") = 0.0)
      .def("add_contact", &PlanarBuilder::AddContact, py::arg("name"),
           py::arg("type") = "disk_line", py::arg("body_a") = "ground", py::arg("body_b"),
           py::arg("point_a") = zeros2, py::arg("normal_a") = py::cast(std::vector<double>{0, 1}),
           py::arg("radius_a") = 0.0, py::arg("point_b") = zeros2, py::arg("radius_b") = 0.0,
           py::arg("restitution") = -1.0)
      .def("set_gravity", &PlanarBuilder::SetGravity, py::arg("g"))
      .def("build", &PlanarBuilder::Build);

  py::class_<SpatialBuilder>(m, "SpatialBuilder",
                             "Spatial quaternion bodies, joints, springs and loads "
                             "(engine/spatial_model.h); build() gives a Model.")
      .def(py::init<>())
      .def("add_body", &SpatialBuilder::AddBody, py::arg("name"), py::arg("mass") = 1.0,
           py::arg("inertia") = py::cast(std::vector<double>{1, 1, 1}), py::arg("com") = zeros3,
           py::arg("position") = zeros3,
           py::arg("quaternion") = py::cast(std::vector<double>{1, 0, 0, 0}),
           py::arg("velocity") = zeros3, py::arg("angular_velocity") = zeros3)
      .def("add_joint", &SpatialBuilder::AddJoint, py::arg("name"), py::arg("type") = "revolute",
           py::arg("body_a") = "ground", py::arg("body_b") = "ground", py::arg("point_a") = zeros3,
           py::arg("point_b") = zeros3, py::arg("axis_a") = py::cast(std::vector<double>{0, 0, 1}),
           py::arg("axis_b") = py::cast(std::vector<double>{0, 0, 1}), py::arg("ref_a") = zeros3,
           py::arg("ref_b") = zeros3, py::arg("length") = 0.0)
      .def("add_spring", &SpatialBuilder::AddSpring, py::arg("name"), py::arg("body_a"),
           py::arg("body_b"), py::arg("point_a") = zeros3, py::arg("point_b") = zeros3,
           py::arg("stiffness") = 0.0, py::arg("damping") = 0.0, py::arg("rest_length") = 0.0)
      .def("add_load", &SpatialBuilder::AddLoad, py::arg("name"), py::arg("body"),
           py::arg("force") = zeros3, py::arg("point") = zeros3, py::arg("torque") = zeros3)
      .def("set_gravity", &SpatialBuilder::SetGravity, py::arg("g"))
      .def_property_readonly("warnings", &SpatialBuilder::warnings)
      .def("build", &SpatialBuilder::Build);

  py::class_<Constraints>(m, "Constraints",
                          "Constraint rows of a Lagrangian model from callables: g(t, q) -> (m,), "
                          "G(t, q) -> (m, n), gamma(t, q, v) -> (m,) (default 0), "
                          "g_t(t, q) -> (m,) (default 0).")
      .def(py::init(&MakeConstraints), py::arg("names"), py::arg("g"), py::arg("G"),
           py::arg("gamma") = py::none(), py::arg("g_t") = py::none(),
           py::arg("unilateral") = false, py::arg("restitution") = -1.0)
      .def_property_readonly("names", [](const Constraints& c) {
        std::vector<std::string> names;
        for (const auto& r : c.rows) names.push_back(r.name);
        return names;
      });

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
