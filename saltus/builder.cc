#include "saltus/builder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contact/broadphase.h"
#include "tools/limits.h"
#include "tools/scene.h"

namespace saltus {
namespace {

// Runs an engine call, turning its std::invalid_argument into saltus::InvalidArgument.
template <class Fn>
auto Checked(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::invalid_argument& e) {
    throw InvalidArgument(e.what());
  }
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The entry `type` of one of the scene loader's name tables (tools/scene.h).
template <class T>
T TypeOf(const tools::NameTable<T>& table, const std::string& type, const std::string& item) {
  for (const auto& [name, value] : table) {
    if (name == type) return value;
  }
  throw InvalidArgument(item + ": unknown type '" + type + "' (" + Join(tools::TableNames(table)) +
                        ")");
}

// Names of the items of one kind added so far (name → index) and the rule resolving an ItemRef.
class ItemNames {
 public:
  ItemNames(std::string kind, std::string plural, bool ground)
      : kind_(std::move(kind)), plural_(std::move(plural)), ground_(ground) {}
  void Add(const std::string& name, int index) {
    index_[name] = index;
    count_ = std::max(count_, index + 1);
  }
  // Items answering to an index only (the triangles of a mesh split per triangle).
  void Extend(int count) { count_ = std::max(count_, count); }
  bool Has(const std::string& name) const { return index_.count(name) != 0; }
  // Bodies also take "ground" / engine::kGround.
  int Resolve(const ItemRef& ref, const std::string& item) const {
    if (ref.by_index()) {
      const int i = ref.index();
      if ((ground_ && i == kGround) || (i >= 0 && i < count_)) return i;
      throw InvalidArgument(item + ": " + kind_ + " index " + std::to_string(i) +
                            " out of range (" + std::to_string(count_) + " " + plural_ + ")");
    }
    if (ground_ && ref.name() == "ground") return kGround;
    const auto it = index_.find(ref.name());
    if (it != index_.end()) return it->second;
    std::vector<std::string> known;
    for (const auto& [n, i] : index_) known.push_back(n);
    throw InvalidArgument(item + ": unknown " + kind_ + " '" + ref.name() + "' (" + plural_ + ": " +
                          (known.empty() ? "none" : Join(known)) + ")");
  }

