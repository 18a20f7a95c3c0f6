#include "contact/spatial_contacts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "engine/block_sparse.h"
#include "engine/rotation.h"

namespace saltus::contact {

using Eigen::Isometry3d;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;

// On the side of a sphere at a node of a flexible body (header, "Contacts at nodes") the
// material points of the sphere also move with the node's elastic velocity e_v = R B η̇ and
// v̇-free acceleration e_a = R (2 ω × B η̇ − (η̇ᵀ H η̇) e_x), the same at every point of it.
struct ContactBodyMotion {
  Vector3d r = Vector3d::Zero();
  Vector3d r_dot = Vector3d::Zero();
  Vector3d omega = Vector3d::Zero();  // world frame
  bool elastic = false;               // a node side: e_v, e_a below apply
  Vector3d e_v = Vector3d::Zero(), e_a = Vector3d::Zero();
  Vector3d Velocity(const Vector3d& x) const {
    return elastic ? Vector3d(r_dot + omega.cross(x - r) + e_v)
                   : Vector3d(r_dot + omega.cross(x - r));
  }
  // v̇-free acceleration of the material point at x.
  Vector3d Acceleration(const Vector3d& x) const {
    return elastic ? Vector3d(omega.cross(omega.cross(x - r)) + e_a)
                   : Vector3d(omega.cross(omega.cross(x - r)));
  }
  // The v̇-free rate of v_B(x) = ṙ + ω × (x − r) + e_v at a geometric point x moving at x_dot:
  // ω × (ẋ − ṙ) + ω × e_v + R Ḃ η̇ = ω × (ẋ − ṙ − e_v) + e_a.
  Vector3d MovingPointRate(const Vector3d& x_dot) const {
    return elastic ? Vector3d(omega.cross(x_dot - r_dot - e_v) + e_a)
                   : Vector3d(omega.cross(x_dot - r_dot));
  }
};

namespace {

std::string PairLabel(const SpatialContactPair& p) { return "contact pair '" + p.name + "'"; }

// The two sides of a row in the order of its G blocks: ascending body, the ground last (its side is
// skipped), with each side's lever and sign (−1 on body a, +1 on body b).
struct OrderedSides {
  int body[2];
  const Eigen::Vector3d* lever[2];
  double sign[2];
};
OrderedSides SidesInBlockOrder(const SpatialContactPair& pair, const Eigen::Vector3d& lever_a,
                               const Eigen::Vector3d& lever_b) {
  OrderedSides s{{pair.body_a, pair.body_b}, {&lever_a, &lever_b}, {-1.0, 1.0}};
  if (s.body[1] != engine::kGround && (s.body[0] == engine::kGround || s.body[1] < s.body[0])) {
    std::swap(s.body[0], s.body[1]);
    std::swap(s.lever[0], s.lever[1]);
    std::swap(s.sign[0], s.sign[1]);
  }
  return s;
}

// Which closed form γ has (see the header).
enum class GammaForm {
  kPlanePoint,
  kSphereSphere,
  kPlaneRim,
  kBoxCorner,
  kMeshSphere,
  kDifference
};

bool IsPlane(const Shape& s) { return s.type() == ShapeType::kPlane; }

GammaForm FormOf(const SpatialContactPair& pair, ContactFeature feature) {
  const FeatureKind k = feature.kind;
  if (k == FeatureKind::kPlaneVertex || k == FeatureKind::kPlaneEndBall) {
    return GammaForm::kPlanePoint;
  }
  if (k == FeatureKind::kPlaneRim) return GammaForm::kPlaneRim;
  if (k == FeatureKind::kBoxCornerOfA || k == FeatureKind::kBoxCornerOfB ||
      k == FeatureKind::kBoxEndBall) {
    return GammaForm::kBoxCorner;
  }
  if (k == FeatureKind::kMeshVertex || k == FeatureKind::kMeshEndBall) {
    return GammaForm::kMeshSphere;
  }
  if (k == FeatureKind::kSignedDistance) {
    const ShapeType a = pair.shape_a.type(), b = pair.shape_b.type();
    if (a == ShapeType::kSphere && b == ShapeType::kSphere) return GammaForm::kSphereSphere;
    if ((a == ShapeType::kPlane && b == ShapeType::kSphere) ||
        (a == ShapeType::kSphere && b == ShapeType::kPlane)) {
      return GammaForm::kPlanePoint;
    }
    if ((a == ShapeType::kTriangleMesh && b == ShapeType::kSphere) ||
        (a == ShapeType::kSphere && b == ShapeType::kTriangleMesh)) {
      return GammaForm::kMeshSphere;
    }
  }
  return GammaForm::kDifference;
}

// R(Q_i) of the bodies, per thread, keyed by the quaternion's four values: an entry is reused while
// q holds the same Q_i (R is a function of Q alone, so no invalidation is needed, also across
// blocks, systems and calls). One evaluation over k rows computes each body's rotation at most
// once, and AppendJacobianBlocks, called row by row, shares them too. (The engine's joint rows use
// an epoch-stamped cache restarted by each call over a span of rows, engine/spatial_model.cc; the
// per-row calls here have no such start, hence the value key.)
struct CachedRotation {
  double Q[4] = {std::numeric_limits<double>::quiet_NaN(), 0.0, 0.0, 0.0};  // NaN: never equal
  Matrix3d R;
};

const Matrix3d& CachedBodyRotation(const engine::SpatialModel& model, const VectorXd& q, int body) {
  thread_local std::vector<CachedRotation> cache;
  const auto i = static_cast<std::size_t>(body);
  if (cache.size() <= i) cache.resize(i + 1);
  CachedRotation& c = cache[i];
  const double* Q = q.data() + model.QOffset(body) + 3;
  if (!(c.Q[0] == Q[0] && c.Q[1] == Q[1] && c.Q[2] == Q[2] && c.Q[3] == Q[3])) {
    c.R = engine::QuaternionToRotation(Eigen::Vector4d(Q[0], Q[1], Q[2], Q[3]));
    std::copy(Q, Q + 4, c.Q);
  }
  return c.R;
}

// World position of a shape's origin on `body` (the ground: the shape pose's translation).
Vector3d ShapeOrigin(const engine::SpatialModel& model, const VectorXd& q, int body,
                     const Shape& s) {
  if (body == engine::kGround) return s.pose().translation();
  const auto r = q.segment<3>(model.QOffset(body));
  if (s.centred()) return r;
  return r + CachedBodyRotation(model, q, body) * s.pose().translation();
}

// World-frame kinematics of one body (all zero for the ground).
using BodyMotion = ContactBodyMotion;

BodyMotion MotionOf(const engine::SpatialModel& model, const VectorXd& q, const VectorXd& v,
                    int body) {
  BodyMotion m;
  if (body == engine::kGround) return m;
  const int v0 = model.VOffset(body);
  m.r = q.segment<3>(model.QOffset(body));
  m.r_dot = v.segment<3>(v0);
  m.omega = CachedBodyRotation(model, q, body) * v.segment<3>(v0 + 3);
  return m;
}

// ---- Tangent frames (header, "Tangential rows") ----------------------------------------------

// a* of the header: along no face, edge or diagonal of a box.
const Vector3d kFrameAxis(2.0 / 7.0, 3.0 / 7.0, 6.0 / 7.0);

// The smallest rotation taking a to n, applied to e1 (⊥ a) and e2 = a × e1. t1 is made
// orthogonal to n and unit once more, which removes the round-off of a normal that is unit only
// to ~1e-12 (FCL) amplified by 1/(1 + a·n), and changes nothing to first order where n is unit
// (TangentBasisRate needs no term for it).
std::pair<Vector3d, Vector3d> TangentBasis(const Vector3d& n, const Vector3d& a,
                                           const Vector3d& e1) {
  const double k = 1.0 / (1.0 + a.dot(n));
  Vector3d t1 = e1 - (n.dot(e1) * k) * (a + n);
  t1 = (t1 - t1.dot(n) * n).normalized();
  return {t1, n.cross(t1)};
}

// The rates of TangentBasis for ṅ, with a and e1 fixed in a body turning at ω (world frame).
std::pair<Vector3d, Vector3d> TangentBasisRate(const Vector3d& n, const Vector3d& n_dot,
                                               const Vector3d& a, const Vector3d& e1,
                                               const Vector3d& omega) {
  const Vector3d a_dot = omega.cross(a), e1_dot = omega.cross(e1);
  const double k = 1.0 / (1.0 + a.dot(n));
  const double beta = n.dot(e1), beta_dot = n_dot.dot(e1) + n.dot(e1_dot);
  const double c_dot = a_dot.dot(n) + a.dot(n_dot);
  const Vector3d t1 = e1 - (beta * k) * (a + n);
  const Vector3d t1_dot =
      e1_dot - (beta_dot * k - beta * c_dot * k * k) * (a + n) - (beta * k) * (a_dot + n_dot);
  return {t1_dot, n_dot.cross(t1) + n.cross(t1_dot)};
}

// ṅ of a normal along ±u, u = d − (d·e) e (e = 0: along d), d = c − x_S with c and x_S material
// points of the two sides, e fixed in S turning at ω_S: (n·m)(I − n nᵀ) u̇/‖u‖ (header). NaN
// when u = 0 (the normal is not defined there).
Vector3d TurningNormalRate(const Vector3d& n, const Vector3d& d, const Vector3d& d_dot,
                           const Vector3d& e, const Vector3d& omega_s) {
  const Vector3d e_dot = omega_s.cross(e);
  const double de = d.dot(e);
  const Vector3d u = d - de * e;
  const Vector3d u_dot = d_dot - (d_dot.dot(e) + d.dot(e_dot)) * e - de * e_dot;
  const double len = u.norm();
  if (!(len > 0.0)) return Vector3d::Constant(std::numeric_limits<double>::quiet_NaN());
  return (n.dot(u) < 0.0 ? -1.0 : 1.0) * (u_dot - n.dot(u_dot) * n) / len;
}

// The Voronoi region of a point of box-frame coordinates `local` against a box of half sizes h:
// the number of coordinates beyond the half sizes (0 or 1: a face, or inside; 2: an edge along
// the axis inside_axis; 3: a vertex).
struct BoxRegion {
  int outside = 0, inside_axis = 0;
};
BoxRegion BoxRegionOf(const Vector3d& local, const Vector3d& h) {
  BoxRegion region;
  for (int j = 0; j < 3; ++j) {
    if (std::abs(local[j]) > h[j]) {
      ++region.outside;
    } else {
      region.inside_axis = j;
    }
  }
  return region;
}

// The region of a point c (world) against a triangle mesh at X_m (its shape pose in the world):
// the closest point x (world) on the closest triangle, and whether the normal is fixed in the
// mesh there (a face, or within kMeshNearFeature of an edge or vertex: MeshPointDistance);
// otherwise the edge direction (world; zero beside a vertex).
struct MeshRegion {
  MeshClosest closest;
  Vector3d x, edge = Vector3d::Zero();
  bool plane_form = true;
};
MeshRegion MeshRegionOf(const Shape& mesh, const Isometry3d& X_m, const Vector3d& c) {
  MeshRegion region;
  region.closest = ClosestPointOnMesh(mesh.mesh(), X_m.inverse() * c);
  region.x = X_m * region.closest.point;
  region.plane_form = region.closest.feature.kind == TriangleFeature::kFace ||
                      (c - region.x).norm() <= kMeshNearFeature;
  if (!region.plane_form && region.closest.feature.kind == TriangleFeature::kEdge) {
    const auto& tri = mesh.mesh().triangles[static_cast<std::size_t>(region.closest.triangle)];
    const Vector3d& p0 = mesh.mesh().vertices[static_cast<std::size_t>(
        tri[static_cast<std::size_t>(region.closest.feature.vertices[0])])];
    const Vector3d& p1 = mesh.mesh().vertices[static_cast<std::size_t>(
        tri[static_cast<std::size_t>(region.closest.feature.vertices[1])])];
    region.edge = X_m.linear() * (p1 - p0).normalized();
  }
  return region;
}

}  // namespace

namespace {

void CheckPairExceptShapes(int nb, const SpatialContactPair& pair, std::size_t index) {
  if (pair.name.empty()) {
    throw std::invalid_argument("contact pair #" + std::to_string(index) + ": empty name");
  }
  for (int body : {pair.body_a, pair.body_b}) {
    if (body != engine::kGround && (body < 0 || body >= nb)) {
      throw std::invalid_argument(PairLabel(pair) + ": unknown body index " + std::to_string(body));
    }
  }
  if (pair.body_a == pair.body_b) {
    throw std::invalid_argument(PairLabel(pair) + (pair.body_a == engine::kGround
                                                       ? ": both shapes on the ground"
                                                       : ": both shapes on the same body"));
  }
  if (!std::isfinite(pair.restitution) || pair.restitution > 1.0) {
    throw std::invalid_argument(PairLabel(pair) +
                                ": restitution must be in [0, 1] (negative: global)");
  }
  const auto check = [&](double value, const char* what) {
    if (!std::isfinite(value) || value < 0.0) {
      throw std::invalid_argument(PairLabel(pair) + ": " + what +
                                  " must be a finite number >= 0, got " + std::to_string(value));
    }
  };
  check(pair.friction, "friction");
  check(pair.rolling_friction, "rolling_friction");
  check(pair.spinning_friction, "spinning_friction");
  if ((pair.rolling_friction > 0.0 || pair.spinning_friction > 0.0) &&
      pair.shape_a.type() != ShapeType::kSphere && pair.shape_b.type() != ShapeType::kSphere) {
    throw std::invalid_argument(PairLabel(pair) +
                                ": rolling_friction and spinning_friction apply to pairs with a "
                                "sphere on one side (a single contact point that can roll)");
  }
}

}  // namespace

namespace {

// A side at a node (header, "Contacts at nodes"): a flexible body, a node of its beam, and a
// sphere centred on its own origin.
void CheckNodes(const engine::SpatialModel& model, const SpatialContactPair& pair) {
  for (const auto& [node, body, shape, side] :
       {std::tuple(pair.node_a, pair.body_a, &pair.shape_a, "a"),
        std::tuple(pair.node_b, pair.body_b, &pair.shape_b, "b")}) {
    if (node == -1) continue;
    const std::string field = std::string("node_") + side;
    const engine::SpatialFlexibleBeam* beam = body == engine::kGround ? nullptr : model.beam(body);
    if (beam == nullptr) {
      throw std::invalid_argument(PairLabel(pair) + ": " + field + " needs a flexible body_" +
                                  side);
    }
    const int elements = beam->properties().elements;
    if (node == kAlongCentreline) {
      // The partner: a sphere or a plane, not itself at a node or the centreline.
      const bool on_a = side[0] == 'a';
      const Shape& partner = on_a ? pair.shape_b : pair.shape_a;
      if ((on_a ? pair.node_b : pair.node_a) != -1 ||
          (partner.type() != ShapeType::kSphere && partner.type() != ShapeType::kPlane)) {
        throw std::invalid_argument(PairLabel(pair) + ": the centreline of " + field +
                                    " touches a sphere or a plane (of a rigid body or the "
                                    "ground) only");
      }
    } else if (node < 0 || node > elements) {
      throw std::invalid_argument(PairLabel(pair) + ": " + field + " " + std::to_string(node) +
                                  " is not a node of the beam (0.." + std::to_string(elements) +
                                  ")");
    }
    if (shape->type() != ShapeType::kSphere || !shape->centred()) {
      throw std::invalid_argument(PairLabel(pair) + ": the shape at " + field +
                                  (node == kAlongCentreline
                                       ? " must be a sphere with the identity pose (the section "
                                         "swept along the centreline)"
                                       : " must be a sphere centred on the node (identity pose)"));
    }
  }
}

}  // namespace

void SpatialContacts::CheckPair(const engine::SpatialModel& model, const SpatialContactPair& pair,
                                std::size_t index, const DistanceOptions& options) {
  CheckPairExceptShapes(model.num_bodies(), pair, index);
  CheckNodes(model, pair);
  try {
    const ContactManifold manifold(pair.shape_a, pair.shape_b, options);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(PairLabel(pair) + ": " + e.what());
  }
}

SpatialContacts::SpatialContacts(std::shared_ptr<const engine::SpatialModel> model,
                                 std::vector<SpatialContactPair> pairs, DistanceOptions options)
    : model_(std::move(model)), pairs_(std::move(pairs)) {
  if (!model_) throw std::invalid_argument("SpatialContacts: null model");
  const int nb = model_->num_bodies();
  pair_manifold_.reserve(pairs_.size());
  pair_first_row_.reserve(pairs_.size());
  pair_num_rows_.reserve(pairs_.size());
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    const SpatialContactPair& pair = pairs_[p];
    CheckPairExceptShapes(nb, pair, p);
    CheckNodes(*model_, pair);
    if (pair.node_a != -1 || pair.node_b != -1) {
      if (pair_nodes_.size() <= p) pair_nodes_.resize(p + 1);
      const auto point = [&](int body, int node) {
        const engine::SpatialFlexibleBeam& beam = *model_->beam(body);
        return beam.PointAt(beam.NodeX(node));
      };
      if (pair.node_a >= 0) pair_nodes_[p].a = point(pair.body_a, pair.node_a);
      if (pair.node_b >= 0) pair_nodes_[p].b = point(pair.body_b, pair.node_b);
      has_nodes_ = true;
    }
    std::optional<ContactManifold> manifold;
    try {
      manifold.emplace(pair.shape_a, pair.shape_b, options);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(PairLabel(pair) + ": " + e.what());
    }
    const int num_features = manifold->num_features();
    const ShapeType ta = pair.shape_a.type(), tb = pair.shape_b.type();
    RowPath path = RowPath::kManifold;
    if (!options.force_fcl && num_features == 1) {
      if (ta == ShapeType::kSphere && tb == ShapeType::kSphere) path = RowPath::kSphereSphere;
      if (ta == ShapeType::kPlane && tb == ShapeType::kSphere) path = RowPath::kPlaneSphere;
      if (ta == ShapeType::kSphere && tb == ShapeType::kPlane) path = RowPath::kSpherePlane;
    }
    // Only the pairs evaluated through their manifold keep it (the direct paths use the shapes).
    pair_manifold_.push_back(path == RowPath::kManifold ? static_cast<int>(manifolds_.size()) : -1);
    if (path == RowPath::kManifold) manifolds_.push_back(std::move(*manifold));
    pair_first_row_.push_back(static_cast<int>(infos_.size()));
    pair_num_rows_.push_back(num_features);
    for (int k = 0; k < num_features; ++k) {
      engine::ConstraintRowInfo info;
      info.kind = engine::ConstraintKind::kUnilateral;
      info.name = num_features == 1 ? pair.name : pair.name + "." + std::to_string(k);
      info.restitution = pair.restitution;
      info.friction = pair.friction;
      info.rolling_friction = pair.rolling_friction;
      info.spinning_friction = pair.spinning_friction;
      infos_.push_back(std::move(info));
      row_pair_.push_back(static_cast<int>(p));
      row_feature_.push_back(k);
      row_path_.push_back(path);
    }
  }
  // Tangential rows after all normal rows (header), so that frictionless rows keep their indices.
  const int num_normal = num_normal_rows();
  for (int r = 0; r < num_normal; ++r) {
    if (!(infos_[static_cast<std::size_t>(r)].friction > 0.0)) continue;
    const std::string name = infos_[static_cast<std::size_t>(r)].name;  // infos_ grows below
    for (const char* suffix : {".t1", ".t2"}) {
      engine::ConstraintRowInfo info;
      info.kind = engine::ConstraintKind::kTangential;
      info.level = engine::ConstraintLevel::kVelocity;
      info.name = name + suffix;
      info.normal_row = r;
      infos_.push_back(std::move(info));
    }
    tangent_normal_.push_back(r);
  }
  // Resistance rows after all tangential rows (header, "Resistance rows").
  for (int r = 0; r < num_normal; ++r) {
    const engine::ConstraintRowInfo normal = infos_[static_cast<std::size_t>(r)];
    const auto add = [&](const char* suffix, int axis) {
      engine::ConstraintRowInfo info;
      info.kind = engine::ConstraintKind::kResistance;
      info.level = engine::ConstraintLevel::kVelocity;
      info.name = normal.name + suffix;
      info.normal_row = r;
      info.spinning = axis == 2;
      infos_.push_back(std::move(info));
      resistance_normal_.push_back(r);
      resistance_axis_.push_back(static_cast<signed char>(axis));
    };
    if (normal.rolling_friction > 0.0) {
      add(".r1", 0);
      add(".r2", 1);
    }
    if (normal.spinning_friction > 0.0) add(".s", 2);
  }
  {  // Unique names: sort (hash, pair) and compare the names of equal hashes only (sorting the
     // 504,500 names of a pile of 1000 spheres themselves took ~0.3 s).
    std::vector<std::pair<std::size_t, int>> hashes;
    hashes.reserve(pairs_.size());
    for (std::size_t p = 0; p < pairs_.size(); ++p) {
      hashes.emplace_back(std::hash<std::string>()(pairs_[p].name), static_cast<int>(p));
    }
    std::sort(hashes.begin(), hashes.end());
    for (std::size_t k = 0; k + 1 < hashes.size(); ++k) {
      for (std::size_t l = k + 1; l < hashes.size() && hashes[l].first == hashes[k].first; ++l) {
        const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(hashes[k].second)];
        if (pair.name == pairs_[static_cast<std::size_t>(hashes[l].second)].name) {
          throw std::invalid_argument(PairLabel(pair) + ": duplicate name");
        }
      }
    }
  }

  // Broadphase proxies: one per distinct (body, shape bounds) among the pairs' sides. Copies of one
  // Shape (the same id) on one body are looked up by identity first; the key of the shape's values
  // is built once per distinct (body, shape id).
  candidates_mutex_ = std::make_unique<std::mutex>();
  candidates_ = std::make_unique<CandidateWorkspace>();
  struct IdKey {
    const void* id;
    int body;
    bool operator==(const IdKey& o) const { return id == o.id && body == o.body; }
  };
  struct IdHash {
    std::size_t operator()(const IdKey& k) const {
      return std::hash<const void*>()(k.id) ^ (std::hash<int>()(k.body) * 0x9e3779b97f4a7c15ULL);
    }
  };
  std::unordered_map<IdKey, int, IdHash> proxy_of_id;
  std::map<std::vector<double>, int> proxy_of_key;
  const auto proxy_of = [&](int body, const Shape& shape) {
    const auto found = proxy_of_id.find({shape.id(), body});
    if (found != proxy_of_id.end()) return found->second;
    std::vector<double> key{static_cast<double>(body), static_cast<double>(shape.type())};
    const Eigen::Matrix<double, 3, 4> pose = shape.pose().matrix().topRows<3>();
    key.insert(key.end(), pose.data(), pose.data() + 12);
    if (IsPlane(shape)) {
      const Vector3d& n = shape.plane_normal();
      key.insert(key.end(), {n.x(), n.y(), n.z(), shape.plane_offset()});
    } else {
      const Eigen::AlignedBox3d box = shape.LocalAabb();
      key.insert(key.end(), {box.min().x(), box.min().y(), box.min().z(), box.max().x(),
                             box.max().y(), box.max().z(), shape.BoundingRadius()});
    }
    const auto [it, added] = proxy_of_key.emplace(std::move(key), num_proxies());
    if (added) {
      proxy_body_.push_back(body);
      proxy_shape_.push_back(shape);
      proxy_rho_.push_back(
          IsPlane(shape) ? 0.0 : shape.pose().translation().norm() + shape.BoundingRadius());
      const Eigen::AlignedBox3d box = IsPlane(shape)
                                          ? Eigen::AlignedBox3d(Vector3d::Zero(), Vector3d::Zero())
                                          : shape.LocalAabb();
      proxy_aabb_centre_.push_back(box.center());
      proxy_aabb_size_.push_back(box.sizes());
      proxy_bounding_radius_.push_back(IsPlane(shape) ? 0.0 : shape.BoundingRadius());
      proxy_plain_.push_back(shape.pose().matrix() == Eigen::Matrix4d::Identity() &&
                             box.center() == Vector3d::Zero());
    }
    proxy_of_id.emplace(IdKey{shape.id(), body}, it->second);
    return it->second;
  };
  // (lower proxy id · 2³² + higher id, pair) of every pair between proxies, sorted; then kept as
  // the partner (higher id) and pair of each entry, the entries of lower id a starting at
  // proxy_first_entry_[a] (8 bytes per pair).
  std::vector<std::pair<unsigned long long, int>> pairs_of_proxies;
  pairs_of_proxies.reserve(pairs_.size());
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    // A plane carried by a moving body sweeps unboundedly far when it turns, and a sphere at a
    // node moves with the elastic coordinates too: always a candidate.
    if ((IsPlane(pairs_[p].shape_a) && pairs_[p].body_a != engine::kGround) ||
        (IsPlane(pairs_[p].shape_b) && pairs_[p].body_b != engine::kGround) ||
        pairs_[p].node_a != -1 || pairs_[p].node_b != -1) {
      always_pairs_.push_back(static_cast<int>(p));
      continue;
    }
    const int a = proxy_of(pairs_[p].body_a, pairs_[p].shape_a);
    const int b = proxy_of(pairs_[p].body_b, pairs_[p].shape_b);
    const auto lo = static_cast<unsigned long long>(std::min(a, b));
    const auto hi = static_cast<unsigned long long>(std::max(a, b));
    pairs_of_proxies.emplace_back((lo << 32) | hi, static_cast<int>(p));
  }
  if (!std::is_sorted(pairs_of_proxies.begin(), pairs_of_proxies.end())) {
    std::sort(pairs_of_proxies.begin(), pairs_of_proxies.end());
  }
  proxy_first_entry_.assign(proxy_body_.size() + 1, 0);
  entry_partner_.reserve(pairs_of_proxies.size());
  entry_rows_.reserve(pairs_of_proxies.size());
  for (const auto& [key, pair] : pairs_of_proxies) {
    ++proxy_first_entry_[(key >> 32) + 1];
    entry_partner_.push_back(static_cast<int>(key & 0xFFFFFFFFULL));
    const auto pp = static_cast<std::size_t>(pair);
    entry_rows_.emplace_back(pair_first_row_[pp], pair_num_rows_[pp]);
  }
  for (std::size_t a = 0; a < proxy_body_.size(); ++a) {
    proxy_first_entry_[a + 1] += proxy_first_entry_[a];
  }
}

