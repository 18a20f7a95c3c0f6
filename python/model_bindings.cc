// Models built in Python code (issues 3, 4, 9, 21): saltus.PlanarBuilder and saltus.SpatialBuilder
// are bindings of saltus::PlanarBuilder and saltus::SpatialBuilder (saltus/builder.h, which
// holds the model-building logic: names, checks, the scene loader's construction); the
// functions here only turn Python arguments into the C++ items. saltus.Model.lagrangian builds
// a Lagrangian system
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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/bindings.h"
#include "saltus/builder.h"

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

template <int N>
Eigen::Matrix<double, N, 1> Fixed(const py::handle& o, const std::string& what) {
  return ToVector(o, what, N);
}

// A body, joint or shape given by its name or index.
ItemRef Ref(const py::handle& o, const std::string& item, const std::string& kind) {
  if (py::isinstance<py::str>(o)) return ItemRef(o.cast<std::string>());
  if (py::isinstance<py::int_>(o) && !py::isinstance<py::bool_>(o)) return ItemRef(o.cast<int>());
  throw InvalidArgument(item + ": a " + kind + " is given by its name or index");
}

// An optional number (None: not set).
std::optional<double> Number(const py::object& o, const std::string& what) {
  if (o.is_none()) return std::nullopt;
  try {
    return o.cast<double>();
  } catch (const py::cast_error&) {
    throw InvalidArgument(what + " must be a number");
  }
}

std::optional<Eigen::Vector3d> Vector3(const py::object& o, const std::string& what) {
  if (o.is_none()) return std::nullopt;
  return Fixed<3>(o, what);
}

std::uint32_t BitSet(const py::object& o, const std::string& what, std::uint32_t fallback) {
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

// A TimeProfile from the keys of the scene format's `profile:` (docs/scene-format.md):
// constant_rate (value0, rate), polynomial (coefficients), sine (value0, amplitude, frequency,
// phase). `given` maps the keys the caller set (None: not set); keys of another profile raise.
// The numbers are checked by the builders (saltus/builder.h).
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
  return p;  // saltus::PlanarBuilder / SpatialBuilder check that a polynomial has coefficients
}