 private:
  std::string kind_, plural_;
  bool ground_;
  std::map<std::string, int> index_;
  int count_ = 0;
};

// A driver's kind and profile; the profile's numbers are checked by the engine builders.
DriverKind DriverKindOf(const std::string& kind, const std::string& item) {
  if (kind == "angle") return DriverKind::kAngle;
  if (kind == "displacement") return DriverKind::kDisplacement;
  throw InvalidArgument(item + ": kind '" + kind + "' is unknown (use angle or displacement)");
}
void RequireProfile(const TimeProfile& p, const std::string& item) {
  if (p.kind == TimeProfile::Kind::kPolynomial && p.coefficients.empty()) {
    throw InvalidArgument(item + ": a polynomial profile needs coefficients [c0, c1, ...]");
  }
}

double Friction(double mu, const std::string& item, const std::string& key = "friction") {
  if (!std::isfinite(mu) || mu < 0.0) {
    throw InvalidArgument(item + ": " + key + " must be a finite number >= 0, got " +
                          tools::NumberText(mu));
  }
  return mu;
}

// The engine items of the specs, the same for planar and spatial models (the engine's planar or
// spatial struct of the item as Item); names are resolved, the numbers are checked by the engine
// builders.
template <class Joint, class Spec>
Joint MakeJoint(const Spec& spec, const tools::NameTable<decltype(Joint::type)>& types,
                const ItemNames& bodies) {
  const std::string item = "joint '" + spec.name + "'";
  Joint j;
  j.name = spec.name;
  j.type = TypeOf(types, spec.type, item);
  j.body_a = bodies.Resolve(spec.body_a, item);
  j.body_b = bodies.Resolve(spec.body_b, item);
  j.point_a = spec.point_a;
  j.point_b = spec.point_b;
  j.axis_a = spec.axis_a;
  j.length = spec.length;  // distance: 0 takes the initial distance of the points
  return j;
}

template <class Driver>
Driver MakeDriver(const DriverSpec& spec, const ItemNames& joints) {
  const std::string item = "driver '" + spec.name + "'";
  Driver d;
  d.name = spec.name;
  d.joint = joints.Resolve(spec.joint, item);
  d.kind = DriverKindOf(spec.kind, item);
  RequireProfile(spec.profile, item);
  d.profile = spec.profile;
  return d;
}

template <class Spring, class Spec>
Spring MakeSpring(const Spec& spec, const ItemNames& bodies) {
  const std::string item = "spring '" + spec.name + "'";
  Spring s;
  s.name = spec.name;
  s.body_a = bodies.Resolve(spec.body_a, item);
  s.body_b = bodies.Resolve(spec.body_b, item);
  s.point_a = spec.point_a;
  s.point_b = spec.point_b;
  s.stiffness = spec.stiffness;
  s.damping = spec.damping;
  s.rest_length = spec.rest_length;
  return s;
}

template <class Spring>
Spring MakeTorsionalSpring(const TorsionalSpringSpec& spec, const ItemNames& joints) {
  Spring s;
  s.name = spec.name;
  s.joint = joints.Resolve(spec.joint, "torsional spring '" + spec.name + "'");
  s.stiffness = spec.stiffness;
  s.damping = spec.damping;
  s.angle0 = spec.angle0;
  return s;
}

template <class Load, class Spec>
Load MakeLoad(const Spec& spec, const ItemNames& bodies) {
  const std::string item = "load '" + spec.name + "'";
  Load l;
  l.name = spec.name;
  l.body = bodies.Resolve(spec.body, item);
  l.force = spec.force;
  l.point = spec.point;
  l.torque = spec.torque;
  if (spec.scale) RequireProfile(*spec.scale, item + ": scale");
  l.scale = spec.scale;
  return l;
}

}  // namespace

// ---- planar -----------------------------------------------------------------------------------
struct PlanarBuilder::Items {
  PlanarModelBuilder builder;  // validates each item as it is added
  std::vector<PlanarContact> contacts;
  ItemNames bodies{"body", "bodies", true};
  ItemNames joints{"joint", "joints", false};
};

PlanarBuilder::PlanarBuilder() : items_(std::make_unique<Items>()) {}
PlanarBuilder::~PlanarBuilder() = default;
PlanarBuilder::PlanarBuilder(const PlanarBuilder& other)
    : items_(std::make_unique<Items>(*other.items_)) {}
PlanarBuilder& PlanarBuilder::operator=(const PlanarBuilder& other) {
  if (this != &other) items_ = std::make_unique<Items>(*other.items_);
  return *this;
}
// A moved-from builder is empty, not invalid.
PlanarBuilder::PlanarBuilder(PlanarBuilder&& other) : items_(std::make_unique<Items>()) {
  std::swap(items_, other.items_);
}
PlanarBuilder& PlanarBuilder::operator=(PlanarBuilder&& other) {
  std::swap(items_, other.items_);
  return *this;
}

int PlanarBuilder::AddBody(const PlanarBody& body) {
  const int i = Checked([&] { return items_->builder.AddBody(body); });
  items_->bodies.Add(body.name, i);
  return i;
}

int PlanarBuilder::AddJoint(const PlanarJointSpec& spec) {
  PlanarJoint j = MakeJoint<PlanarJoint>(spec, tools::PlanarJointTypes(), items_->bodies);
  j.angle0 = spec.angle0;
  j.rate = spec.rate;
  const int i = Checked([&] { return items_->builder.AddJoint(j); });
  items_->joints.Add(spec.name, i);
  return i;
}

int PlanarBuilder::AddDriver(const DriverSpec& spec) {
  const auto d = MakeDriver<PlanarDriver>(spec, items_->joints);
  return Checked([&] { return items_->builder.AddDriver(d); });
}

int PlanarBuilder::AddSpring(const PlanarSpringSpec& spec) {
  const auto s = MakeSpring<PlanarSpringDamper>(spec, items_->bodies);
  return Checked([&] { return items_->builder.AddSpringDamper(s); });
}

int PlanarBuilder::AddTorsionalSpring(const TorsionalSpringSpec& spec) {
  const auto s = MakeTorsionalSpring<engine::PlanarTorsionalSpring>(spec, items_->joints);
  return Checked([&] { return items_->builder.AddTorsionalSpring(s); });
}

int PlanarBuilder::AddLoad(const PlanarLoadSpec& spec) {
  const auto l = MakeLoad<PlanarLoad>(spec, items_->bodies);
  return Checked([&] { return items_->builder.AddLoad(l); });
}

// Contacts are checked against the bodies here (name, bodies, type) and as a whole by
// contact::PlanarContacts in Build (geometry, restitution, friction).
int PlanarBuilder::AddContact(const PlanarContactSpec& spec) {
  const std::string item = "contact '" + spec.name + "'";
  PlanarContact c;
  c.name = spec.name;
  c.type = TypeOf(tools::PlanarContactTypes(), spec.type, item);
  c.body_a = items_->bodies.Resolve(spec.body_a, item);
  c.body_b = items_->bodies.Resolve(spec.body_b, item);
  c.point_a = spec.point_a;
  c.normal_a = spec.normal_a;
  c.radius_a = spec.radius_a;
  c.point_b = spec.point_b;
  c.radius_b = spec.radius_b;
  c.restitution = spec.restitution;
  c.friction = spec.friction;
  for (const PlanarContact& other : items_->contacts) {
    if (other.name == spec.name) throw InvalidArgument(item + ": the name is already used");
  }
  items_->contacts.push_back(c);
  return static_cast<int>(items_->contacts.size()) - 1;
}

void PlanarBuilder::SetGravity(const Eigen::Vector2d& g) {
  Checked([&] { items_->builder.SetGravity(g); });
}

Model PlanarBuilder::Build() const {
  PlanarModelBuilder copy = items_->builder;  // the builder stays usable
  return Model::FromPlanar(Checked([&] { return copy.Build(); }), items_->contacts);
}

// ---- spatial ----------------------------------------------------------------------------------
// The items are recorded in a tools::Scene (`dimension: 3`) and built with
// tools::BuildSceneSystem, the construction a scene file goes through; each item is also handed
// to an engine::SpatialModelBuilder when added, so that a bad item throws at once, naming it.
struct SpatialBuilder::Items {
  Items() {
    scene.file = "SpatialBuilder";
    scene.dimension = 3;
    scene.spatial.gravity.setZero();  // the engine's default (a scene file's is −9.81 z)
  }
  tools::SpatialScene& sp() { return scene.spatial; }
  const tools::SpatialScene& sp() const { return scene.spatial; }
  // Two different shapes as (smaller, larger) shape items.
  std::pair<int, int> ShapePair(const ItemRef& a, const ItemRef& b, const std::string& item) const;
  std::string PairName(const std::pair<int, int>& ij) const {
    return "'" + sp().shapes[static_cast<std::size_t>(ij.first)].name() + "-" +
           sp().shapes[static_cast<std::size_t>(ij.second)].name() + "'";
  }
  bool Listed(const std::pair<int, int>& ij) const {
    return std::any_of(choice.listed.begin(), choice.listed.end(),
                       [&](const tools::ContactPairChoice::Listed& l) { return l.items == ij; });
  }
  bool Excluded(const std::pair<int, int>& ij) const {
    return std::find(choice.excluded.begin(), choice.excluded.end(), ij) != choice.excluded.end();
  }