const Shape& DefaultPairPlane() {
  static const Shape plane = Shape::Plane(Vector3d::UnitZ(), 0.0);
  return plane;
}

const Shape& DefaultPairSphere() {
  static const Shape sphere = Shape::Sphere(0.1);
  return sphere;
}

void SpatialContacts::CandidateRows(const VectorXd& q, const VectorXd& speed_bound, double horizon,
                                    double margin, std::vector<int>* rows) const {
  CheckSizes(q, &speed_bound, "CandidateRows");
  if (!(horizon >= 0.0) || !(margin >= 0.0) || !std::isfinite(horizon) || !std::isfinite(margin)) {
    throw std::invalid_argument(
        "SpatialContacts::CandidateRows: horizon and margin must be "
        "finite and >= 0");
  }
  rows->clear();
  const std::lock_guard<std::mutex> lock(*candidates_mutex_);
  CandidateWorkspace& ws = *candidates_;
  ws.boxes.clear();
  ws.box_proxy.clear();
  ws.box_group.clear();
  ws.box_inflation.clear();
  ws.box_origin.clear();
  ws.planes.clear();
  ws.pairs.clear();
  // The grown box of every proxy as Broadphase (FCL 0.7) grows and bounds it: an FCL box of the
  // local AABB's sizes + 2 (m/2 + δ) at the shape's pose; its world AABB is the box translated
  // when the rotation is the identity (Eigen's isIdentity, as fcl::CollisionObject::computeAABB
  // tests it), else the cube around the centre circumscribing the box's bounding ball.
  for (int i = 0; i < num_proxies(); ++i) {
    const auto pi = static_cast<std::size_t>(i);
    const int body = proxy_body_[pi];
    double reach = 0.0;
    if (body != engine::kGround) {
      const int v0 = model_->VOffset(body);
      reach = horizon * (speed_bound.segment<3>(v0).norm() +
                         proxy_rho_[pi] * speed_bound.segment<3>(v0 + 3).norm());
    }
    // Each side grows by m/2 + δ: pairs within m + δ_a + δ_b (broadphase.h).
    const double inflation = 0.5 * margin + reach;
    const Shape& shape = proxy_shape_[pi];
    if (IsPlane(shape)) {  // planes of the proxies are fixed in the world
      ws.planes.emplace_back(i, inflation);
      continue;
    }
    Vector3d centre, origin;  // of the grown box; of the shape (for the planes' test)
    bool unturned = true;
    if (proxy_plain_[pi]) {
      // Identity pose in the body, local AABB centred: the products below reduce to the body's
      // position and rotation exactly (a sphere of the pile).
      if (body != engine::kGround) {
        centre = q.segment<3>(model_->QOffset(body));
        unturned = CachedBodyRotation(*model_, q, body).isIdentity();
      } else {
        centre.setZero();
      }
      origin = centre;
    } else {
      const Isometry3d X_WB = BodyPose(q, body);
      Isometry3d X_box = X_WB * shape.pose();
      X_box.translation() = X_box * proxy_aabb_centre_[pi];
      centre = X_box.translation();
      unturned = X_box.linear().isIdentity();
      origin = X_WB * shape.pose().translation();
    }
    const Vector3d half = 0.5 * (proxy_aabb_size_[pi] + Vector3d::Constant(2.0 * inflation));
    const Vector3d delta = unturned ? half : Vector3d(Vector3d::Constant((-half).norm()));
    ws.boxes.emplace_back(Vector3d(centre - delta), Vector3d(centre + delta));
    ws.box_proxy.push_back(i);
    ws.box_group.push_back(body);
    ws.box_inflation.push_back(inflation);
    ws.box_origin.push_back(origin);
  }
  // Fat boxes grown by a quarter of their size: rebuilt about when a body has moved by that much
  // (a sphere of the pile: r/2) since the last rebuild.
  constexpr double kSlack = 0.25;
  ws.grid.OverlappingPairsCached(ws.boxes, ws.box_group, kSlack, &ws.pairs);
  for (auto& [a, b] : ws.pairs) {
    a = ws.box_proxy[static_cast<std::size_t>(a)];
    b = ws.box_proxy[static_cast<std::size_t>(b)];
    if (b < a) std::swap(a, b);
  }
  // Planes against every box by the shape's bounding ball (Broadphase::CandidatePairs):
  // n·c − d − R ≤ m/2 + δ + m/2 (the plane's own δ is 0).
  for (const auto& [p, plane_inflation] : ws.planes) {
    const Shape& plane = proxy_shape_[static_cast<std::size_t>(p)];
    const Isometry3d& X_p = plane.pose();
    const Vector3d n = X_p.linear() * plane.plane_normal();
    const double offset = plane.plane_offset() + n.dot(X_p.translation());
    for (std::size_t k = 0; k < ws.boxes.size(); ++k) {
      const int i = ws.box_proxy[k];
      const auto pi = static_cast<std::size_t>(i);
      if (proxy_body_[pi] == engine::kGround) continue;  // two static shapes never touch
      if (n.dot(ws.box_origin[k]) - offset - proxy_bounding_radius_[pi] <=
          ws.box_inflation[k] + plane_inflation) {
        ws.pairs.emplace_back(std::min(i, p), std::max(i, p));
      }
    }
  }
  for (int p : always_pairs_) {
    const auto pp = static_cast<std::size_t>(p);
    for (int k = 0; k < pair_num_rows_[pp]; ++k) rows->push_back(pair_first_row_[pp] + k);
  }
  for (const auto& [a, b] : ws.pairs) {
    // The declared pairs of proxies (a, b), a < b: the entries of a with partner b. When a's
    // partners are consecutive ids (every pair declared, as in a pile), b's first entry is at
    // first + b − partner(first); otherwise a binary search.
    const std::size_t first = proxy_first_entry_[static_cast<std::size_t>(a)];
    const std::size_t last = proxy_first_entry_[static_cast<std::size_t>(a) + 1];
    if (first == last) continue;
    std::size_t k = first + static_cast<std::size_t>(b - entry_partner_[first]);
    if (b < entry_partner_[first] || k >= last || entry_partner_[k] != b ||
        (k > first && entry_partner_[k - 1] == b)) {
      k = static_cast<std::size_t>(
          std::lower_bound(entry_partner_.begin() + static_cast<std::ptrdiff_t>(first),
                           entry_partner_.begin() + static_cast<std::ptrdiff_t>(last), b) -
          entry_partner_.begin());
    }
    for (; k < last && entry_partner_[k] == b; ++k) {
      const auto [first_row, num_rows] = entry_rows_[k];
      for (int r = 0; r < num_rows; ++r) rows->push_back(first_row + r);
    }
  }
  std::sort(rows->begin(), rows->end());
}