// A driver from add_driver's arguments (the planar and spatial builders).
DriverSpec DriverOf(const std::string& name, const py::handle& joint, const std::string& kind,
                    const std::string& profile, const py::object& value0, const py::object& rate,
                    const py::object& coefficients, const py::object& amplitude,
                    const py::object& frequency, const py::object& phase) {
  const std::string item = "driver '" + name + "'";
  return DriverSpec{name, Ref(joint, item, "joint"), kind,
                    ProfileOf(item, profile,
                              {{"value0", value0},
                               {"rate", rate},
                               {"coefficients", coefficients},
                               {"amplitude", amplitude},
                               {"frequency", frequency},
                               {"phase", phase}})};
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

TorsionalSpringSpec TorsionalOf(const std::string& name, const py::handle& joint, double stiffness,
                                double damping, double angle0) {
  const std::string item = "torsional spring '" + name + "'";
  return TorsionalSpringSpec{name, Ref(joint, item, "joint"), stiffness, damping, angle0};
}

// The Python builders are saltus::PlanarBuilder / saltus::SpatialBuilder (saltus/builder.h):
// these functions only turn Python arguments (str or int references, sequences, dicts of
// profile keys, None for "not set") into the C++ items.
int PlanarAddBody(PlanarBuilder& b, const std::string& name, double mass, double inertia,
                  const py::handle& position, const py::handle& velocity) {
  const std::string item = "body '" + name + "'";
  PlanarBody body;
  body.name = name;
  body.mass = mass;
  body.inertia = inertia;
  body.q0 = Fixed<3>(position, item + ": position (x, y, theta)");
  body.v0 = Fixed<3>(velocity, item + ": velocity");
  return b.AddBody(body);
}

int PlanarAddJoint(PlanarBuilder& b, const std::string& name, const std::string& type,
                   const py::handle& body_a, const py::handle& body_b, const py::handle& point_a,
                   const py::handle& point_b, const py::handle& axis_a, double angle0, double rate,
                   double length) {
  const std::string item = "joint '" + name + "'";
  return b.AddJoint({name, type, Ref(body_a, item, "body"), Ref(body_b, item, "body"),
                     Fixed<2>(point_a, item + ": point_a"), Fixed<2>(point_b, item + ": point_b"),
                     Fixed<2>(axis_a, item + ": axis_a"), angle0, rate, length});
}

int PlanarAddSpring(PlanarBuilder& b, const std::string& name, const py::handle& body_a,
                    const py::handle& body_b, const py::handle& point_a, const py::handle& point_b,
                    double stiffness, double damping, double rest_length) {
  const std::string item = "spring '" + name + "'";
  return b.AddSpring({name, Ref(body_a, item, "body"), Ref(body_b, item, "body"),
                      Fixed<2>(point_a, item + ": point_a"), Fixed<2>(point_b, item + ": point_b"),
                      stiffness, damping, rest_length});
}

int PlanarAddLoad(PlanarBuilder& b, const std::string& name, const py::handle& body,
                  const py::handle& force, const py::handle& point, double torque,
                  const py::handle& scale) {
  const std::string item = "load '" + name + "'";
  PlanarLoadSpec l{name,
                   Ref(body, item, "body"),
                   Fixed<2>(force, item + ": force"),
                   Fixed<2>(point, item + ": point"),
                   torque,
                   std::nullopt};
  if (!scale.is_none()) l.scale = ScaleOf(item, scale);
  return b.AddLoad(l);
}

int PlanarAddContact(PlanarBuilder& b, const std::string& name, const std::string& type,
                     const py::handle& body_a, const py::handle& body_b, const py::handle& point_a,
                     const py::handle& normal_a, double radius_a, const py::handle& point_b,
                     double radius_b, double restitution, double friction) {
  const std::string item = "contact '" + name + "'";
  return b.AddContact({name, type, Ref(body_a, item, "body"), Ref(body_b, item, "body"),
                       Fixed<2>(point_a, item + ": point_a"),
                       Fixed<2>(normal_a, item + ": normal_a"), radius_a,
                       Fixed<2>(point_b, item + ": point_b"), radius_b, restitution, friction});
}

int SpatialAddBody(SpatialBuilder& b, const std::string& name, double mass,
                   const py::handle& inertia, const py::handle& com, const py::handle& position,
                   const py::handle& quaternion, const py::handle& velocity,
                   const py::handle& angular_velocity) {
  const std::string item = "body '" + name + "'";
  SpatialBody body;
  body.name = name;
  body.mass = mass;
  // The principal moments (3) or the full 3 × 3 tensor, body axes.
  const py::array arr = py::array::ensure(inertia);
  if (arr && arr.ndim() == 1) {
    body.inertia = Fixed<3>(inertia, item + ": inertia").asDiagonal();
  } else {
    body.inertia = ToMatrix(inertia, item + ": inertia (3 moments or a 3 x 3 tensor)", 3, 3);
  }
  body.com = Fixed<3>(com, item + ": com");
  body.position = Fixed<3>(position, item + ": position");
  body.quaternion = Fixed<4>(quaternion, item + ": quaternion (w, x, y, z)");
  body.velocity = Fixed<3>(velocity, item + ": velocity");
  body.angular_velocity = Fixed<3>(angular_velocity, item + ": angular_velocity");
  return b.AddBody(body);
}

int SpatialAddJoint(SpatialBuilder& b, const std::string& name, const std::string& type,
                    const py::handle& body_a, const py::handle& body_b, const py::handle& point_a,
                    const py::handle& point_b, const py::handle& axis_a, const py::handle& axis_b,
                    const py::handle& ref_a, const py::handle& ref_b, double length) {
  const std::string item = "joint '" + name + "'";
  return b.AddJoint({name, type, Ref(body_a, item, "body"), Ref(body_b, item, "body"),
                     Fixed<3>(point_a, item + ": point_a"), Fixed<3>(point_b, item + ": point_b"),
                     Fixed<3>(axis_a, item + ": axis_a"), Fixed<3>(axis_b, item + ": axis_b"),
                     Fixed<3>(ref_a, item + ": ref_a"), Fixed<3>(ref_b, item + ": ref_b"), length});
}

int SpatialAddSpring(SpatialBuilder& b, const std::string& name, const py::handle& body_a,
                     const py::handle& body_b, const py::handle& point_a, const py::handle& point_b,
                     double stiffness, double damping, double rest_length) {
  const std::string item = "spring '" + name + "'";
  return b.AddSpring({name, Ref(body_a, item, "body"), Ref(body_b, item, "body"),
                      Fixed<3>(point_a, item + ": point_a"), Fixed<3>(point_b, item + ": point_b"),
                      stiffness, damping, rest_length});
}

int SpatialAddLoad(SpatialBuilder& b, const std::string& name, const py::handle& body,
                   const py::handle& force, const py::handle& point, const py::handle& torque,
                   const py::handle& scale) {
  const std::string item = "load '" + name + "'";
  SpatialLoadSpec l{name,
                    Ref(body, item, "body"),
                    Fixed<3>(force, item + ": force"),
                    Fixed<3>(point, item + ": point"),
                    Fixed<3>(torque, item + ": torque"),
                    std::nullopt};
  if (!scale.is_none()) l.scale = ScaleOf(item, scale);
  return b.AddLoad(l);
}

int SpatialAddShape(SpatialBuilder& b, const std::string& name, const std::string& type,
                    const py::handle& body, const py::handle& position,
                    const py::handle& quaternion, const py::object& radius,
                    const py::object& length, const py::object& half_size, const py::object& radii,
                    const py::object& normal, const py::object& offset, const py::object& file,
                    bool per_triangle, const py::object& group, const py::object& mask) {
  const std::string item = "shape '" + name + "'";
  ShapeSpec s;
  s.name = name;
  s.type = type;
  s.body = Ref(body, item, "body");
  s.position = Fixed<3>(position, item + ": position");
  s.quaternion = Fixed<4>(quaternion, item + ": quaternion (w, x, y, z)");
  s.radius = Number(radius, item + ": radius");
  s.length = Number(length, item + ": length");
  s.offset = Number(offset, item + ": offset");
  s.half_size = Vector3(half_size, item + ": half_size");
  s.radii = Vector3(radii, item + ": radii");
  s.normal = Vector3(normal, item + ": normal");
  if (!file.is_none()) {
    try {
      s.file = file.cast<std::string>();
    } catch (const py::cast_error&) {
      throw InvalidArgument(item + ": file must be a path (str)");
    }
  }
  s.per_triangle = per_triangle;
  s.group = BitSet(group, item + ": group", 1u);
  s.mask = BitSet(mask, item + ": mask", 0xFFFFFFFFu);
  return b.AddShape(s);
}

void SpatialAddContactPair(SpatialBuilder& b, const py::handle& a, const py::handle& c,
                           const py::object& restitution, const py::object& friction,
                           const py::object& rolling_friction,
                           const py::object& spinning_friction) {
  const std::string item = "contact pair";
  const std::string pair =
      item + " '" + std::string(py::str(a)) + "-" + std::string(py::str(c)) + "'";
  b.AddContactPair(
      Ref(a, item, "shape"), Ref(c, item, "shape"), Number(restitution, pair + ": restitution"),
      Number(friction, pair + ": friction"), Number(rolling_friction, pair + ": rolling_friction"),
      Number(spinning_friction, pair + ": spinning_friction"));
}

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
      .def(py::init<>(), "An empty planar model (gravity 0 until set_gravity).")
      .def("add_body", &PlanarAddBody, py::arg("name"), py::arg("mass") = 1.0,
           py::arg("inertia") = 1.0, py::arg("position") = zeros3, py::arg("velocity") = zeros3,
           "A rigid body: mass (kg), inertia about its centre (kg m^2), initial (x, y, theta) "
           "and velocities. Returns its index.")
      .def("add_joint", &PlanarAddJoint, py::arg("name"), py::arg("type") = "revolute",
           py::arg("body_a") = "ground", py::arg("body_b") = "ground", py::arg("point_a") = zeros2,
           py::arg("point_b") = zeros2, py::arg("axis_a") = py::cast(std::vector<double>{1, 0}),
           py::arg("angle0") = 0.0, py::arg("rate") = 0.0, py::arg("length") = 0.0,
           "Joint types: revolute, prismatic, angle_driver, distance (length; 0: the initial "
           "distance of the points), fixed (angle0), point_on_line (axis_a).")
      .def(
          "add_driver",
          [](PlanarBuilder& b, const std::string& name, const py::handle& joint,
             const std::string& kind, const std::string& profile, const py::object& value0,
             const py::object& rate, const py::object& coefficients, const py::object& amplitude,
             const py::object& frequency, const py::object& phase) {
            return b.AddDriver(DriverOf(name, joint, kind, profile, value0, rate, coefficients,
                                        amplitude, frequency, phase));
          },
          py::arg("name"), py::arg("joint"), py::arg("kind") = "angle",
          py::arg("profile") = "constant_rate", py::arg("value0") = py::none(),
          py::arg("rate") = py::none(), py::arg("coefficients") = py::none(),
          py::arg("amplitude") = py::none(), py::arg("frequency") = py::none(),
          py::arg("phase") = py::none(),
          "Prescribed joint angle (kind 'angle': revolute) or displacement ('displacement': "
          "prismatic) phi(t), with the profiles and keys of SpatialBuilder.add_driver.")
      .def("add_spring", &PlanarAddSpring, py::arg("name"), py::arg("body_a"), py::arg("body_b"),
           py::arg("point_a") = zeros2, py::arg("point_b") = zeros2, py::arg("stiffness") = 0.0,
           py::arg("damping") = 0.0, py::arg("rest_length") = 0.0,
           "A linear spring-damper between two body points (N/m, N s/m, m).")
      .def(
          "add_torsional_spring",
          [](PlanarBuilder& b, const std::string& name, const py::handle& joint, double stiffness,
             double damping, double angle0) {
            return b.AddTorsionalSpring(TorsionalOf(name, joint, stiffness, damping, angle0));
          },
          py::arg("name"), py::arg("joint"), py::arg("stiffness") = 0.0, py::arg("damping") = 0.0,
          py::arg("angle0") = 0.0,
          "Torque -k (theta_b - theta_a - angle0) - c (theta_b' - theta_a') on body_b of a "
          "revolute joint (given by name or index), the opposite on body_a.")
      .def("add_load", &PlanarAddLoad, py::arg("name"), py::arg("body"), py::arg("force") = zeros2,
           py::arg("point") = zeros2, py::arg("torque") = 0.0, py::arg("scale") = py::none(),
           "A world force at a body point and a torque, both times phi(t) when scale is given "
           "(a dict: {'profile': 'sine', 'amplitude': ..., ...}, the keys of add_driver).")
      .def("add_contact", &PlanarAddContact, py::arg("name"), py::arg("type") = "disk_line",
           py::arg("body_a") = "ground", py::arg("body_b"), py::arg("point_a") = zeros2,
           py::arg("normal_a") = py::cast(std::vector<double>{0, 1}), py::arg("radius_a") = 0.0,
           py::arg("point_b") = zeros2, py::arg("radius_b") = 0.0, py::arg("restitution") = -1.0,
           py::arg("friction") = 0.0,
           "A unilateral contact (docs/scene-format.md, contacts): restitution in [0, 1] "
           "(negative: the simulation's), Coulomb friction mu >= 0 (> 0 adds the tangential row "
           "'<name>.t').")
      .def(
          "set_gravity",
          [](PlanarBuilder& b, const py::handle& g) { b.SetGravity(Fixed<2>(g, "gravity")); },
          py::arg("g"), "Gravity (gx, gy), m/s^2.")
      .def("build", &PlanarBuilder::Build, "The Model of the items added so far.");

  const py::object none = py::none();
  py::class_<SpatialBuilder>(
      m, "SpatialBuilder",
      "Spatial quaternion bodies, joints, drivers, springs, torsional springs, loads, "
      "shapes and contact pairs: everything of a `dimension: 3` scene file "
      "(docs/scene-format.md); build() gives a Model assembled like the scene file's. Bodies, "
      "joints and shapes are referred to by name or index.")
      .def(py::init<>(), "An empty spatial model (gravity 0 until set_gravity).")
      .def("add_body", &SpatialAddBody, py::arg("name"), py::arg("mass") = 1.0,
           py::arg("inertia") = py::cast(std::vector<double>{1, 1, 1}), py::arg("com") = zeros3,
           py::arg("position") = zeros3,
           py::arg("quaternion") = py::cast(std::vector<double>{1, 0, 0, 0}),
           py::arg("velocity") = zeros3, py::arg("angular_velocity") = zeros3,
           "A rigid body: mass, inertia (3 diagonal entries or 3x3, about the centre of mass, "
           "body axes), centre of mass in the body frame, initial pose (quaternion w, x, y, z), "
           "velocity (world) and angular velocity (body frame). Returns its index.")
      .def("add_joint", &SpatialAddJoint, py::arg("name"), py::arg("type") = "revolute",
           py::arg("body_a") = "ground", py::arg("body_b") = "ground", py::arg("point_a") = zeros3,
           py::arg("point_b") = zeros3, py::arg("axis_a") = py::cast(std::vector<double>{0, 0, 1}),
           py::arg("axis_b") = py::cast(std::vector<double>{0, 0, 1}), py::arg("ref_a") = zeros3,
           py::arg("ref_b") = zeros3, py::arg("length") = 0.0,
           "A joint between two bodies (or 'ground'): spherical, revolute, universal, "
           "cylindrical, prismatic, fixed, planar, distance, point_on_line, point_on_plane; "
           "points and axes in each body's frame, ref: the joint frame's x hint.")
      .def("add_driver", [](SpatialBuilder& b, const std::string& name, const py::handle& joint, const std::string& kind, const std::string& profile, const py::object& value0, const py::object& rate, const py::object& coefficients, const py::object& amplitude, const py::object& frequency, const py::object& phase) { return b.AddDriver(DriverOf(name, joint, kind, profile, value0, rate, coefficients, amplitude, frequency, phase)); }, py::arg("name"), py::arg("joint"),
           py::arg("kind") = "angle", py::arg("profile") = "constant_rate",
           py::arg("value0") = none, py::arg("rate") = none, py::arg("coefficients") = none,
           py::arg("amplitude") = none, py::arg("frequency") = none, py::arg("phase") = none,
           "Prescribed joint angle (kind 'angle': revolute, cylindrical) or displacement "
           "('displacement': prismatic, cylindrical) phi(t): profile 'constant_rate' (value0, "
           "rate), 'polynomial' (coefficients c0, c1, ...), 'sine' (value0, amplitude, "
           "frequency [rad/s], phase).")
      .def("add_spring", &SpatialAddSpring, py::arg("name"), py::arg("body_a"),
           py::arg("body_b"), py::arg("point_a") = zeros3, py::arg("point_b") = zeros3,
           py::arg("stiffness") = 0.0, py::arg("damping") = 0.0, py::arg("rest_length") = 0.0,
           "A linear spring-damper between two body points (N/m, N s/m, m).")
      .def("add_torsional_spring", [](SpatialBuilder& b, const std::string& name, const py::handle& joint, double stiffness, double damping, double angle0) { return b.AddTorsionalSpring(TorsionalOf(name, joint, stiffness, damping, angle0)); }, py::arg("name"),
           py::arg("joint"), py::arg("stiffness") = 0.0, py::arg("damping") = 0.0,
           py::arg("angle0") = 0.0, "Torque -k (theta - angle0) - c theta' on a revolute joint.")
      .def("add_load", &SpatialAddLoad, py::arg("name"), py::arg("body"),
           py::arg("force") = zeros3, py::arg("point") = zeros3, py::arg("torque") = zeros3,
           py::arg("scale") = none,
           "A world force at a body point and a world torque, both times phi(t) when scale is "
           "given (a dict: {'profile': 'sine', 'amplitude': ..., ...}, the keys of add_driver).")
      .def("add_prismatic_friction", [](SpatialBuilder& b, const std::string& name, const py::handle& joint, double mu) { const std::string item = "prismatic friction '" + name + "'"; return b.AddPrismaticFriction({name, Ref(joint, item, "joint"), mu}); }, py::arg("name"),
           py::arg("joint"), py::arg("mu"),
           "Coulomb friction mu |N| on a prismatic joint, N its normal force of the last step.")
      .def(
          "add_shape",
          &SpatialAddShape,
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
      .def("exclude_contact", [](SpatialBuilder& b, const py::handle& a, const py::handle& c) { b.ExcludeContact(Ref(a, "contacts: exclude", "shape"), Ref(c, "contacts: exclude", "shape")); }, py::arg("shape_a"),
           py::arg("shape_b"), "No contact row between these two shapes.")
      .def("add_contact_pair", &SpatialAddContactPair, py::arg("shape_a"),
           py::arg("shape_b"), py::arg("restitution") = none, py::arg("friction") = none,
           py::arg("rolling_friction") = none, py::arg("spinning_friction") = none,
           "A contact pair (needed with set_contact_default('none')), with its own Newton "
           "restitution in [0, 1] (default: the simulation's), Coulomb friction mu >= 0 "
           "(default: set_friction's, 0) and rolling / spinning resistance >= 0 in m (default: "
           "set_resistance's; pairs with a sphere on one side only).")
      .def("set_resistance", [](SpatialBuilder& b, const py::object& rolling, const py::object& spinning) {
            const std::optional<double> r = Number(rolling, "rolling_friction");
            const std::optional<double> s = Number(spinning, "spinning_friction");
            b.SetResistance(r.value_or(0.0), s.value_or(0.0));
          }, py::arg("rolling_friction") = 0.0, py::arg("spinning_friction") = 0.0,
           "Rolling and spinning resistance (m, >= 0) of every contact pair with a sphere on one "
           "side and without its own (a scene's simulation.rolling_friction and "
           "spinning_friction; default 0): rows '<row>.r1', '<row>.r2' and '<row>.s'. Only "
           "integrator moreau_jean runs them (rolling only; docs/friction.md).")
      .def("set_friction", [](SpatialBuilder& b, const py::object& mu) {
            const std::optional<double> friction = Number(mu, "friction");
            if (!friction) throw InvalidArgument("friction must be a number >= 0");
            b.SetFriction(*friction);
          }, py::arg("friction"),
           "Coulomb friction mu >= 0 of every contact pair without its own (a scene's "
           "simulation.friction; default 0). mu > 0 gives each normal row two tangential rows "
           "'<row>.t1', '<row>.t2'.")
      .def_property_readonly("contact_pairs", &SpatialBuilder::ContactPairNames,
                             "Names of the contact pairs build() would make.")
      .def("set_gravity", [](SpatialBuilder& b, const py::handle& g) { b.SetGravity(Fixed<3>(g, "gravity")); }, py::arg("g"), "Gravity (gx, gy, gz), m/s^2.")
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