  engine::SpatialModelBuilder builder;
  tools::Scene scene;
  ItemNames bodies{"body", "bodies", true};
  ItemNames joints{"joint", "joints", false};
  ItemNames shapes{"shape", "shapes", false};
  std::vector<int> shape_items;  // per shape: the first shape of its named shape
  tools::ContactPairChoice choice;
};

std::pair<int, int> SpatialBuilder::Items::ShapePair(const ItemRef& a, const ItemRef& b,
                                                     const std::string& item) const {
  const int i = shape_items[static_cast<std::size_t>(shapes.Resolve(a, item))];
  const int j = shape_items[static_cast<std::size_t>(shapes.Resolve(b, item))];
  if (i == j) {
    throw InvalidArgument(item + ": a shape cannot touch itself ('" +
                          sp().shapes[static_cast<std::size_t>(i)].name() + "' twice)");
  }
  return {std::min(i, j), std::max(i, j)};
}

SpatialBuilder::SpatialBuilder() : items_(std::make_unique<Items>()) {}
SpatialBuilder::~SpatialBuilder() = default;
SpatialBuilder::SpatialBuilder(const SpatialBuilder& other)
    : items_(std::make_unique<Items>(*other.items_)) {}
SpatialBuilder& SpatialBuilder::operator=(const SpatialBuilder& other) {
  if (this != &other) items_ = std::make_unique<Items>(*other.items_);
  return *this;
}
// A moved-from builder is empty, not invalid.
SpatialBuilder::SpatialBuilder(SpatialBuilder&& other) : items_(std::make_unique<Items>()) {
  std::swap(items_, other.items_);
}
SpatialBuilder& SpatialBuilder::operator=(SpatialBuilder&& other) {
  std::swap(items_, other.items_);
  return *this;
}

int SpatialBuilder::AddBody(const SpatialBody& body) {
  const int i = Checked([&] { return items_->builder.AddBody(body); });
  items_->bodies.Add(body.name, i);
  items_->sp().bodies.push_back(body);
  return i;
}

int SpatialBuilder::AddJoint(const SpatialJointSpec& spec) {
  SpatialJoint j = MakeJoint<SpatialJoint>(spec, tools::SpatialJointTypes(), items_->bodies);
  j.axis_b = spec.axis_b;
  j.ref_a = spec.ref_a;
  j.ref_b = spec.ref_b;
  const int i = Checked([&] { return items_->builder.AddJoint(j); });
  items_->joints.Add(spec.name, i);
  items_->sp().joints.push_back(j);
  return i;
}

int SpatialBuilder::AddDriver(const DriverSpec& spec) {
  const auto d = MakeDriver<SpatialDriver>(spec, items_->joints);
  const int i = Checked([&] { return items_->builder.AddDriver(d); });
  items_->sp().drivers.push_back(d);
  return i;
}

int SpatialBuilder::AddSpring(const SpatialSpringSpec& spec) {
  const auto s = MakeSpring<SpatialSpringDamper>(spec, items_->bodies);
  const int i = Checked([&] { return items_->builder.AddSpringDamper(s); });
  items_->sp().springs.push_back(s);
  return i;
}

int SpatialBuilder::AddTorsionalSpring(const TorsionalSpringSpec& spec) {
  const auto s = MakeTorsionalSpring<SpatialTorsionalSpring>(spec, items_->joints);
  const int i = Checked([&] { return items_->builder.AddTorsionalSpring(s); });
  items_->sp().torsional_springs.push_back(s);
  return i;
}

int SpatialBuilder::AddLoad(const SpatialLoadSpec& spec) {
  const auto l = MakeLoad<SpatialLoad>(spec, items_->bodies);
  const int i = Checked([&] { return items_->builder.AddLoad(l); });
  items_->sp().loads.push_back(l);
  return i;
}

int SpatialBuilder::AddPrismaticFriction(const PrismaticFrictionSpec& spec) {
  const std::string item = "prismatic friction '" + spec.name + "'";
  engine::SpatialPrismaticFriction f;
  f.name = spec.name;
  f.joint = items_->joints.Resolve(spec.joint, item);
  f.mu = spec.mu;
  const int i = Checked([&] { return items_->builder.AddPrismaticFriction(f); });
  items_->sp().prismatic_frictions.push_back(f);
  return i;
}

namespace {

// The shape of a ShapeSpec at `pose`: only the parameters of its type may be set (as in the
// scene format's `shapes:`); the contact::Shape factories check the sizes and read mesh files.
Shape MakeShape(const ShapeSpec& s, const Eigen::Isometry3d& pose, const std::string& item) {
  const std::vector<std::string> own = TypeOf(tools::ShapeTypeParameters(), s.type, item);
  const std::map<std::string, bool> given = {{"radius", s.radius.has_value()},
                                             {"length", s.length.has_value()},
                                             {"half_size", s.half_size.has_value()},
                                             {"radii", s.radii.has_value()},
                                             {"normal", s.normal.has_value()},
                                             {"offset", s.offset.has_value()},
                                             {"file", s.file.has_value()}};
  for (const auto& [key, set] : given) {
    if (set && std::find(own.begin(), own.end(), key) == own.end()) {
      throw InvalidArgument(item + ": '" + key + "' is not a parameter of a " + s.type + " shape");
    }
  }
  for (const std::string& key : own) {
    if (!given.at(key) && key != "normal" && key != "offset") {
      throw InvalidArgument(item + ": a " + s.type + " shape needs '" + key + "'");
    }
  }
  if (s.per_triangle && s.type != "triangle_mesh") {
    throw InvalidArgument(item + ": per_triangle is for triangle_mesh shapes only");
  }
  try {
    if (s.type == "sphere") return Shape::Sphere(*s.radius, pose, s.name);
    if (s.type == "box") return Shape::Box(*s.half_size, pose, s.name);
    if (s.type == "cylinder") return Shape::Cylinder(*s.radius, *s.length, pose, s.name);
    if (s.type == "capsule") return Shape::Capsule(*s.radius, *s.length, pose, s.name);
    if (s.type == "ellipsoid") return Shape::Ellipsoid(*s.radii, pose, s.name);
    if (s.type == "plane") {
      return Shape::Plane(s.normal.value_or(Eigen::Vector3d::UnitZ()), s.offset.value_or(0.0), pose,
                          s.name);
    }
    if (s.type == "convex_mesh") return Shape::ConvexMeshFromFile(*s.file, pose, s.name);
    return Shape::TriangleMeshFromFile(*s.file, pose, s.name);
  } catch (const std::invalid_argument& e) {  // names the shape or the mesh file
    const std::string what = e.what();
    throw InvalidArgument(what.find(item) == std::string::npos ? item + ": " + what : what);
  }
}

}  // namespace

int SpatialBuilder::AddShape(const ShapeSpec& spec) {
  const std::string item = "shape '" + spec.name + "'";
  if (spec.name.empty()) throw InvalidArgument("shape: the name must not be empty");
  if (items_->shapes.Has(spec.name)) throw InvalidArgument(item + ": the name is already used");
  const int body = items_->bodies.Resolve(spec.body, item);
  const Eigen::Vector4d& Q = spec.quaternion;
  if (!(std::abs(Q.norm() - 1.0) <= 1e-6)) {  // the scene loader's rule
    throw InvalidArgument(item + ": quaternion must be a unit quaternion (w, x, y, z), got norm " +
                          tools::NumberText(Q.norm()) +
                          " (only norms within 1e-6 of 1 are normalized)");
  }
  Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
  pose.translation() = spec.position;
  pose.linear() = Eigen::Quaterniond(Q(0), Q(1), Q(2), Q(3)).normalized().toRotationMatrix();
  const Shape shape = MakeShape(spec, pose, item);
  std::vector<Shape> parts;
  if (spec.per_triangle) {
    parts = tools::PerTriangleShapes(shape, spec.name);
  } else {
    parts.push_back(shape);
  }
  tools::SpatialScene& sp = items_->sp();
  const int first = static_cast<int>(sp.shapes.size());
  for (Shape& part : parts) {
    sp.shapes.push_back(std::move(part));
    sp.shape_bodies.push_back(body);
    sp.shape_lines.push_back(0);
    sp.shape_filters.push_back(contact::CollisionFilter{spec.group, spec.mask});
    items_->shape_items.push_back(first);
  }
  items_->shapes.Add(spec.name, first);  // every part answers to its index, the name to the first
  items_->shapes.Extend(static_cast<int>(sp.shapes.size()));
  return first;
}

void SpatialBuilder::SetContactDefault(const std::string& value) {
  if (value != "all" && value != "none") {
    throw InvalidArgument(
        "contacts: default must be 'all' (every shape pair may touch) or 'none' (only the "
        "listed pairs), got '" +
        value + "'");
  }
  items_->choice.all_pairs = value == "all";
}

void SpatialBuilder::ExcludeContact(const ItemRef& shape_a, const ItemRef& shape_b) {
  const std::pair<int, int> ij = items_->ShapePair(shape_a, shape_b, "contacts: exclude");
  const std::string item = "contacts: exclude " + items_->PairName(ij);
  if (items_->Listed(ij)) throw InvalidArgument(item + ": the pair is also listed");
  if (!items_->Excluded(ij)) items_->choice.excluded.push_back(ij);
}

void SpatialBuilder::AddContactPair(const ItemRef& shape_a, const ItemRef& shape_b,
                                    std::optional<double> restitution,
                                    std::optional<double> friction,
                                    std::optional<double> rolling_friction,
                                    std::optional<double> spinning_friction) {
  const std::pair<int, int> ij = items_->ShapePair(shape_a, shape_b, "contact pair");
  const std::string item = "contact pair " + items_->PairName(ij);
  if (const std::string why = tools::ContactPairObstacle(items_->sp(), ij.first, ij.second);
      !why.empty()) {
    throw InvalidArgument(item + ": " + why);
  }
  if (items_->Excluded(ij)) throw InvalidArgument(item + ": the pair is also excluded");
  if (items_->Listed(ij)) throw InvalidArgument(item + ": the pair is listed twice");
  if (restitution && !(*restitution >= 0.0 && *restitution <= 1.0)) {
    throw InvalidArgument(item + ": restitution must be in [0, 1], got " +
                          tools::NumberText(*restitution));
  }
  tools::ContactPairChoice::Listed listed;
  listed.items = ij;
  listed.restitution = restitution.value_or(-1.0);
  listed.friction = friction ? Friction(*friction, item) : -1.0;
  listed.rolling_friction =
      rolling_friction ? Friction(*rolling_friction, item, "rolling_friction") : -1.0;
  listed.spinning_friction =
      spinning_friction ? Friction(*spinning_friction, item, "spinning_friction") : -1.0;
  const auto sphere = [&](int i) {
    return items_->sp().shapes[static_cast<std::size_t>(i)].type() == contact::ShapeType::kSphere;
  };
  if ((rolling_friction || spinning_friction) && !sphere(ij.first) && !sphere(ij.second)) {
    throw InvalidArgument(item +
                          ": rolling_friction and spinning_friction apply to pairs with a sphere "
                          "on one side; neither shape of this pair is a sphere");
  }
  items_->choice.listed.push_back(listed);
}

void SpatialBuilder::SetFriction(double friction) {
  items_->choice.friction = Friction(friction, "friction");
}

void SpatialBuilder::SetResistance(double rolling_friction, double spinning_friction) {
  items_->choice.resistance.rolling_friction =
      Friction(rolling_friction, "resistance", "rolling_friction");
  items_->choice.resistance.spinning_friction =
      Friction(spinning_friction, "resistance", "spinning_friction");
}

void SpatialBuilder::SetGravity(const Eigen::Vector3d& g) {
  Checked([&] { items_->builder.SetGravity(g); });
  items_->sp().gravity = g;
}

std::vector<std::string> SpatialBuilder::ContactPairNames() const {
  tools::SpatialScene s = items_->sp();
  s.contact_pairs.clear();
  tools::SelectContactPairs(items_->choice, items_->shape_items, &s);
  std::vector<std::string> names;
  for (const auto& p : s.contact_pairs) names.push_back(p.name);
  return names;
}

const std::vector<std::string>& SpatialBuilder::warnings() const {
  return items_->builder.warnings();
}

// The scene's system (tools::BuildSceneSystem: the engine model, one contact block of the
// selected pairs, the consistent initialization at t = 0).
Model SpatialBuilder::Build() const {
  tools::Scene scene = items_->scene;
  scene.spatial.contact_pairs.clear();
  scene.spatial.contact_pair_lines.clear();
  tools::SelectContactPairs(items_->choice, items_->shape_items, &scene.spatial);
  tools::SceneSystem built = Checked([&] { return tools::BuildSceneSystem(scene); });
  return Model::FromSystem(built.system, built.q0, built.v0);
}

}  // namespace saltus