void SpatialContacts::CheckSizes(const VectorXd& q, const VectorXd* v, const char* where) const {
  if (q.size() != model_->num_q()) {
    throw std::invalid_argument(std::string("SpatialContacts::") + where + ": q has " +
                                std::to_string(q.size()) + " entries, expected " +
                                std::to_string(model_->num_q()));
  }
  if (v != nullptr && v->size() != model_->num_v()) {
    throw std::invalid_argument(std::string("SpatialContacts::") + where + ": v has " +
                                std::to_string(v->size()) + " entries, expected " +
                                std::to_string(model_->num_v()));
  }
}

Isometry3d SpatialContacts::BodyPose(const VectorXd& q, int body) const {
  Isometry3d X = Isometry3d::Identity();
  if (body == engine::kGround) return X;
  X.linear() = CachedBodyRotation(*model_, q, body);
  X.translation() = q.segment<3>(model_->QOffset(body));
  return X;
}

SpatialContacts::NodeState SpatialContacts::Node(const VectorXd& q, const VectorXd* v, int pair,
                                                 int side) const {
  const SpatialContactPair& pr = pairs_[static_cast<std::size_t>(pair)];
  const int body = side == 0 ? pr.body_a : pr.body_b;
  const PairNodes& nodes = pair_nodes_[static_cast<std::size_t>(pair)];
  const engine::SpatialFlexibleBeam& beam = *model_->beam(body);
  const engine::SpatialBeamPoint* node_point = side == 0 ? &nodes.a : &nodes.b;
  engine::SpatialBeamPoint nearest;  // along the centreline: the point X*
  if (AlongCentreline(pair, side)) {
    nearest = beam.PointAt(CentrelineX(q, pair, side));
    node_point = &nearest;
  }
  const engine::SpatialBeamPoint& point = *node_point;
  const int m = beam.num_modes();
  const int q0 = model_->QOffset(body), v0 = model_->VOffset(body);
  const engine::SpatialBeamMotion motion =
      v != nullptr ? beam.Motion(point, q.segment(q0 + 7, m), v->segment(v0 + 6, m))
                   : beam.Motion(point, q.segment(q0 + 7, m), VectorXd());
  const Matrix3d& R = CachedBodyRotation(*model_, q, body);
  NodeState s;
  s.point = q.segment<3>(q0) + R * motion.u;
  s.RB = R * motion.B;
  s.RE = R * beam.Section(point, q.segment(q0 + 7, m), VectorXd()).E;
  if (v != nullptr) {
    const Vector3d omega = v->segment<3>(v0 + 3);
    s.e_v = R * motion.u_dot;
    s.e_a = R * (2.0 * omega.cross(motion.u_dot) - Vector3d(motion.hdot, 0.0, 0.0));
  }
  return s;
}

bool SpatialContacts::AtNode(int pair, int side) const {
  const SpatialContactPair& p = pairs_[static_cast<std::size_t>(pair)];
  return (side == 0 ? p.node_a : p.node_b) != -1;
}

bool SpatialContacts::AlongCentreline(int pair, int side) const {
  const SpatialContactPair& p = pairs_[static_cast<std::size_t>(pair)];
  return (side == 0 ? p.node_a : p.node_b) == kAlongCentreline;
}

namespace {

// The world normal and offset of a plane shape on `body` (n·x = offset on the plane).
std::pair<Vector3d, double> WorldPlane(const engine::SpatialModel& model, const VectorXd& q,
                                       int body, const Shape& plane) {
  Vector3d n = plane.plane_normal_in_body();
  double offset = plane.plane_offset_in_body();
  if (body != engine::kGround) {
    n = CachedBodyRotation(model, q, body) * n;
    offset += n.dot(q.segment<3>(model.QOffset(body)));
  }
  return {n, offset};
}

}  // namespace

double SpatialContacts::CentrelineX(const VectorXd& q, int pair, int side) const {
  const SpatialContactPair& p = pairs_[static_cast<std::size_t>(pair)];
  const int body = side == 0 ? p.body_a : p.body_b;
  const int other_body = side == 0 ? p.body_b : p.body_a;
  const Shape& partner = side == 0 ? p.shape_b : p.shape_a;
  const engine::SpatialFlexibleBeam& beam = *model_->beam(body);
  const int q0 = model_->QOffset(body);
  const Matrix3d& R = CachedBodyRotation(*model_, q, body);
  const auto eta = q.segment(q0 + 7, beam.num_modes());
  if (IsPlane(partner)) {
    return beam.LowestX(R.transpose() * WorldPlane(*model_, q, other_body, partner).first, eta);
  }
  const Vector3d c = SideOrigin(q, pair, 1 - side);  // the partner sphere's centre
  return beam.NearestX(R.transpose() * (c - q.segment<3>(q0)), eta);
}

double SpatialContacts::CentrelineGamma(const VectorXd& q, const VectorXd& v, int pair,
                                        int side) const {
  const SpatialContactPair& p = pairs_[static_cast<std::size_t>(pair)];
  const int body = side == 0 ? p.body_a : p.body_b;
  const int other_body = side == 0 ? p.body_b : p.body_a;
  const Shape& partner = side == 0 ? p.shape_b : p.shape_a;
  const engine::SpatialFlexibleBeam& beam = *model_->beam(body);
  const double X = CentrelineX(q, pair, side);
  if (!(X > 0.0 && X < beam.length())) return 0.0;  // an end: X* fixed
  const int m = beam.num_modes();
  const int q0 = model_->QOffset(body), v0 = model_->VOffset(body);
  const Matrix3d& R = CachedBodyRotation(*model_, q, body);
  const engine::SpatialBeamPoint point = beam.PointAt(X);
  const engine::SpatialBeamCurve curve = beam.Curve(point, q.segment(q0 + 7, m));
  const BodyMotion own = SideMotion(q, v, pair, side);
  const BodyMotion other = SideMotion(q, v, pair, 1 - side);
  const Vector3d p_x = R * curve.u_x, p_xx = R * curve.u_xx;
  const Vector3d p_x_dot = own.omega.cross(p_x) + R * (curve.B_x * v.segment(v0 + 6, m));
  double f_xx = 0.0, f_x_dot = 0.0;
  if (IsPlane(partner)) {
    const Vector3d n = WorldPlane(*model_, q, other_body, partner).first;
    f_xx = n.dot(p_xx);
    f_x_dot = n.dot(p_x_dot) + other.omega.cross(n).dot(p_x);
  } else {
    const Vector3d point_w = Node(q, nullptr, pair, side).point;
    const Vector3d c = SideOrigin(q, pair, 1 - side);
    const Vector3d d = point_w - c;
    const double len = d.norm();
    if (!(len > 0.0)) return 0.0;  // the partner's centre on the centreline
    const Vector3d n = d / len;
    const Vector3d d_dot = own.Velocity(point_w) - other.Velocity(c);
    const double n_px = n.dot(p_x);
    f_xx = n.dot(p_xx) + (p_x.squaredNorm() - n_px * n_px) / len;
    f_x_dot = n.dot(p_x_dot) + (d_dot.dot(p_x) - n.dot(d_dot) * n_px) / len;
  }
  if (!(f_xx > 0.0)) return 0.0;  // a line contact: X* is not a function of q
  return -f_x_dot * f_x_dot / f_xx;
}

Isometry3d SpatialContacts::SidePose(const VectorXd& q, int pair, int side) const {
  const SpatialContactPair& p = pairs_[static_cast<std::size_t>(pair)];
  Isometry3d X = BodyPose(q, side == 0 ? p.body_a : p.body_b);
  if (AtNode(pair, side)) X.translation() = Node(q, nullptr, pair, side).point;
  return X;
}

Vector3d SpatialContacts::SideOrigin(const VectorXd& q, int pair, int side) const {
  if (AtNode(pair, side)) return Node(q, nullptr, pair, side).point;
  const SpatialContactPair& p = pairs_[static_cast<std::size_t>(pair)];
  return side == 0 ? ShapeOrigin(*model_, q, p.body_a, p.shape_a)
                   : ShapeOrigin(*model_, q, p.body_b, p.shape_b);
}

ContactBodyMotion SpatialContacts::SideMotion(const VectorXd& q, const VectorXd& v, int pair,
                                              int side) const {
  const SpatialContactPair& p = pairs_[static_cast<std::size_t>(pair)];
  BodyMotion m = MotionOf(*model_, q, v, side == 0 ? p.body_a : p.body_b);
  if (AtNode(pair, side)) {
    const NodeState s = Node(q, &v, pair, side);
    m.elastic = true;
    m.e_v = s.e_v;
    m.e_a = s.e_a;
  }
  return m;
}

ContactSite SpatialContacts::Site(const VectorXd& q, int row) const {
  if (row < 0 || row >= num_rows()) {
    throw std::out_of_range("SpatialContacts::Site: row " + std::to_string(row) + " of " +
                            std::to_string(num_rows()));
  }
  CheckSizes(q, nullptr, "Site");
  const PairDistance d = Geometry(q, row).d;
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  ContactSite site;
  site.point = 0.5 * (d.point_a + d.point_b);
  site.normal = d.normal;
  site.body_a = pair.body_a;
  site.body_b = pair.body_b;
  site.column_a = pair.body_a == engine::kGround ? -1 : model_->VOffset(pair.body_a);
  site.column_b = pair.body_b == engine::kGround ? -1 : model_->VOffset(pair.body_b);
  return site;
}

SpatialContacts::RowGeometry SpatialContacts::Geometry(const VectorXd& q, int row) const {
  if (row >= num_normal_rows()) return TangentGeometry(q, row);
  const auto p = static_cast<std::size_t>(RowPair(row));
  const SpatialContactPair& pair = pairs_[p];
  const auto body_origin = [&](int body) {
    return body == engine::kGround ? Vector3d(Vector3d::Zero())
                                   : Vector3d(q.segment<3>(model_->QOffset(body)));
  };
  RowGeometry out;
  PairDistance& d = out.d;
  d.analytic = true;
  switch (row_path_[static_cast<std::size_t>(row)]) {
    case RowPath::kSphereSphere: {
      // geometry3d.cc (Inflated): n = (c_b − c_a)/‖c_b − c_a‖ (e_z if the centres coincide).
      const Vector3d c_a = SideOrigin(q, static_cast<int>(p), 0);
      const Vector3d c_b = SideOrigin(q, static_cast<int>(p), 1);
      const Vector3d delta = c_b - c_a;
      const double dist = delta.norm();
      d.normal = dist > 0.0 ? Vector3d(delta / dist) : Vector3d(Vector3d::UnitZ());
      d.gap = dist - pair.shape_a.radius() - pair.shape_b.radius();
      d.point_a = c_a + pair.shape_a.radius() * d.normal;
      d.point_b = c_b - pair.shape_b.radius() * d.normal;
      out.lever_a = c_a - body_origin(pair.body_a);
      out.lever_b = c_b - body_origin(pair.body_b);
      return out;
    }
    case RowPath::kPlaneSphere:
    case RowPath::kSpherePlane: {
      // The plane's half-space in its body frame (Shape::plane_normal_in_body) carried to the
      // world: n = R_P n_B, offset = d_B + n·r_P; g = n·c − offset − ρ.
      const bool plane_is_a = row_path_[static_cast<std::size_t>(row)] == RowPath::kPlaneSphere;
      const int plane_body = plane_is_a ? pair.body_a : pair.body_b;
      const int sphere_body = plane_is_a ? pair.body_b : pair.body_a;
      const Shape& plane = plane_is_a ? pair.shape_a : pair.shape_b;
      const Shape& sphere = plane_is_a ? pair.shape_b : pair.shape_a;
      Vector3d n = plane.plane_normal_in_body();
      double offset = plane.plane_offset_in_body();
      if (plane_body != engine::kGround) {
        n = CachedBodyRotation(*model_, q, plane_body) * n;
        offset += n.dot(q.segment<3>(model_->QOffset(plane_body)));
      }
      const Vector3d c = SideOrigin(q, static_cast<int>(p), plane_is_a ? 1 : 0);
      const double height = n.dot(c) - offset;  // of the centre above the plane
      const Vector3d on_plane = c - height * n, on_sphere = c - sphere.radius() * n;
      const Vector3d lever_plane = on_plane - body_origin(plane_body);
      const Vector3d lever_sphere = c - body_origin(sphere_body);
      d.gap = height - sphere.radius();
      if (plane_is_a) {
        d.normal = n;
        d.point_a = on_plane;
        d.point_b = on_sphere;
        out.lever_a = lever_plane;
        out.lever_b = lever_sphere;
      } else {
        d.normal = -n;
        d.point_a = on_sphere;
        d.point_b = on_plane;
        out.lever_a = lever_sphere;
        out.lever_b = lever_plane;
      }
      return out;
    }
    case RowPath::kManifold:
      break;
  }
  d = manifolds_[static_cast<std::size_t>(pair_manifold_[p])].Evaluate(
      RowFeature(row), SidePose(q, static_cast<int>(p), 0), SidePose(q, static_cast<int>(p), 1),
      &out.turn);
  out.lever_a = d.point_a - body_origin(pair.body_a);
  out.lever_b = d.point_b - body_origin(pair.body_b);
  if (!out.turn.w.isZero(0.0)) {
    out.turn_lever_a = out.turn.point - body_origin(pair.body_a);
    out.turn_lever_b = out.turn.point - body_origin(pair.body_b);
  }
  return out;
}

SpatialContacts::FrameReference SpatialContacts::FrameReferenceOf(int normal_row) const {
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(normal_row))];
  const ShapeType ta = pair.shape_a.type(), tb = pair.shape_b.type();
  FrameReference ref;
  // The surface side whose normal is fixed in its body on a face: 0 (A), 1 (B) or none (−1).
  int side = -1;
  if (ta == ShapeType::kPlane || tb == ShapeType::kPlane) {
    side = ta == ShapeType::kPlane ? 0 : 1;
  } else if (ta == ShapeType::kTriangleMesh || tb == ShapeType::kTriangleMesh) {
    side = ta == ShapeType::kTriangleMesh ? 0 : 1;
  } else {
    switch (Feature(normal_row).kind) {
      case FeatureKind::kBoxCornerOfB:
        side = 0;
        break;
      case FeatureKind::kBoxCornerOfA:
        side = 1;
        break;
      case FeatureKind::kBoxEndBall:
      case FeatureKind::kSurfaceSupport:
      case FeatureKind::kSurfaceRim:
        side = ta == ShapeType::kBox ? 0 : 1;
        break;
      default:
        break;
    }
  }
  if (side >= 0) {
    const Shape& surface = side == 0 ? pair.shape_a : pair.shape_b;
    const double sign = side == 0 ? 1.0 : -1.0;  // n points away from side A
    ref.body = side == 0 ? pair.body_a : pair.body_b;
    ref.axis = surface.type() == ShapeType::kPlane
                   ? Vector3d(sign * surface.plane_normal_in_body())
                   : Vector3d(sign * (surface.pose().linear() * kFrameAxis));
  } else {
    ref.axis = kFrameAxis;
  }
  // e1 ⊥ a: a × (the coordinate axis least aligned with a), normalized.
  Eigen::Index least = 0;
  ref.axis.cwiseAbs().minCoeff(&least);
  ref.e1 = ref.axis.cross(Vector3d::Unit(least)).normalized();
  return ref;
}

void SpatialContacts::WorldFrameReference(const VectorXd& q, int normal_row, Vector3d* axis,
                                          Vector3d* e1) const {
  const FrameReference ref = FrameReferenceOf(normal_row);
  if (ref.body == engine::kGround) {
    *axis = ref.axis;
    *e1 = ref.e1;
    return;
  }
  const Matrix3d& R = CachedBodyRotation(*model_, q, ref.body);
  *axis = R * ref.axis;
  *e1 = R * ref.e1;
}

std::pair<Vector3d, Vector3d> SpatialContacts::Tangents(const VectorXd& q, int row) const {
  CheckSizes(q, nullptr, "Tangents");
  const int normal = NormalRowOf(row);
  Vector3d axis, e1;
  WorldFrameReference(q, normal, &axis, &e1);
  return TangentBasis(Geometry(q, normal).d.normal, axis, e1);
}

SpatialContacts::RowGeometry SpatialContacts::TangentGeometry(const VectorXd& q, int row) const {
  const int normal = NormalRowOf(row);
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(normal))];
  RowGeometry out = Geometry(q, normal);
  Vector3d axis, e1;
  WorldFrameReference(q, normal, &axis, &e1);
  const auto [t1, t2] = TangentBasis(out.d.normal, axis, e1);
  const int k = FrameAxis(row);
  out.d.normal = k == 0 ? t1 : k == 1 ? t2 : out.d.normal;
  out.d.gap = 0.0;
  out.angular = row >= first_resistance_row();
  const auto lever = [&](int body, const Vector3d& x) {
    return body == engine::kGround ? x : Vector3d(x - q.segment<3>(model_->QOffset(body)));
  };
  out.lever_a = lever(pair.body_a, out.d.point_a);
  out.lever_b = lever(pair.body_b, out.d.point_b);
  out.turn = NormalTurn{};
  return out;
}

int SpatialContacts::FrameAxis(int row) const {
  if (row < first_resistance_row()) return (row - num_normal_rows()) % 2;
  return resistance_axis_[static_cast<std::size_t>(row - first_resistance_row())];
}

double SpatialContacts::Gap(const VectorXd& q, int row) const {
  if (row >= num_normal_rows()) return 0.0;  // velocity-level row: no position function
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  switch (row_path_[static_cast<std::size_t>(row)]) {
    case RowPath::kSphereSphere:
      return (SideOrigin(q, RowPair(row), 1) - SideOrigin(q, RowPair(row), 0)).norm() -
             pair.shape_a.radius() - pair.shape_b.radius();
    case RowPath::kPlaneSphere:
    case RowPath::kSpherePlane:
    case RowPath::kManifold:
      break;
  }
  return Geometry(q, row).d.gap;
}

PairDistance SpatialContacts::Evaluate(const VectorXd& q, int row) const {
  return Geometry(q, NormalRowOf(row)).d;
}

ContactFeature SpatialContacts::Feature(int row) const {
  const int m = pair_manifold_[static_cast<std::size_t>(RowPair(row))];
  if (m < 0) return {FeatureKind::kSignedDistance, 0};
  return manifolds_[static_cast<std::size_t>(m)].feature(RowFeature(row));
}

bool SpatialContacts::HasAnalyticGamma(int row) const {
  return FormOf(pairs_[static_cast<std::size_t>(RowPair(row))], Feature(row)) !=
         GammaForm::kDifference;
}

void SpatialContacts::Values(double t, const VectorXd& q, std::span<const int> rows,
                             Eigen::Ref<VectorXd> g) const {
  (void)t;
  CheckSizes(q, nullptr, "Values");
  for (std::size_t i = 0; i < rows.size(); ++i) g[static_cast<Eigen::Index>(i)] = Gap(q, rows[i]);
}

// The blocks below are a side's 6 entries on (ṙ, ω) at VOffset(body), rigid only: a contact on a
// flexible body would add entries on its modal velocities (mode shapes at the contact point).
void SpatialContacts::SideBlock(const VectorXd& q, int body, const Vector3d& lever,
                                const Vector3d& n, double sign, double* out) const {
  for (int j = 0; j < 3; ++j) out[j] += sign * n[j];
  // A zero lever (a sphere centred on its body) has no rotational part: R is not needed.
  if (lever.x() == 0.0 && lever.y() == 0.0 && lever.z() == 0.0) return;
  const Vector3d rot = CachedBodyRotation(*model_, q, body).transpose() * lever.cross(n);
  for (int j = 0; j < 3; ++j) out[3 + j] += sign * rot[j];
}

void SpatialContacts::RowSideBlock(const VectorXd& q, const RowGeometry& geo, int body, double sign,
                                   double* out) const {
  if (geo.angular) {  // ±(0, Rᵀu): ġ_R = u·(ω_B^w − ω_A^w) (header, "Resistance rows")
    const Vector3d rot = CachedBodyRotation(*model_, q, body).transpose() * geo.d.normal;
    for (int j = 0; j < 3; ++j) out[3 + j] += sign * rot[j];
    return;
  }
  const bool b_side = sign > 0.0;
  SideBlock(q, body, b_side ? geo.lever_b : geo.lever_a, geo.d.normal, sign, out);
  // ġ = n·(v_B(p_b) − v_A(p_a)) + w·(v_B(c) − v_A(c)) (contact_manifold.h, NormalTurn).
  if (!geo.turn.w.isZero(0.0)) {
    SideBlock(q, body, b_side ? geo.turn_lever_b : geo.turn_lever_a, geo.turn.w, sign, out);
  }
}

void SpatialContacts::JacobianRow(
    const VectorXd& q, int row, Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> out) const {
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  const RowGeometry geo = Geometry(q, row);
  const auto add = [&](int body, double sign) {
    if (body == engine::kGround) return;
    double block[6] = {0, 0, 0, 0, 0, 0};
    RowSideBlock(q, geo, body, sign, block);
    const int v0 = model_->VOffset(body);
    for (int j = 0; j < 6; ++j) out[v0 + j] += block[j];
  };
  add(pair.body_a, -1.0);
  add(pair.body_b, 1.0);
  if (!has_nodes_) return;
  // A side at a node: ±(R B)ᵀ (n + w) on the body's η̇ columns (header, "Contacts at nodes"; the
  // normal-turn point c of a support row is a point of the same sphere). The sphere turns with
  // the node's section at ω_s^w = R E η̇: a tangential row's material point x gains
  // t·(ω_s^w × (x − p)), the columns ±(R E)ᵀ ((x − p) × t), and a resistance row's u·ω_s^w,
  // ±(R E)ᵀ u. A normal row gains nothing (the gap of a sphere does not depend on its turn).
  const int p = RowPair(row);
  const bool tangential = row >= num_normal_rows();
  for (int side = 0; side < 2; ++side) {
    if (!AtNode(p, side)) continue;
    const int body = side == 0 ? pair.body_a : pair.body_b;
    const double sign = side == 0 ? -1.0 : 1.0;
    const NodeState node = Node(q, nullptr, p, side);
    auto columns = out.segment(model_->VOffset(body) + 6, node.RB.cols());
    if (geo.angular) {
      columns += sign * (node.RE.transpose() * geo.d.normal).transpose();
      continue;
    }
    Vector3d direction = geo.d.normal;
    if (!geo.turn.w.isZero(0.0)) direction += geo.turn.w;
    columns += sign * (node.RB.transpose() * direction).transpose();
    if (tangential) {
      const Vector3d x =
          q.segment<3>(model_->QOffset(body)) + (side == 0 ? geo.lever_a : geo.lever_b);
      columns += sign * (node.RE.transpose() * (x - node.point).cross(geo.d.normal)).transpose();
    }
  }
}

bool SpatialContacts::AppendJacobianBlocks(double t, const VectorXd& q, int local_row,
                                           engine::BlockSparseRows* G) const {
  (void)t;
  if (G->block_size != 6 || has_nodes_) return false;  // nodes: 6 + m columns on their body
  CheckSizes(q, nullptr, "AppendJacobianBlocks");
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(local_row))];
  const RowGeometry geo = Geometry(q, local_row);
  // Same entries as JacobianRow: −n, −Rᵀ(ℓ_a × n) on body a; +n, Rᵀ(ℓ_b × n) on body b.
  const auto [body, lever, sign] = SidesInBlockOrder(pair, geo.lever_a, geo.lever_b);
  double* last = nullptr;
  for (int k = 0; k < 2; ++k) {
    if (body[k] == engine::kGround) continue;
    // Both sides on one body (never a pair of the default filter): one block holding the sum.
    double* out = (k == 1 && body[1] == body[0]) ? last : G->AddBlock(body[k]);
    RowSideBlock(q, geo, body[k], sign[k], out);
    last = out;
  }
  G->EndRow();
  return true;
}

bool SpatialContacts::ValuesAndRates(double t, const VectorXd& q, const VectorXd& v,
                                     std::span<const int> rows, Eigen::Ref<VectorXd> g,
                                     Eigen::Ref<VectorXd> g_dot) const {
  (void)t;
  if (has_nodes_) return false;  // the caller's dense G v holds the elastic columns
  CheckSizes(q, &v, "ValuesAndRates");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(rows[i]))];
    const RowGeometry geo = Geometry(q, rows[i]);
    // The blocks of AppendJacobianBlocks in the same order (ascending body, one block when both
    // sides are on one body) and the same running sum as BlockSparseRows::Multiply, so that ġ
    // equals engine::ConstraintRate's bit for bit.
    const auto [body, lever, sign] = SidesInBlockOrder(pair, geo.lever_a, geo.lever_b);
    double rate = 0.0;
    for (int k = 0; k < 2; ++k) {
      if (body[k] == engine::kGround) continue;
      double block[6] = {0, 0, 0, 0, 0, 0};
      RowSideBlock(q, geo, body[k], sign[k], block);
      if (k == 0 && body[1] == body[0]) {
        RowSideBlock(q, geo, body[1], sign[1], block);
        ++k;
      }
      const double* vb = v.data() + model_->VOffset(body[k]);
      for (int j = 0; j < 6; ++j) rate += block[j] * vb[j];
    }
    g[static_cast<Eigen::Index>(i)] = geo.d.gap;
    // + ∂g/∂t = 0 (scleronomic), added like engine::ConstraintRate does (a −0 reads +0).
    g_dot[static_cast<Eigen::Index>(i)] = rate + 0.0;
  }
  return true;
}

void SpatialContacts::Jacobian(double t, const VectorXd& q, std::span<const int> rows,
                               Eigen::Ref<Eigen::MatrixXd> G) const {
  (void)t;
  CheckSizes(q, nullptr, "Jacobian");
  G.setZero();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    JacobianRow(q, rows[i], G.row(static_cast<Eigen::Index>(i)));
  }
}

namespace {

// g̈ of the point–edge distance g = ‖u‖, u = d − (d·e) e (d from a point of the edge line to the
// other material point, world frame), for an edge direction e fixed in a body turning at ω
// (world frame): ė = ω × e, ë = ω × ė,
//   u̇ = ḋ − (ḋ·e + d·ė) e − (d·e) ė,  ü = d̈ − (d̈·e + 2 ḋ·ė + d·ë) e − 2 (ḋ·e + d·ė) ė − (d·e) ë,
//   g̈ = m·ü + (‖u̇‖² − (m·u̇)²)/‖u‖,  m = u/‖u‖.
// NaN when u = 0 (the point on the edge line, where g is not differentiable).
double EdgeGapSecondDerivative(const Vector3d& d, const Vector3d& d_dot, const Vector3d& d_ddot,
                               const Vector3d& e, const Vector3d& omega) {
  const Vector3d e_dot = omega.cross(e), e_ddot = omega.cross(e_dot);
  const double de = d.dot(e), de_dot = d_dot.dot(e) + d.dot(e_dot);
  const Vector3d u = d - de * e;
  const Vector3d u_dot = d_dot - de_dot * e - de * e_dot;
  const Vector3d u_ddot = d_ddot - (d_ddot.dot(e) + 2.0 * d_dot.dot(e_dot) + d.dot(e_ddot)) * e -
                          2.0 * de_dot * e_dot - de * e_ddot;
  const double len = u.norm();
  if (!(len > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  const Vector3d m = u / len;
  const double m_dot = m.dot(u_dot);
  return m.dot(u_ddot) + (u_dot.squaredNorm() - m_dot * m_dot) / len;
}

}  // namespace

double SpatialContacts::AnalyticGamma(const VectorXd& q, const VectorXd& v, int row) const {
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  PairDistance d = Evaluate(q, row);
  const ContactFeature feature = Feature(row);
  if (feature.kind == FeatureKind::kMeshEndBall || feature.kind == FeatureKind::kBoxEndBall) {
    // The capsule side's material point is the end ball's centre c = witness + ρ n (towards the
    // surface): the forms below hold for g + ρ with that point.
    const bool capsule_is_b = pair.shape_b.type() == ShapeType::kCapsule;
    const double rho = (capsule_is_b ? pair.shape_b : pair.shape_a).radius();
    if (capsule_is_b) {
      d.point_b += rho * d.normal;
    } else {
      d.point_a -= rho * d.normal;
    }
  }
  const BodyMotion a = SideMotion(q, v, RowPair(row), 0), b = SideMotion(q, v, RowPair(row), 1);
  const GammaForm form = FormOf(pair, Feature(row));
  // wd: relative position of the two material witness points and its v̇-free derivatives.
  const Vector3d wd = d.point_b - d.point_a;
  const Vector3d wd_dot = b.Velocity(d.point_b) - a.Velocity(d.point_a);
  const Vector3d wd_ddot = b.Acceleration(d.point_b) - a.Acceleration(d.point_a);
  if (form == GammaForm::kMeshSphere) {
    // By the Voronoi region of the closest point x (fixed in the mesh body M) on the closest
    // triangle, with d = c − x (c the sphere's centre, fixed in its body S):
    //   face:   g = n_f·d − ρ, n_f the face normal (fixed in M): the plane–point form;
    //   edge:   g = s‖u‖ − ρ, u = d − (d·e) e, e the edge direction (fixed in M): the edge form;
    //   vertex: g = s‖d‖ − ρ: the point–point form (s = ±1, MeshPointSide).
    const bool mesh_is_a = pair.shape_a.type() == ShapeType::kTriangleMesh;
    const Shape& mesh = mesh_is_a ? pair.shape_a : pair.shape_b;
    const int mesh_body = mesh_is_a ? pair.body_a : pair.body_b;
    const BodyMotion& mm = mesh_is_a ? a : b;
    const BodyMotion& sm = mesh_is_a ? b : a;
    const Isometry3d X_m = BodyPose(q, mesh_body) * mesh.pose();
    // c: the sphere's centre, or the vertex or end-ball centre of a kMeshVertex / kMeshEndBall
    // row (the witness point on that side, shifted above for an end ball). The signed form
    // (geometry3d.h, MeshPointDistance): g = s·(distance) − ρ with s = MeshPointSide; over a
    // face g = n_f·d − ρ whatever the sign.
    const Vector3d c = feature.kind == FeatureKind::kSignedDistance
                           ? SideOrigin(q, RowPair(row), mesh_is_a ? 1 : 0)
                           : Vector3d(mesh_is_a ? d.point_b : d.point_a);
    const MeshRegion region = MeshRegionOf(mesh, X_m, c);
    const MeshClosest& closest = region.closest;
    const Vector3d& x = region.x;
    const Vector3d dist = c - x;
    const double len = dist.norm();
    const Vector3d d_dot = sm.Velocity(c) - mm.Velocity(x);
    const Vector3d d_ddot = sm.Acceleration(c) - mm.Acceleration(x);
    // Face region, or within kMeshNearFeature of an edge or vertex: g = N·d − ρ with N the face
    // normal or the pseudo-normal (fixed in M), the plane–point form (MeshPointDistance).
    const bool plane_form = region.plane_form;
    const Vector3d n_f = plane_form
                             ? Vector3d(X_m.linear() * MeshPseudoNormal(mesh.mesh(), closest))
                             : Vector3d(Vector3d::Zero());
    if (plane_form) {
      const Vector3d n_dot = mm.omega.cross(n_f);
      return mm.omega.cross(n_dot).dot(dist) + 2.0 * n_dot.dot(d_dot) + n_f.dot(d_ddot);
    }
    const double side = MeshPointSide(mesh.mesh(), closest, X_m.inverse() * c);
    if (closest.feature.kind == TriangleFeature::kVertex) {
      const Vector3d n = dist / len;
      const double nd = n.dot(d_dot);
      return side * (n.dot(d_ddot) + (d_dot.squaredNorm() - nd * nd) / len);
    }
    // The edge form (as for a box corner against a box edge, below) with u = d − (d·e) e.
    const double g_ddot = EdgeGapSecondDerivative(dist, d_dot, d_ddot, region.edge, mm.omega);
    return std::isfinite(g_ddot) ? side * g_ddot : DifferenceGamma(q, v, row);
  }
  if (form == GammaForm::kBoxCorner) {
    // The corner lies in the face, edge or vertex Voronoi region of the other box K according
    // to how many of its box-frame coordinates exceed the half sizes (inside: nearest face).
    const bool box_is_a = feature.kind == FeatureKind::kBoxEndBall
                              ? pair.shape_a.type() == ShapeType::kBox
                              : feature.kind == FeatureKind::kBoxCornerOfB;
    const Shape& box = box_is_a ? pair.shape_a : pair.shape_b;
    const Isometry3d X_k = BodyPose(q, box_is_a ? pair.body_a : pair.body_b) * box.pose();
    const Vector3d corner = box_is_a ? d.point_b : d.point_a;
    const auto [outside, inside_axis] = BoxRegionOf(X_k.inverse() * corner, box.half_size());
    const Vector3d omega_k = box_is_a ? a.omega : b.omega;
    // Touching an edge or a vertex exactly (gap 0 there): the normal is not defined.
    if (outside >= 2 && !(wd.norm() > 0.0)) return DifferenceGamma(q, v, row);
    if (outside <= 1) {
      // Vertex–face: g = n·(x_b − x_a) with n fixed in K (the plane–point form, ρ = 0).
      const Vector3d n_dot = omega_k.cross(d.normal);
      return omega_k.cross(n_dot).dot(wd) + 2.0 * n_dot.dot(wd_dot) + d.normal.dot(wd_ddot);
    }
    if (outside == 3) {
      // Vertex–vertex: g = ‖x_b − x_a‖, two material points (the point–point form).
      const double nd = d.normal.dot(wd_dot);
      return d.normal.dot(wd_ddot) + (wd_dot.squaredNorm() - nd * nd) / wd.norm();
    }
    // Vertex–edge: g = ‖u‖, u = d − (d·e) e with the edge direction e fixed in K:
    //   u̇ = ḋ − (ḋ·e + d·ė) e − (d·e) ė,
    //   ü = d̈ − (d̈·e + 2 ḋ·ė + d·ë) e − 2 (ḋ·e + d·ė) ė − (d·e) ë,
    //   g̈ = m·ü + (‖u̇‖² − (m·u̇)²)/‖u‖,  m = u/‖u‖ (= n),  ė = ω_K × e, ë = ω_K × ė.
    const Vector3d e = X_k.linear().col(inside_axis);
    return EdgeGapSecondDerivative(wd, wd_dot, wd_ddot, e, omega_k);
  }
  if (form == GammaForm::kPlaneRim) {
    // g = n·(x_b − x_a) − r s with x the rim circle's centre c on the cylinder side and a point
    // of the plane on the other, s = √(1 − μ²), μ = n·e (e the cylinder axis, fixed in C):
    //   ṡ = −μ μ̇/s,  s̈ = −μ̇²/s³ − μ μ̈/s,  μ̇ = ṅ·e + n·ė,  μ̈ = n̈·e + 2 ṅ·ė + n·ë,
    //   γ = [plane–point γ of c] − r s̈.
    const bool plane_is_a = IsPlane(pair.shape_a);
    const Shape& cylinder = plane_is_a ? pair.shape_b : pair.shape_a;
    const Isometry3d X_c = BodyPose(q, plane_is_a ? pair.body_b : pair.body_a) * cylinder.pose();
    const double end = Feature(row).index == 0 ? -0.5 : 0.5;
    const Vector3d c = X_c * Vector3d(0.0, 0.0, end * cylinder.length());
    const Vector3d e = X_c.linear().col(2);
    const Vector3d& n = d.normal;
    const double mu = n.dot(e);
    const double s = std::sqrt(std::max(0.0, 1.0 - mu * mu));
    // n ∥ e (standing on an end): the gap is not differentiable there (contact_manifold.h).
    if (!(s > 1e-8)) return DifferenceGamma(q, v, row);
    const BodyMotion& p_side = plane_is_a ? a : b;
    const BodyMotion& c_side = plane_is_a ? b : a;
    const Vector3d x_p = plane_is_a ? d.point_a : d.point_b;
    const double sign = plane_is_a ? 1.0 : -1.0;  // x_b − x_a = sign (c − x_p)
    const Vector3d rel = sign * (c - x_p);
    const Vector3d rel_dot = sign * (c_side.Velocity(c) - p_side.Velocity(x_p));
    const Vector3d rel_ddot = sign * (c_side.Acceleration(c) - p_side.Acceleration(x_p));
    const Vector3d n_dot = p_side.omega.cross(n), n_ddot = p_side.omega.cross(n_dot);
    const Vector3d e_dot = c_side.omega.cross(e), e_ddot = c_side.omega.cross(e_dot);
    const double mu_dot = n_dot.dot(e) + n.dot(e_dot);
    const double mu_ddot = n_ddot.dot(e) + 2.0 * n_dot.dot(e_dot) + n.dot(e_ddot);
    const double s_ddot = -mu_dot * mu_dot / (s * s * s) - mu * mu_ddot / s;
    return n_ddot.dot(rel) + 2.0 * n_dot.dot(rel_dot) + n.dot(rel_ddot) -
           cylinder.radius() * s_ddot;
  }
  if (form == GammaForm::kSphereSphere) {
    const Vector3d c_a = SideOrigin(q, RowPair(row), 0);
    const Vector3d c_b = SideOrigin(q, RowPair(row), 1);
    const Vector3d dist = c_b - c_a;
    const double len = dist.norm();
    const Vector3d n = dist / len;
    const Vector3d d_dot = b.Velocity(c_b) - a.Velocity(c_a);
    const Vector3d d_ddot = b.Acceleration(c_b) - a.Acceleration(c_a);
    const double nd = n.dot(d_dot);
    return n.dot(d_ddot) + (d_dot.squaredNorm() - nd * nd) / len;
  }
  // Plane–point: the convex side's body-fixed point is the vertex or the ball centre.
  const bool plane_is_a = IsPlane(pair.shape_a);
  const Shape& convex = plane_is_a ? pair.shape_b : pair.shape_a;
  const double rho = Feature(row).kind == FeatureKind::kPlaneVertex ? 0.0 : convex.radius();
  const Vector3d& n = d.normal;
  Vector3d x_a = d.point_a, x_b = d.point_b;
  if (plane_is_a) {
    x_b += rho * n;
  } else {
    x_a -= rho * n;
  }
  const Vector3d omega_p = plane_is_a ? a.omega : b.omega;
  const Vector3d dist = x_b - x_a;
  const Vector3d d_dot = b.Velocity(x_b) - a.Velocity(x_a);
  const Vector3d d_ddot = b.Acceleration(x_b) - a.Acceleration(x_a);
  const Vector3d n_dot = omega_p.cross(n);
  const Vector3d n_ddot = omega_p.cross(n_dot);
  return n_ddot.dot(dist) + 2.0 * n_dot.dot(d_dot) + n.dot(d_ddot);
}

double SpatialContacts::DifferenceGamma(const VectorXd& q, const VectorXd& v, int row) const {
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  double speed = 1.0;
  for (int body : {pair.body_a, pair.body_b}) {
    if (body != engine::kGround)
      speed = std::max(speed, v.segment<6>(model_->VOffset(body)).lpNorm<Eigen::Infinity>());
  }
  const double eps = std::cbrt(std::numeric_limits<double>::epsilon()) / speed;
  // q ⊕ ε v on the two bodies only (the row depends on nothing else), as IntegratePosition does:
  // a flexible body's modal coordinates move by ε η̇ too.
  const auto shifted = [&](double h) {
    VectorXd q_h = q;
    for (int body : {pair.body_a, pair.body_b}) {
      if (body == engine::kGround) continue;
      const int q0 = model_->QOffset(body), v0 = model_->VOffset(body);
      q_h.segment<3>(q0) += h * v.segment<3>(v0);
      q_h.segment<4>(q0 + 3) = engine::QuaternionMultiply(
          q.segment<4>(q0 + 3), engine::QuaternionExp(h * v.segment<3>(v0 + 3)));
      if (const engine::SpatialFlexibleBeam* beam = model_->beam(body)) {
        const int m = beam->num_modes();
        q_h.segment(q0 + 7, m) += h * v.segment(v0 + 6, m);
      }
    }
    return q_h;
  };
  Eigen::RowVectorXd G_plus = Eigen::RowVectorXd::Zero(v.size());
  Eigen::RowVectorXd G_minus = Eigen::RowVectorXd::Zero(v.size());
  JacobianRow(shifted(eps), row, G_plus);
  JacobianRow(shifted(-eps), row, G_minus);
  return (G_plus - G_minus).dot(v) / (2.0 * eps);
}

bool SpatialContacts::AnalyticTangentGamma(const VectorXd& q, const VectorXd& v, int row,
                                           double* gamma) const {
  const int normal = NormalRowOf(row);
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(normal))];
  const ContactFeature feature = Feature(normal);
  const GammaForm form = FormOf(pair, feature);
  if (form == GammaForm::kDifference) return false;
  const PairDistance d = Evaluate(q, normal);
  const Vector3d& n = d.normal;
  const int p = RowPair(normal);
  const BodyMotion a = SideMotion(q, v, p, 0), b = SideMotion(q, v, p, 1);
  // C: the side of the body-fixed point c (c_is_b: B), radius ρ; S the other side.
  bool c_is_b = true;
  double rho = 0.0;
  Vector3d n_dot = Vector3d::Zero();
  Vector3d rim_axis = Vector3d::Zero();  // ≠ 0: c is a rim circle's centre
  Vector3d c = Vector3d::Zero();
  const auto shape_pose = [&](bool side_a, const Shape& s) {
    return BodyPose(q, side_a ? pair.body_a : pair.body_b) * s.pose();
  };
  switch (form) {
    case GammaForm::kPlanePoint:
    case GammaForm::kPlaneRim: {
      const bool plane_is_a = IsPlane(pair.shape_a);
      c_is_b = plane_is_a;
      const Shape& convex = plane_is_a ? pair.shape_b : pair.shape_a;
      rho = feature.kind == FeatureKind::kPlaneVertex ? 0.0 : convex.radius();
      n_dot = (plane_is_a ? a : b).omega.cross(n);
      if (form == GammaForm::kPlaneRim) {
        const Isometry3d X_c = shape_pose(!plane_is_a, convex);
        c = X_c * Vector3d(0.0, 0.0, (feature.index == 0 ? -0.5 : 0.5) * convex.length());
        rim_axis = X_c.linear().col(2);
      }
      break;
    }
    case GammaForm::kSphereSphere: {
      rho = pair.shape_b.radius();
      const Vector3d c_a = SideOrigin(q, p, 0);
      const Vector3d c_b = SideOrigin(q, p, 1);
      n_dot = TurningNormalRate(n, c_b - c_a, b.Velocity(c_b) - a.Velocity(c_a), Vector3d::Zero(),
                                Vector3d::Zero());
      break;
    }
    case GammaForm::kBoxCorner: {
      const bool box_is_a = feature.kind == FeatureKind::kBoxEndBall
                                ? pair.shape_a.type() == ShapeType::kBox
                                : feature.kind == FeatureKind::kBoxCornerOfB;
      c_is_b = box_is_a;
      const Shape& box = box_is_a ? pair.shape_a : pair.shape_b;
      if (feature.kind == FeatureKind::kBoxEndBall) {
        rho = (box_is_a ? pair.shape_b : pair.shape_a).radius();
      }
      const Vector3d corner =
          box_is_a ? Vector3d(d.point_b + rho * n) : Vector3d(d.point_a - rho * n);
      const Isometry3d X_k = shape_pose(box_is_a, box);
      const BoxRegion region = BoxRegionOf(X_k.inverse() * corner, box.half_size());
      const BodyMotion& k = box_is_a ? a : b;
      const BodyMotion& m = box_is_a ? b : a;
      if (region.outside <= 1) {
        n_dot = k.omega.cross(n);
      } else {
        const Vector3d x_k = box_is_a ? d.point_a : d.point_b;
        const Vector3d e = region.outside == 2 ? Vector3d(X_k.linear().col(region.inside_axis))
                                               : Vector3d(Vector3d::Zero());
        n_dot =
            TurningNormalRate(n, corner - x_k, m.Velocity(corner) - k.Velocity(x_k), e, k.omega);
      }
      break;
    }
    case GammaForm::kMeshSphere: {
      const bool mesh_is_a = pair.shape_a.type() == ShapeType::kTriangleMesh;
      c_is_b = mesh_is_a;
      if (feature.kind != FeatureKind::kMeshVertex) {
        rho = (mesh_is_a ? pair.shape_b : pair.shape_a).radius();
      }
      const Vector3d point =
          mesh_is_a ? Vector3d(d.point_b + rho * n) : Vector3d(d.point_a - rho * n);
      const Shape& mesh = mesh_is_a ? pair.shape_a : pair.shape_b;
      const MeshRegion region = MeshRegionOf(mesh, shape_pose(mesh_is_a, mesh), point);
      const BodyMotion& s = mesh_is_a ? a : b;
      const BodyMotion& m = mesh_is_a ? b : a;
      n_dot = region.plane_form
                  ? Vector3d(s.omega.cross(n))
                  : TurningNormalRate(n, point - region.x, m.Velocity(point) - s.Velocity(region.x),
                                      region.edge, s.omega);
      break;
    }
    case GammaForm::kDifference:
      return false;
  }
  if (!n_dot.allFinite()) return false;  // on an edge or vertex, or coincident centres
  const double sigma = c_is_b ? 1.0 : -1.0;
  // The witness on C is c − σ ρ ŵ: ŵ = n, or for a rim (n − μ e)/s (the rim point lowest along
  // σ n); its rate ŵ̇.
  Vector3d w_dot = n_dot;
  const BodyMotion& cm = c_is_b ? b : a;
  if (rim_axis.isZero(0.0)) {
    c = c_is_b ? Vector3d(d.point_b + rho * n) : Vector3d(d.point_a - rho * n);
  } else {
    const Vector3d& e = rim_axis;
    const double mu = n.dot(e);
    const double s = std::sqrt(std::max(0.0, 1.0 - mu * mu));
    if (!(s > 1e-8)) return false;  // n ∥ e: the witness is the centre, not differentiable
    const Vector3d e_dot = cm.omega.cross(e);
    const double mu_dot = n_dot.dot(e) + n.dot(e_dot);
    const double s_dot = -mu * mu_dot / s;
    w_dot = (n_dot - mu_dot * e - mu * e_dot) / s - (n - mu * e) * (s_dot / (s * s));
  }
  const Vector3d x_dot_c = cm.Velocity(c) - (sigma * rho) * w_dot;
  const double g_dot = n.dot(b.Velocity(d.point_b) - a.Velocity(d.point_a));
  const Vector3d x_dot_s = x_dot_c - sigma * (g_dot * n + d.gap * n_dot);
  const Vector3d& x_dot_a = c_is_b ? x_dot_s : x_dot_c;
  const Vector3d& x_dot_b = c_is_b ? x_dot_c : x_dot_s;
  // ṫ_k with the frame's reference body K turning at ω_K.
  Vector3d axis, e1;
  WorldFrameReference(q, normal, &axis, &e1);
  const int frame_body = FrameReferenceOf(normal).body;
  const Vector3d omega_k = frame_body == engine::kGround ? Vector3d(Vector3d::Zero())
                           : frame_body == pair.body_a   ? a.omega
                                                         : b.omega;
  const auto [t1, t2] = TangentBasis(n, axis, e1);
  const auto [t1_dot, t2_dot] = TangentBasisRate(n, n_dot, axis, e1, omega_k);
  const int k = FrameAxis(row);
  const Vector3d& t = k == 0 ? t1 : k == 1 ? t2 : n;
  const Vector3d& t_dot = k == 0 ? t1_dot : k == 1 ? t2_dot : n_dot;
  if (row >= first_resistance_row()) {  // γ_R = u̇·(ω_B^w − ω_A^w)
    *gamma = t_dot.dot(b.omega - a.omega);
    return true;
  }
  const Vector3d dv = b.Velocity(d.point_b) - a.Velocity(d.point_a);
  *gamma = t_dot.dot(dv) + t.dot(b.MovingPointRate(x_dot_b) - a.MovingPointRate(x_dot_a));
  return true;
}

void SpatialContacts::Gamma(double t, const VectorXd& q, const VectorXd& v,
                            std::span<const int> rows, Eigen::Ref<VectorXd> gamma) const {
  (void)t;
  CheckSizes(q, &v, "Gamma");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int row = rows[i];
    double& out = gamma[static_cast<Eigen::Index>(i)];
    const int pair = RowPair(row);
    const bool centreline = has_nodes_ && (AlongCentreline(pair, 0) || AlongCentreline(pair, 1));
    if (row >= num_normal_rows()) {
      // At a node or along a centreline the sphere turns with the section (and along a
      // centreline the witness moves along the beam): the difference (header).
      const bool flexible = has_nodes_ && (AtNode(pair, 0) || AtNode(pair, 1));
      if (flexible || !AnalyticTangentGamma(q, v, row, &out)) out = DifferenceGamma(q, v, row);
      continue;
    }
    out = HasAnalyticGamma(row) ? AnalyticGamma(q, v, row) : DifferenceGamma(q, v, row);
    if (centreline && HasAnalyticGamma(row)) {
      out += CentrelineGamma(q, v, pair, AlongCentreline(pair, 0) ? 0 : 1);
    }
  }
}

}  // namespace saltus::contact
