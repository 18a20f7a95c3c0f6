#include "tools/scene.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "contact/complementarity.h"
#include "integrators/integrator.h"
#include "timestepping/moreau_jean.h"
#include "tools/urdf.h"

namespace saltus::tools {

namespace {

std::string WithLocation(const std::string& file, int line, const std::string& message) {
  if (line > 0) return file + ":" + std::to_string(line) + ": " + message;
  return file + ": " + message;
}

}  // namespace

SceneError::SceneError(std::string file, int line, const std::string& message)
    : std::invalid_argument(WithLocation(file, line, message)),
      file_(std::move(file)),
      line_(line),
      message_(message) {}

namespace {

constexpr std::string_view kGroundName = "ground";
// Upper bounds of iteration and sample counts (simulation section): the work of one step stays
// finite whatever the file says.
constexpr long kMaxIterations = 10'000;
constexpr long kMaxLcpIterations = 10'000'000;
constexpr long kMaxEventSamples = 1'000;

// 1-based line of a node, 0 when it has none.
int LineOf(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

// How a node looks, for "expected ..., got ..." messages.
std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing (null)";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  return "a mapping";
}

std::string JoinWords(const std::vector<std::string>& words, std::string_view last_sep) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size()) ? std::string(last_sep) : std::string(", ");
    out += words[i];
  }
  return out;
}

// Levenshtein distance, for "did you mean" hints on misspelt keys and names.
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean 'x'?)" when one candidate is within two edits, "" otherwise.
std::string Suggestion(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& c : candidates) {
    const std::size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

// Names become CSV columns ("ball.x") and row lists joined by ';': keep them plain.
bool IsValidName(std::string_view name) {
  if (name.empty()) return false;
  const auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!is_alpha(name[0]) && name[0] != '_') return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '-'; });
}

// YAML 1.2 core-schema number, parsed without locale. Returns nullopt if `text` is not a
// number; non-finite values (".nan", ".inf", "nan", "inf") are returned as such.
std::optional<double> ParseDouble(std::string text) {
  if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  bool negative = false;
  std::string_view body = text;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (body.empty() || body[0] == '+' || body[0] == '-') return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec != std::errc() || end != body.data() + body.size()) return std::nullopt;
  return negative ? -value : value;
}

std::optional<long> ParseInteger(const std::string& text) {
  std::string_view body = text;
  if (!body.empty() && body[0] == '+') body.remove_prefix(1);
  long value = 0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (body.empty() || ec != std::errc() || end != body.data() + body.size()) return std::nullopt;
  return value;
}

std::string FormatNumber(double x) {
  std::ostringstream os;
  os.precision(12);
  os << x;
  return os.str();
}

enum class Range { kAny, kPositive, kNonNegative, kUnitInterval };

// Reads one YAML mapping: collects its keys once (rejecting duplicates and non-scalar keys) and
// reads typed values with messages prefixed by the item ("body 'ball': ...").
class MapReader {
 public:
  MapReader(const std::string& file, const YAML::Node& map, std::string item)
      : file_(file), map_(map), item_(std::move(item)) {
    if (!map.IsMap()) {
      Fail(map, "expected a mapping of 'key: value' entries, got " + Describe(map));
    }
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) Fail(key, "keys must be plain words, got " + Describe(key));
      for (const Entry& e : entries_) {
        if (e.key == key.Scalar() && duplicate_.empty()) {
          // Reported by CheckKeys, once the item knows its name.
          duplicate_ = "duplicate key '" + e.key + "' (first given at line " +
                       std::to_string(LineOf(e.key_node)) + ")";
          duplicate_node_ = key;
        }
      }
      entries_.push_back({key.Scalar(), key, it->second});
    }
  }

  void SetItem(std::string item) { item_ = std::move(item); }
  const std::string& item() const { return item_; }
  int line() const { return LineOf(map_); }
  const YAML::Node& node() const { return map_; }

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& message) const {
    int line = LineOf(at);
    // An empty value ("t_end:") is marked where the next token starts: point at its key.
    for (const Entry& e : entries_) {
      if (at.IsNull() && e.value.is(at)) line = LineOf(e.key_node);
    }
    throw SceneError(file_, line, item_ + ": " + message);
  }
  [[noreturn]] void Fail(const std::string& message) const { Fail(map_, message); }

  // Every key must be in `allowed`. A key that belongs to the same kind of item but not to this
  // type (listed in `all_keys`) gets "does not apply to <type_label>"; others are unknown.
  void CheckKeys(const std::vector<std::string>& allowed,
                 const std::vector<std::string>& all_keys = {},
                 const std::string& type_label = "") const {
    if (!duplicate_.empty()) Fail(duplicate_node_, duplicate_);
    for (const Entry& e : entries_) {
      if (std::find(allowed.begin(), allowed.end(), e.key) != allowed.end()) continue;
      if (std::find(all_keys.begin(), all_keys.end(), e.key) != all_keys.end()) {
        Fail(e.key_node, "key '" + e.key + "' does not apply to " + type_label +
                             " (allowed: " + JoinWords(allowed, ", ") + ")");
      }
      if (e.key == "friction") {
        // Coulomb friction acts along a contact's tangent: nothing else has one.
        Fail(e.key_node,
             "friction does not apply here: it is a coefficient of contacts (a contact's "
             "`friction`, a contact pair's `friction` or simulation.friction), whose tangent "
             "it acts along");
      }
      Fail(e.key_node, "unknown key '" + e.key + "'" +
                           Suggestion(e.key, all_keys.empty() ? allowed : all_keys) +
                           " (allowed: " + JoinWords(allowed, ", ") + ")");
    }
  }

  const YAML::Node* Find(std::string_view key) const {
    for (const Entry& e : entries_) {
      if (e.key == key) return &e.value;
    }
    return nullptr;
  }
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  const YAML::Node& Require(std::string_view key) const {
    const YAML::Node* value = Find(key);
    if (value == nullptr) Fail("missing required key '" + std::string(key) + "'");
    return *value;
  }

  double ToNumber(const YAML::Node& value, std::string_view key, Range range) const {
    if (!value.IsScalar()) {
      Fail(value, std::string(key) + " must be a number, got " + Describe(value));
    }
    const std::optional<double> x = ParseDouble(value.Scalar());
    if (!x) Fail(value, std::string(key) + " must be a number, got " + Describe(value));
    if (!std::isfinite(*x)) {
      Fail(value, std::string(key) + " must be a finite number, got " + value.Scalar());
    }
    if (!WithinMagnitudeBounds(*x)) {
      Fail(value, std::string(key) + " = " + value.Scalar() +
                      " is outside the magnitudes a scene may use (" + MagnitudeBoundsText() + ")");
    }
    switch (range) {
      case Range::kAny:
        break;
      case Range::kPositive:
        if (!(*x > 0)) Fail(value, std::string(key) + " must be > 0, got " + value.Scalar());
        break;
      case Range::kNonNegative:
        if (!(*x >= 0)) Fail(value, std::string(key) + " must be >= 0, got " + value.Scalar());
        break;
      case Range::kUnitInterval:
        if (!(*x >= 0 && *x <= 1)) {
          Fail(value, std::string(key) + " must be in [0, 1], got " + value.Scalar());
        }
        break;
    }
    return *x;
  }
  double Number(std::string_view key, Range range, double fallback) const {
    const YAML::Node* value = Find(key);
    return value ? ToNumber(*value, key, range) : fallback;
  }
  double RequiredNumber(std::string_view key, Range range) const {
    return ToNumber(Require(key), key, range);
  }

  // An integer in [min_value, max_value] (iteration and sample counts: the bound keeps the work
  // of one step finite).
  int Integer(std::string_view key, long min_value, int fallback,
              long max_value = std::numeric_limits<int>::max()) const {
    const YAML::Node* value = Find(key);
    if (value == nullptr) return fallback;
    std::optional<long> n;
    if (value->IsScalar()) n = ParseInteger(value->Scalar());
    if (!n) Fail(*value, std::string(key) + " must be an integer, got " + Describe(*value));
    if (*n < min_value || *n > max_value) {
      Fail(*value, std::string(key) + " must be an integer in [" + std::to_string(min_value) +
                       ", " + std::to_string(max_value) + "], got " + value->Scalar());
    }
    return static_cast<int>(*n);
  }

  bool Bool(std::string_view key, bool fallback) const {
    const YAML::Node* value = Find(key);
    if (value == nullptr) return fallback;
    if (value->IsScalar()) {
      const std::string& s = value->Scalar();
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
    }
    Fail(*value, std::string(key) + " must be true or false, got " + Describe(*value));
  }

  std::string ToString(const YAML::Node& value, std::string_view key) const {
    if (!value.IsScalar()) Fail(value, std::string(key) + " must be text, got " + Describe(value));
    return value.Scalar();
  }
  std::string String(std::string_view key, const std::string& fallback) const {
    const YAML::Node* value = Find(key);
    return value ? ToString(*value, key) : fallback;
  }
  std::string RequiredString(std::string_view key) const { return ToString(Require(key), key); }

  // A list of exactly n numbers; `layout` describes it in messages ("[x, y, theta]").
  Eigen::VectorXd Vector(std::string_view key, int n, std::string_view layout,
                         const Eigen::VectorXd& fallback) const {
    const YAML::Node* value = Find(key);
    if (value == nullptr) return fallback;
    const std::string what = std::string(key) + " must be a list of " + std::to_string(n) +
                             " numbers " + std::string(layout);
    if (!value->IsSequence()) Fail(*value, what + ", got " + Describe(*value));
    if (static_cast<int>(value->size()) != n) {
      Fail(*value, what + ", got " + std::to_string(value->size()) +
                       (value->size() == 1 ? " value" : " values"));
    }
    Eigen::VectorXd x(n);
    for (int i = 0; i < n; ++i) {
      x[i] = ToNumber((*value)[static_cast<std::size_t>(i)],
                      std::string(key) + "[" + std::to_string(i) + "]", Range::kAny);
    }
    return x;
  }
  Eigen::Vector2d Vec2(std::string_view key, const Eigen::Vector2d& fallback,
                       std::string_view layout = "[x, y]") const {
    return Vector(key, 2, layout, fallback);
  }
  Eigen::Vector3d Vec3(std::string_view key, const Eigen::Vector3d& fallback,
                       std::string_view layout) const {
    return Vector(key, 3, layout, fallback);
  }
  // A unit vector given as a non-zero 2-vector (normalized here).
  Eigen::Vector2d Direction(std::string_view key, const Eigen::Vector2d& fallback) const {
    const Eigen::Vector2d d = Vec2(key, fallback);
    if (!(d.norm() > 1e-12)) Fail(*Find(key), std::string(key) + " must be a non-zero vector");
    return d.normalized();
  }

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };
  const std::string& file_;
  YAML::Node map_;
  std::string item_;
  std::vector<Entry> entries_;
  std::string duplicate_;  // the first duplicate key, if any
  YAML::Node duplicate_node_;
};

std::vector<std::string> Keys(std::initializer_list<const char*> keys) {
  return std::vector<std::string>(keys.begin(), keys.end());
}

// The elements of an optional list section (`joints:` etc.): absent or null means empty.
std::vector<YAML::Node> ListSection(const MapReader& top, std::string_view key) {
  std::vector<YAML::Node> items;
  const YAML::Node* section = top.Find(key);
  if (section == nullptr || section->IsNull()) return items;
  if (!section->IsSequence()) {
    top.Fail(*section, std::string(key) + " must be a list ('- name: ...' entries), got " +
                           Describe(*section));
  }
  for (std::size_t i = 0; i < section->size(); ++i) items.push_back((*section)[i]);
  return items;
}

// Length, material, section, discretisation and reference frame of a flexible beam body
// (engine/flexible_beam.h), the keys planar and spatial scenes share: the section as area and
// second_moment, or width and height of a rectangle (height in the bending plane x–y).
// second_moment_xz, when not null (spatial beams: bending in x–z), is read or derived with them.
engine::BeamProperties ReadBeamGeometry(const MapReader& r, double* second_moment_xz) {
  engine::BeamProperties beam;
  beam.length = r.RequiredNumber("length", Range::kPositive);
  beam.youngs_modulus = r.RequiredNumber("E", Range::kPositive);
  beam.density = r.RequiredNumber("density", Range::kPositive);
  if (r.Has("width") || r.Has("height")) {
    const bool spatial = second_moment_xz != nullptr;
    for (const char* key : {"area", "second_moment", "second_moment_xz"}) {
      if (r.Has(key)) {
        r.Fail(*r.Find(key), std::string("give either width and height or ") +
                                 (spatial ? "area, second_moment and second_moment_xz"
                                          : "area and second_moment") +
                                 ", not both (" + key + ")");
      }
    }
    const double w = r.RequiredNumber("width", Range::kPositive);
    const double h = r.RequiredNumber("height", Range::kPositive);
    beam.area = w * h;
    beam.second_moment = w * h * h * h / 12.0;
    if (spatial) *second_moment_xz = h * w * w * w / 12.0;
  } else {
    beam.area = r.RequiredNumber("area", Range::kPositive);
    beam.second_moment = r.RequiredNumber("second_moment", Range::kPositive);
    if (second_moment_xz != nullptr) {
      *second_moment_xz = r.RequiredNumber("second_moment_xz", Range::kPositive);
    }
  }
  beam.elements = r.Integer("elements", 1, 4, 500);  // 500: a 1503-DOF dense FE eigenproblem
  const std::string reference = r.String("reference", "clamped");
  if (reference == "clamped") {
    beam.reference = engine::BeamReference::kClamped;
  } else if (reference == "pinned") {
    beam.reference = engine::BeamReference::kPinned;
  } else if (reference == "free") {
    beam.reference = engine::BeamReference::kFree;
  } else {
    r.Fail(*r.Find("reference"), "reference '" + reference + "' is unknown" +
                                     Suggestion(reference, Keys({"clamped", "pinned", "free"})) +
                                     " (use clamped, pinned or free)");
  }
  return beam;
}

// Geometric stiffening and damping of a flexible beam body (planar and spatial scenes).
void ReadBeamStiffeningAndDamping(const MapReader& r, engine::BeamProperties* beam) {
  beam->geometric_stiffening = r.Bool("geometric_stiffening", true);
  beam->rayleigh_alpha = r.Number("rayleigh_alpha", Range::kNonNegative, 0.0);
  beam->rayleigh_beta = r.Number("rayleigh_beta", Range::kNonNegative, 0.0);
  beam->modal_damping = r.Number("modal_damping", Range::kNonNegative, 0.0);
}

// St Venant torsion of a spatial beam (engine/flexible_beam_spatial.h), present when the scene
// gives the shear modulus `shear_modulus` (G) or the Poisson ratio `poisson_ratio` (ν ∈ (−1, 0.5],
// G = E/(2(1 + ν))), not both; `torsion_constant` (J) defaults to the rectangle's St Venant
// constant for width and height (engine::RectangleTorsionConstant) and to the polar moment
// I_xy + I_xz otherwise (exact for circular sections and tubes).
std::optional<engine::BeamTorsion> ReadBeamTorsion(const MapReader& r,
                                                   const engine::BeamProperties& beam,
                                                   double second_moment_xz) {
  const bool g = r.Has("shear_modulus"), nu = r.Has("poisson_ratio");
  if (!g && !nu) {
    if (r.Has("torsion_constant")) {
      r.Fail(*r.Find("torsion_constant"),
             "torsion_constant needs shear_modulus or poisson_ratio (the sections twist only "
             "with them)");
    }
    return std::nullopt;
  }
  if (g && nu) {
    r.Fail(*r.Find("poisson_ratio"),
           "give either shear_modulus or poisson_ratio, not both (poisson_ratio)");
  }
  engine::BeamTorsion torsion;
  if (g) {
    torsion.shear_modulus = r.RequiredNumber("shear_modulus", Range::kPositive);
  } else {
    const double ratio = r.RequiredNumber("poisson_ratio", Range::kAny);
    if (!(ratio > -1.0 && ratio <= 0.5)) {
      r.Fail(*r.Find("poisson_ratio"),
             "poisson_ratio must be in (-1, 0.5], got " + r.Find("poisson_ratio")->Scalar());
    }
    torsion.shear_modulus = beam.youngs_modulus / (2.0 * (1.0 + ratio));
  }
  const double fallback = r.Has("width") ? engine::RectangleTorsionConstant(
                                               r.RequiredNumber("width", Range::kPositive),
                                               r.RequiredNumber("height", Range::kPositive))
                                         : beam.second_moment + second_moment_xz;
  torsion.torsion_constant = r.Number("torsion_constant", Range::kPositive, fallback);
  return torsion;
}

class SceneParser {
 public:
  explicit SceneParser(std::string file) : file_(std::move(file)) {}

  Scene Parse(const YAML::Node& root) {
    if (!root.IsDefined() || root.IsNull()) {
      throw SceneError(file_, 1, "the scene is empty (expected keys scene, bodies, simulation)");
    }
    MapReader top(file_, root, "scene");
    Scene scene;
    scene.file = file_;
    scene.dimension = top.Integer("dimension", 2, 2);
    if (scene.dimension != 2 && scene.dimension != 3) {
      top.Fail(*top.Find("dimension"), "dimension must be 2 (planar) or 3 (spatial)");
    }
    if (scene.dimension == 3) return ParseSpatial(top, std::move(scene));
    top.CheckKeys(Keys({"scene", "dimension", "description", "gravity", "bodies", "flexible_bodies",
                        "joints", "drivers", "forces", "contacts", "simulation", "reference"}));
    scene.name = top.RequiredString("scene");
    if (!IsValidName(scene.name)) {
      top.Fail(top.Require("scene"), "scene name '" + scene.name + "' " + kNameRule);
    }
    scene.description = top.String("description", "");
    scene.gravity = top.Vec2("gravity", scene.gravity, "[gx, gy]");

    // Rigid bodies, then flexible bodies (engine::PlanarBody::beam), in one body numbering.
    const std::vector<YAML::Node> flexible = ListSection(top, "flexible_bodies");
    const YAML::Node* bodies = top.Find("bodies");
    if (flexible.empty() || bodies != nullptr) {
      const YAML::Node& list = top.Require("bodies");
      if (!list.IsSequence() || (list.size() == 0 && flexible.empty())) {
        top.Fail(list,
                 "bodies must be a non-empty list ('- name: ...' entries), got " + Describe(list));
      }
      for (std::size_t i = 0; i < list.size(); ++i) ParseBody(list[i], i, &scene);
    }
    for (std::size_t i = 0; i < flexible.size(); ++i) ParseFlexibleBody(flexible[i], i, &scene);
    for (const YAML::Node& n : ListSection(top, "joints")) ParseJoint(n, &scene);
    ResolveBoundaries(&scene);
    for (const YAML::Node& n : ListSection(top, "drivers")) ParseDriver(n, &scene);
    for (const YAML::Node& n : ListSection(top, "forces")) ParseForce(n, &scene);
    for (const YAML::Node& n : ListSection(top, "contacts")) ParseContact(n, &scene);
    ParseSimulation(top.Require("simulation"), &scene);
    // Contacts without their own `friction` get simulation.friction.
    for (contact::PlanarContact& c : scene.contacts) {
      if (c.friction < 0.0) c.friction = scene.friction.friction;
    }
    if (const YAML::Node* ref = top.Find("reference")) ParseReference(*ref, &scene);
    return scene;
  }

 private:
  static constexpr const char* kNameRule =
      "is not a valid name (use letters, digits, '_' and '-', starting with a letter or '_')";

  // Reads `name`, checks it is valid and unused, and names the item after it.
  std::string ClaimName(MapReader& r, const std::string& kind) {
    const std::string name = r.RequiredString("name");
    if (!IsValidName(name)) r.Fail(r.Require("name"), "name '" + name + "' " + kNameRule);
    if (name == kGroundName) {
      r.Fail(r.Require("name"), "the name 'ground' is reserved for the fixed frame");
    }
    const auto [it, inserted] = names_.try_emplace(name, kind, r.line());
    if (!inserted) {
      r.Fail(r.Require("name"), "duplicate name '" + name + "' (already used by the " +
                                    it->second.first + " at line " +
                                    std::to_string(it->second.second) + ")");
    }
    r.SetItem(kind + " '" + name + "'");
    return name;
  }

  // A body reference: "ground" or the name of a body listed in `bodies`.
  int BodyRef(const MapReader& r, std::string_view key, bool allow_ground = true) const {
    const YAML::Node& value = r.Require(key);
    const std::string name = r.ToString(value, key);
    if (name == kGroundName) {
      if (!allow_ground) r.Fail(value, std::string(key) + " cannot be the ground");
      return engine::kGround;
    }
    const auto it = body_index_.find(name);
    if (it == body_index_.end()) {
      std::vector<std::string> known;
      for (const auto& [n, i] : body_index_) known.push_back(n);
      r.Fail(value, std::string(key) + " '" + name + "' is not a body" + Suggestion(name, known) +
                        " (bodies: " + JoinWords(known, ", ") +
                        (allow_ground ? ", or ground)" : ")"));
    }
    return it->second;
  }

  void RequireDistinct(const MapReader& r, int a, int b) const {
    if (a == b) {
      r.Fail(r.Require("body_b"),
             "body_a and body_b are the same (" +
                 (a == engine::kGround ? std::string(kGroundName)
                                       : body_names_[static_cast<std::size_t>(a)]) +
                 ")");
    }
  }

  // Type of a joint/force/contact; `r` must hold a `type` key with one of `types`.
  std::string Type(const MapReader& r, const std::vector<std::string>& types) const {
    const YAML::Node& value = r.Require("type");
    const std::string type = r.ToString(value, "type");
    if (std::find(types.begin(), types.end(), type) == types.end()) {
      r.Fail(value, "type '" + type + "' is unknown" + Suggestion(type, types) + " (use " +
                        JoinWords(types, " or ") + ")");
    }
    return type;
  }
  // The same for a name table (PlanarJointTypes() and the like): *value is the entry's value.
  template <class T>
  std::string Type(const MapReader& r, const NameTable<T>& table, T* value) const {
    const std::string type = Type(r, TableNames(table));
    for (const auto& [name, v] : table) {
      if (name == type) *value = v;
    }
    return type;
  }

  void ParseBody(const YAML::Node& node, std::size_t index, Scene* scene) {
    MapReader r(file_, node, "body #" + std::to_string(index + 1));
    engine::PlanarBody body;
    body.name = ClaimName(r, "body");
    r.CheckKeys(Keys({"name", "mass", "inertia", "position", "velocity"}));
    body.mass = r.RequiredNumber("mass", Range::kPositive);
    body.inertia = r.RequiredNumber("inertia", Range::kPositive);
    body.q0 = r.Vec3("position", Eigen::Vector3d::Zero(), "[x, y, theta]");
    body.v0 = r.Vec3("velocity", Eigen::Vector3d::Zero(), "[vx, vy, omega]");
    body_index_[body.name] = static_cast<int>(scene->bodies.size());
    body_names_.push_back(body.name);
    scene->bodies.push_back(body);
    scene->lines.bodies.push_back(r.line());
  }

  // A flexible beam body (engine/flexible_beam.h): geometry, section (area and second_moment,
  // or width and height of a rectangle), material, discretisation, reduction and damping.
  void ParseFlexibleBody(const YAML::Node& node, std::size_t index, Scene* scene) {
    MapReader r(file_, node, "flexible body #" + std::to_string(index + 1));
    engine::PlanarBody body;
    body.name = ClaimName(r, "flexible body");
    r.CheckKeys(Keys({"name", "length", "E", "density", "area", "second_moment", "width", "height",
                      "elements", "modes", "reference", "reduction", "boundary_nodes",
                      "geometric_stiffening", "rayleigh_alpha", "rayleigh_beta", "modal_damping",
                      "position", "velocity"}));
    engine::BeamProperties beam = ReadBeamGeometry(r, nullptr);
    const std::string reference = r.String("reference", "clamped");
    beam.modes = r.Integer("modes", 1, 2);
    const int available = engine::AvailableModes(beam.elements, beam.reference);
    if (beam.modes > available) {
      r.Fail(*r.Find("modes"), "modes must be at most " + std::to_string(available) +
                                   " (the modes of " + std::to_string(beam.elements) +
                                   " elements with the " + reference + " reference), got " +
                                   std::to_string(beam.modes));
    }
    if (ParseReduction(r, &beam)) {
      CheckFewestModes(r, beam);
    } else {
      pending_boundaries_.emplace_back(static_cast<int>(scene->bodies.size()), node);
    }
    ReadBeamStiffeningAndDamping(r, &beam);
    body.beam = beam;
    body.q0 = r.Vec3("position", Eigen::Vector3d::Zero(), "[x, y, theta]");
    body.v0 = r.Vec3("velocity", Eigen::Vector3d::Zero(), "[vx, vy, omega]");
    body_index_[body.name] = static_cast<int>(scene->bodies.size());
    body_names_.push_back(body.name);
    scene->bodies.push_back(body);
    scene->lines.bodies.push_back(r.line());
  }

  // `reduction` (free_interface, craig_bampton) and the Craig–Bampton `boundary_nodes` (node
  // indices). Returns false for a Craig–Bampton beam without the list: its boundary is then the
  // nodes where joints attach (ResolveBoundaries, once the joints are read).
  bool ParseReduction(const MapReader& r, engine::BeamProperties* beam) const {
    const std::string reduction = r.String("reduction", "free_interface");
    if (reduction == "craig_bampton") {
      beam->reduction = engine::BeamReduction::kCraigBampton;
    } else if (reduction != "free_interface") {
      r.Fail(*r.Find("reduction"),
             "reduction '" + reduction + "' is unknown" +
                 Suggestion(reduction, Keys({"free_interface", "craig_bampton"})) +
                 " (use free_interface or craig_bampton)");
    }
    const YAML::Node* list = r.Find("boundary_nodes");
    if (list == nullptr) return beam->reduction != engine::BeamReduction::kCraigBampton;
    if (beam->reduction != engine::BeamReduction::kCraigBampton) {
      r.Fail(*list, "boundary_nodes need reduction: craig_bampton");
    }
    if (!list->IsSequence()) {
      r.Fail(*list, "boundary_nodes must be a list of node indices, got " + Describe(*list));
    }
    for (const YAML::Node& item : *list) {
      std::optional<long> n;
      if (item.IsScalar()) n = ParseInteger(item.Scalar());
      if (!n || *n < 0 || *n > beam->elements) {
        r.Fail(item, "boundary node " + (item.IsScalar() ? item.Scalar() : Describe(item)) +
                         " does not exist (nodes 0.." + std::to_string(beam->elements) + ")");
      }
      const int node = static_cast<int>(*n);
      if (std::find(beam->boundary_nodes.begin(), beam->boundary_nodes.end(), node) !=
          beam->boundary_nodes.end()) {
        r.Fail(item, "boundary node " + std::to_string(node) + " is listed twice");
      }
      beam->boundary_nodes.push_back(node);
    }
    return true;
  }

  // The Craig–Bampton basis needs a boundary node for a free beam and at least as many modes as
  // boundary coordinates (engine::MinimumModes; `spatial`: engine::SpatialMinimumModes of a
  // spatial beam, with torsion when *spatial).
  static void CheckFewestModes(const MapReader& r, const engine::BeamProperties& beam,
                               std::optional<bool> spatial = std::nullopt) {
    if (beam.reduction != engine::BeamReduction::kCraigBampton) return;
    if (beam.reference == engine::BeamReference::kFree && beam.boundary_nodes.empty()) {
      const YAML::Node* list = r.Find("boundary_nodes");
      const std::string what =
          "the craig_bampton reduction of a free beam needs at least one boundary node";
      if (list != nullptr) r.Fail(*list, what);
      r.Fail(what + " (give boundary_nodes or attach a joint at a node)");
    }
    const int fewest =
        spatial ? engine::SpatialMinimumModes(beam, *spatial) : engine::MinimumModes(beam);
    const int boundary = spatial ? engine::SpatialBoundaryCoordinates(beam, *spatial)
                                 : engine::BoundaryCoordinates(beam);
    if (beam.modes < fewest) {
      const std::string what = "modes must be at least " + std::to_string(fewest) +
                               " with the craig_bampton reduction (its " +
                               std::to_string(boundary) + " boundary coordinates at nodes " +
                               JoinNodes(beam.boundary_nodes) + "), got " +
                               std::to_string(beam.modes);
      const YAML::Node* modes = r.Find("modes");
      if (modes != nullptr) r.Fail(*modes, what);
      r.Fail(what);
    }
  }
  static std::string JoinNodes(const std::vector<int>& nodes) {
    std::string text;
    for (const int n : nodes) text += (text.empty() ? "" : ", ") + std::to_string(n);
    return text.empty() ? "(none)" : text;
  }

  // The nodes of `body` where joints (planar or spatial) attach, sorted, each once.
  template <class Joint>
  static std::vector<int> JointNodes(int body, const std::vector<Joint>& joints) {
    std::vector<int> nodes;
    for (const Joint& j : joints) {
      if (j.body_a == body && j.node_a >= 0) nodes.push_back(j.node_a);
      if (j.body_b == body && j.node_b >= 0) nodes.push_back(j.node_b);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
  }

  // Craig–Bampton beams without boundary_nodes: the nodes where joints attach to them.
  void ResolveBoundaries(Scene* scene) const {
    for (const auto& [body, node] : pending_boundaries_) {
      engine::BeamProperties& beam = *scene->bodies[static_cast<std::size_t>(body)].beam;
      beam.boundary_nodes = JointNodes(body, scene->joints);
      CheckFewestModes(
          MapReader(file_, node,
                    "flexible body '" + body_names_[static_cast<std::size_t>(body)] + "'"),
          beam);
    }
  }

  // Spatial Craig–Bampton beams without boundary_nodes: the nodes where joints attach to them.
  void ResolveSpatialBoundaries(SpatialScene* sp) const {
    for (const auto& [body, node] : pending_spatial_boundaries_) {
      engine::SpatialBody& b = sp->bodies[static_cast<std::size_t>(body)];
      engine::BeamProperties& beam = *b.beam;
      beam.boundary_nodes = JointNodes(body, sp->joints);
      CheckFewestModes(MapReader(file_, node, "flexible body '" + b.name + "'"), beam,
                       b.torsion.has_value());
    }
  }

  // `key` (node_a, node_b, node): a node index of the flexible body `body` of `bodies` (planar
  // or spatial), exclusive with `point_key`; −1 when absent.
  template <class Body>
  // `centreline`: the value `centreline` is allowed too (a shape swept along the centreline,
  // contact::kAlongCentreline).
  int NodeRef(const MapReader& r, std::string_view key, std::string_view point_key, int body,
              const std::vector<Body>& bodies, bool centreline = false) const {
    const YAML::Node* value = r.Find(key);
    if (value == nullptr) return -1;
    const Body* b = body >= 0 ? &bodies[static_cast<std::size_t>(body)] : nullptr;
    if (b == nullptr || !b->beam) {
      r.Fail(*value, std::string(key) + " needs a flexible body, but '" +
                         (b ? b->name : std::string(kGroundName)) + "' is not one");
    }
    if (r.Has(point_key)) {
      r.Fail(*value, std::string(key) + " and " + std::string(point_key) +
                         " are exclusive (a node is its own point)");
    }
    if (centreline && value->IsScalar() && value->Scalar() == "centreline") {
      return contact::kAlongCentreline;
    }
    const int node = r.Integer(key, 0, 0);
    if (node > b->beam->elements) {
      r.Fail(*value, std::string(key) + " " + std::to_string(node) + " does not exist: '" +
                         b->name + "' has nodes 0.." + std::to_string(b->beam->elements));
    }
    return node;
  }
  int NodeRef(const MapReader& r, std::string_view key, std::string_view point_key, int body,
              const Scene& scene) const {
    return NodeRef(r, key, point_key, body, scene.bodies);
  }

  void ParseJoint(const YAML::Node& node, Scene* scene) {
    MapReader r(file_, node, "joint #" + std::to_string(scene->joints.size() + 1));
    engine::PlanarJoint joint;
    joint.name = ClaimName(r, "joint");
    using T = engine::PlanarJointType;
    const std::string type = Type(r, PlanarJointTypes(), &joint.type);
    const std::vector<std::string> all =
        Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "node_a", "node_b",
              "axis_a", "angle0", "rate", "length"});
    std::vector<std::string> allowed = Keys({"name", "type", "body_a", "body_b"});
    if (joint.type != T::kAngleDriver) allowed.insert(allowed.end(), {"node_a", "node_b"});
    const auto allow = [&](std::initializer_list<const char*> keys) {
      allowed.insert(allowed.end(), keys.begin(), keys.end());
    };
    switch (joint.type) {
      case T::kRevolute:
        allow({"point_a", "point_b"});
        break;
      case T::kPrismatic:
        allow({"point_a", "point_b", "axis_a", "angle0"});
        break;
      case T::kAngleDriver:
        allow({"angle0", "rate"});
        break;
      case T::kDistance:
        allow({"point_a", "point_b", "length"});
        break;
      case T::kFixed:
        allow({"point_a", "point_b", "angle0"});
        break;
      case T::kPointOnLine:
        allow({"point_a", "point_b", "axis_a"});
        break;
    }
    r.CheckKeys(allowed, all, (type == "angle_driver" ? "an " : "a ") + type + " joint");
    joint.body_a = BodyRef(r, "body_a");
    joint.body_b = BodyRef(r, "body_b");
    RequireDistinct(r, joint.body_a, joint.body_b);
    joint.point_a = r.Vec2("point_a", Eigen::Vector2d::Zero());
    joint.point_b = r.Vec2("point_b", Eigen::Vector2d::Zero());
    joint.node_a = NodeRef(r, "node_a", "point_a", joint.body_a, *scene);
    joint.node_b = NodeRef(r, "node_b", "point_b", joint.body_b, *scene);
    joint.axis_a = r.Direction("axis_a", Eigen::Vector2d::UnitX());
    joint.angle0 = r.Number("angle0", Range::kAny, 0.0);
    joint.rate = r.Number("rate", Range::kAny, 0.0);
    if (joint.type == T::kDistance) {
      // L: given, or the distance of the two points in the initial configuration.
      const Eigen::Vector2d pa = InitialPoint(*scene, joint.body_a, joint.point_a, joint.node_a);
      const Eigen::Vector2d pb = InitialPoint(*scene, joint.body_b, joint.point_b, joint.node_b);
      // Points within round-off of each other (1e-12 of their size) coincide: no length.
      double initial = (pb - pa).norm();
      if (initial <= 1e-12 * std::max({1.0, pa.norm(), pb.norm()})) initial = 0.0;
      joint.length = r.Number("length", Range::kPositive, initial);
      if (!(joint.length > 0)) {
        r.Fail("length must be > 0: give it, or points that are apart initially");
      }
    }
    joint_index_[joint.name] = static_cast<int>(scene->joints.size());
    scene->joints.push_back(joint);
    scene->lines.joints.push_back(r.line());
  }

  // A driver's `kind` (angle or displacement) on the joint `joint_name`, planar or spatial:
  // `angle_ok` / `displacement_ok` say whether that joint can take each kind, and `angle_joints`
  // / `displacement_joints` name the joint types that can ("revolute or cylindrical"); a joint
  // that cannot is an error at the `joint` key.
  static engine::DriverKind DriverKindOf(const MapReader& r, const std::string& joint_name,
                                         bool angle_ok, bool displacement_ok,
                                         const std::string& angle_joints,
                                         const std::string& displacement_joints) {
    const std::string kind = r.RequiredString("kind");
    if (kind == "angle") {
      if (!angle_ok) {
        r.Fail(*r.Find("joint"), "an angle driver needs a " + angle_joints + " joint; '" +
                                     joint_name + "' is not one");
      }
      return engine::DriverKind::kAngle;
    }
    if (kind == "displacement") {
      if (!displacement_ok) {
        r.Fail(*r.Find("joint"), "a displacement driver needs a " + displacement_joints +
                                     " joint; '" + joint_name + "' is not one");
      }
      return engine::DriverKind::kDisplacement;
    }
    r.Fail(*r.Find("kind"), "kind '" + kind + "' is unknown" +
                                Suggestion(kind, Keys({"angle", "displacement"})) +
                                " (use angle or displacement)");
  }

  // A planar driver: `kind` angle on a revolute joint or displacement on a prismatic one, with a
  // TimeProfile (the keys of spatial drivers, ParseProfile).
  void ParseDriver(const YAML::Node& node, Scene* scene) {
    MapReader r(file_, node, "driver #" + std::to_string(scene->drivers.size() + 1));
    engine::PlanarDriver driver;
    driver.name = ClaimName(r, "driver");
    driver.profile = ParseProfile(r, Keys({"name", "joint", "kind", "profile"}), "a driver");
    driver.joint = JointRef(r, "joint");
    const engine::PlanarJoint& joint = scene->joints[static_cast<std::size_t>(driver.joint)];
    driver.kind =
        DriverKindOf(r, joint.name, joint.type == engine::PlanarJointType::kRevolute,
                     joint.type == engine::PlanarJointType::kPrismatic, "revolute", "prismatic");
    scene->drivers.push_back(driver);
    scene->lines.drivers.push_back(r.line());
  }

  // World position of a body-frame point in the initial configuration (ground: identity), or
  // of node `node` of a flexible body (undeformed: at X_k on the frame's x axis).
  Eigen::Vector2d InitialPoint(const Scene& scene, int body, Eigen::Vector2d s,
                               int node = -1) const {
    if (body == engine::kGround) return s;
    const engine::PlanarBody& b = scene.bodies[static_cast<std::size_t>(body)];
    if (node >= 0) s = {b.beam->length * node / b.beam->elements, 0.0};
    return b.q0.head<2>() + Eigen::Rotation2Dd(b.q0[2]) * s;
  }

  void ParseForce(const YAML::Node& node, Scene* scene) {
    MapReader r(file_, node,
                "force #" + std::to_string(scene->springs.size() + scene->loads.size() +
                                           scene->torsional_springs.size() + 1));
    const std::string name = ClaimName(r, "force");
    const std::string type = Type(r, Keys({"spring_damper", "torsional_spring", "load"}));
    const std::vector<std::string> all =
        Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "node_a", "node_b",
              "stiffness", "damping", "rest_length", "joint", "angle0", "body", "force", "point",
              "node", "torque", "scale"});
    if (type == "spring_damper") {
      r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "node_a",
                        "node_b", "stiffness", "damping", "rest_length"}),
                  all, "a spring_damper force");
      engine::PlanarSpringDamper spring;
      spring.name = name;
      spring.body_a = BodyRef(r, "body_a");
      spring.body_b = BodyRef(r, "body_b");
      RequireDistinct(r, spring.body_a, spring.body_b);
      spring.point_a = r.Vec2("point_a", Eigen::Vector2d::Zero());
      spring.point_b = r.Vec2("point_b", Eigen::Vector2d::Zero());
      spring.node_a = NodeRef(r, "node_a", "point_a", spring.body_a, *scene);
      spring.node_b = NodeRef(r, "node_b", "point_b", spring.body_b, *scene);
      spring.stiffness = r.RequiredNumber("stiffness", Range::kNonNegative);
      spring.damping = r.Number("damping", Range::kNonNegative, 0.0);
      const double initial_length =
          (InitialPoint(*scene, spring.body_b, spring.point_b, spring.node_b) -
           InitialPoint(*scene, spring.body_a, spring.point_a, spring.node_a))
              .norm();
      spring.rest_length = r.Number("rest_length", Range::kNonNegative, initial_length);
      scene->springs.push_back(spring);
      scene->lines.springs.push_back(r.line());
    } else if (type == "torsional_spring") {
      r.CheckKeys(Keys({"name", "type", "joint", "stiffness", "damping", "angle0"}), all,
                  "a torsional_spring force");
      engine::PlanarTorsionalSpring s;
      s.name = name;
      s.joint = JointRef(r, "joint");
      const engine::PlanarJoint& j = scene->joints[static_cast<std::size_t>(s.joint)];
      if (j.type != engine::PlanarJointType::kRevolute) {
        r.Fail(*r.Find("joint"),
               "a torsional spring needs a revolute joint; '" + j.name + "' is not one");
      }
      s.stiffness = r.RequiredNumber("stiffness", Range::kNonNegative);
      s.damping = r.Number("damping", Range::kNonNegative, 0.0);
      s.angle0 = r.Number("angle0", Range::kAny, 0.0);
      scene->torsional_springs.push_back(s);
      scene->lines.torsional_springs.push_back(r.line());
    } else {
      r.CheckKeys(Keys({"name", "type", "body", "force", "point", "node", "torque", "scale"}), all,
                  "a load force");
      engine::PlanarLoad load;
      load.name = name;
      load.body = BodyRef(r, "body", /*allow_ground=*/false);
      load.force = r.Vec2("force", Eigen::Vector2d::Zero(), "[fx, fy]");
      load.point = r.Vec2("point", Eigen::Vector2d::Zero());
      load.node = NodeRef(r, "node", "point", load.body, *scene);
      load.torque = r.Number("torque", Range::kAny, 0.0);
      if (const YAML::Node* sc = r.Find("scale")) {
        MapReader sr(file_, *sc, r.item() + ": scale");
        load.scale = ParseProfile(sr, Keys({"profile"}), "a load scale");
      }
      scene->loads.push_back(load);
      scene->lines.loads.push_back(r.line());
    }
  }

  void ParseContact(const YAML::Node& node, Scene* scene) {
    MapReader r(file_, node, "contact #" + std::to_string(scene->contacts.size() + 1));
    contact::PlanarContact c;
    c.name = ClaimName(r, "contact");
    Type(r, PlanarContactTypes(), &c.type);
    const std::vector<std::string> all =
        Keys({"name", "type", "body_a", "body_b", "point_a", "normal_a", "radius_a", "point_b",
              "node_b", "radius_b", "restitution", "friction"});
    if (c.type == contact::PlanarContactType::kPointLine) {
      r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "normal_a", "point_b",
                        "node_b", "restitution", "friction"}),
                  all, "a point_line contact");
    } else if (c.type == contact::PlanarContactType::kDiskLine) {
      r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "normal_a", "point_b",
                        "node_b", "radius_b", "restitution", "friction"}),
                  all, "a disk_line contact");
    } else if (c.type == contact::PlanarContactType::kDiskDisk) {
      r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "radius_a", "point_b",
                        "node_b", "radius_b", "restitution", "friction"}),
                  all, "a disk_disk contact");
    } else {
      return ParseDiskBeamContact(r, all, c, scene);
    }
    c.body_a = BodyRef(r, "body_a");
    c.body_b =
        BodyRef(r, "body_b", /*allow_ground=*/c.type == contact::PlanarContactType::kDiskDisk);
    RequireDistinct(r, c.body_a, c.body_b);
    c.point_a = r.Vec2("point_a", Eigen::Vector2d::Zero());
    c.point_b = r.Vec2("point_b", Eigen::Vector2d::Zero());
    c.node_b = NodeRef(r, "node_b", "point_b", c.body_b, *scene);
    if (c.type != contact::PlanarContactType::kDiskDisk) {
      c.normal_a = r.Direction("normal_a", Eigen::Vector2d::UnitY());
    }
    if (c.type == contact::PlanarContactType::kDiskDisk) {
      c.radius_a = r.RequiredNumber("radius_a", Range::kPositive);
    }
    if (c.type != contact::PlanarContactType::kPointLine) {
      c.radius_b = r.RequiredNumber("radius_b", Range::kPositive);
    }
    c.restitution = r.Number("restitution", Range::kUnitInterval, -1.0);
    // Negative until simulation.friction is known (ApplyDefaultFriction).
    c.friction = r.Number("friction", Range::kNonNegative, -1.0);
    scene->contacts.push_back(c);
    scene->lines.contacts.push_back(r.line());
  }

  // A disk (body_a or the ground) against any point of the beam of the flexible body_b, whose
  // faces are radius_b (half its thickness, ≥ 0) from its centreline. Its own `friction` only
  // (default 0): simulation.friction does not apply to it (contact/planar_contacts.h).
  void ParseDiskBeamContact(const MapReader& r, const std::vector<std::string>& all,
                            contact::PlanarContact c, Scene* scene) {
    c.type = contact::PlanarContactType::kDiskBeam;
    r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "radius_a", "radius_b",
                      "restitution", "friction"}),
                all, "a disk_beam contact (its point on the beam is found)");
    c.body_a = BodyRef(r, "body_a");
    c.body_b = BodyRef(r, "body_b", /*allow_ground=*/false);
    RequireDistinct(r, c.body_a, c.body_b);
    if (!scene->bodies[static_cast<std::size_t>(c.body_b)].beam) {
      r.Fail(*r.Find("body_b"), "body_b of a disk_beam contact must be a flexible body, but '" +
                                    scene->bodies[static_cast<std::size_t>(c.body_b)].name +
                                    "' is not one");
    }
    c.point_a = r.Vec2("point_a", Eigen::Vector2d::Zero());
    c.radius_a = r.RequiredNumber("radius_a", Range::kPositive);
    c.radius_b = r.RequiredNumber("radius_b", Range::kNonNegative);
    c.restitution = r.Number("restitution", Range::kUnitInterval, -1.0);
    c.friction = r.Number("friction", Range::kNonNegative, 0.0);
    scene->contacts.push_back(c);
    scene->lines.contacts.push_back(r.line());
  }

  // `reference:` (SceneReference); the file and the closed form are checked by tools/reference.h.
  void ParseReference(const YAML::Node& node, Scene* scene) {
    MapReader r(file_, node, "reference");
    r.CheckKeys(Keys({"file", "analytic", "integrator", "formulation", "rtol", "atol", "step"}));
    SceneReference& ref = scene->reference;
    ref.line = r.line();
    ref.file = r.String("file", "");
    ref.analytic = r.String("analytic", "");
    ref.integrator = r.String("integrator", "");
    ref.formulation = r.String("formulation", "");
    ref.rtol = r.Number("rtol", Range::kPositive, 0.0);
    ref.atol = r.Number("atol", Range::kPositive, 0.0);
    ref.step = r.Number("step", Range::kPositive, 0.0);
    const int sources = !ref.file.empty() + !ref.analytic.empty() + !ref.integrator.empty();
    if (sources > 1) r.Fail("give one of file, analytic or integrator (a tight-tolerance run)");
    if (ref.integrator.empty() && (r.Has("formulation") || r.Has("rtol") || r.Has("atol"))) {
      r.Fail("formulation, rtol and atol describe a run: they need integrator");
    }
    if (!ref.integrator.empty()) {
      std::optional<integrators::Formulation> f = DefaultFormulation(ref.integrator);
      if (!ref.formulation.empty()) {
        f = integrators::ParseFormulation(ref.formulation);
        if (!f) r.Fail(*r.Find("formulation"), "formulation '" + ref.formulation + "' is unknown");
      }
      const std::string problem =
          CheckIntegratorChoice(ref.integrator, f.value_or(integrators::Formulation::kIndex1));
      if (!problem.empty()) {
        const bool known = problem.rfind("unknown integrator", 0) != 0;
        r.Fail(*r.Find(known && r.Has("formulation") ? "formulation" : "integrator"), problem);
      }
    }
    if (!ref.file.empty() && !std::filesystem::path(ref.file).is_absolute()) {
      ref.file = (std::filesystem::path(file_).parent_path() / ref.file).string();
    }
  }

  // ---- Spatial scenes (dimension: 3) ----------------------------------------------------------

  Scene ParseSpatial(const MapReader& top, Scene scene) {
    top.CheckKeys(Keys({"scene", "dimension", "description", "gravity", "include", "bodies",
                        "flexible_bodies", "joints", "drivers", "forces", "shapes", "contacts",
                        "simulation", "reference"}));
    scene.name = top.RequiredString("scene");
    if (!IsValidName(scene.name)) {
      top.Fail(top.Require("scene"), "scene name '" + scene.name + "' " + kNameRule);
    }
    scene.description = top.String("description", "");
    SpatialScene& sp = scene.spatial;
    sp.gravity = top.Vec3("gravity", sp.gravity, "[gx, gy, gz]");
    for (const YAML::Node& n : IncludeList(top)) IncludeUrdf(n, &scene);
    // Rigid bodies, then flexible bodies (engine::SpatialBody::beam), in one body numbering.
    const std::vector<YAML::Node> flexible = ListSection(top, "flexible_bodies");
    // An included robot or the flexible bodies may be all the bodies.
    if ((sp.bodies.empty() && flexible.empty()) || top.Has("bodies")) {
      const YAML::Node& bodies = top.Require("bodies");
      if (!bodies.IsSequence() || (bodies.size() == 0 && flexible.empty())) {
        top.Fail(bodies, "bodies must be a non-empty list ('- name: ...' entries), got " +
                             Describe(bodies));
      }
      for (std::size_t i = 0; i < bodies.size(); ++i) ParseSpatialBody(bodies[i], &scene);
    }
    for (std::size_t i = 0; i < flexible.size(); ++i) {
      ParseSpatialFlexibleBody(flexible[i], i, &scene);
    }
    for (const YAML::Node& n : ListSection(top, "joints")) ParseSpatialJoint(n, &scene);
    ResolveSpatialBoundaries(&sp);
    for (const YAML::Node& n : ListSection(top, "drivers")) ParseSpatialDriver(n, &scene);
    for (const YAML::Node& n : ListSection(top, "forces")) ParseSpatialForce(n, &scene);
    for (const YAML::Node& n : ListSection(top, "shapes")) ParseShape(n, &scene);
    ContactPairChoice choice = ParseContactPairs(top, &scene);
    ParseSimulation(top.Require("simulation"), &scene);
    // The pairs without their own `friction` get simulation.friction.
    choice.friction = scene.friction.friction;
    choice.resistance = scene.friction;
    SelectContactPairs(choice, shape_groups_, &sp);
    if (const YAML::Node* ref = top.Find("reference")) ParseReference(*ref, &scene);
    return scene;
  }

  // ---- `include:` of URDF robots (tools/urdf.h) ----------------------------------------------

  // `include:` a file name or {file, joint_positions}, or a list of them.
  std::vector<YAML::Node> IncludeList(const MapReader& top) const {
    const YAML::Node* node = top.Find("include");
    if (node == nullptr || node->IsNull()) return {};
    if (!node->IsSequence()) return {*node};
    return std::vector<YAML::Node>(node->begin(), node->end());
  }

  // Adds a URDF robot's bodies, joints, dampers, limits and shapes (in that order, after any
  // earlier include) as if they were listed in the scene, at the include's line. Shapes of links
  // joined by a joint are excluded from the contact pairs.
  void IncludeUrdf(const YAML::Node& node, Scene* scene) {
    SpatialScene& sp = scene->spatial;
    const int line = LineOf(node);
    std::string file;
    std::map<std::string, double> positions;
    if (node.IsMap()) {
      MapReader r(file_, node, "include");
      r.CheckKeys(Keys({"file", "joint_positions"}));
      file = r.RequiredString("file");
      if (const YAML::Node* jp = r.Find("joint_positions"); jp && !jp->IsNull()) {
        MapReader pr(file_, *jp, "include '" + file + "': joint_positions");
        for (const auto& item : *jp) {
          const std::string joint = item.first.Scalar();
          positions[joint] = pr.Number(joint, Range::kAny, 0.0);
        }
      }
    } else if (node.IsScalar()) {
      file = node.Scalar();
    } else {
      throw SceneError(file_, line,
                       "include: a URDF file name or {file: F, joint_positions: "
                       "{joint: value}}, got " +
                           Describe(node));
    }
    if (std::filesystem::path(file).extension() != ".urdf") {
      throw SceneError(file_, line, "include: '" + file + "' is not a .urdf file");
    }
    if (std::filesystem::path(file).is_relative()) {
      file = (std::filesystem::path(file_).parent_path() / file).string();
    }
    // Errors without a line in the URDF (the file cannot be read, an unknown joint in
    // joint_positions) are about the include: they name the scene's line.
    UrdfRobot robot;
    try {
      robot = ReadUrdf(file, positions);
    } catch (const SceneError& e) {
      if (e.line() > 0) throw;
      throw SceneError(file_, line, "include: " + std::string(e.what()));
    }
    const auto fail = [&](const std::string& what) { throw SceneError(file_, line, what); };
    const int body0 = static_cast<int>(sp.bodies.size());
    const int joint0 = static_cast<int>(sp.joints.size());
    const int shape0 = static_cast<int>(sp.shapes.size());
    const auto claim = [&](const std::string& name, const std::string& kind) {
      if (!IsValidName(name) || name == kGroundName) {
        fail(file + ": " + kind + " '" + name + "': name " + std::string(kNameRule));
      }
      if (!names_.try_emplace(name, kind, line).second) {
        fail(file + ": " + kind + " '" + name + "': duplicate name '" + name + "'");
      }
    };
    const auto body_of = [&](int b) { return b == engine::kGround ? b : body0 + b; };
    for (const engine::SpatialBody& b : robot.bodies) {
      claim(b.name, "body");
      body_index_[b.name] = static_cast<int>(sp.bodies.size());
      body_names_.push_back(b.name);
      sp.bodies.push_back(b);
      sp.body_lines.push_back(line);
    }
    for (engine::SpatialJoint j : robot.joints) {
      claim(j.name, "joint");
      j.body_a = body_of(j.body_a);
      j.body_b = body_of(j.body_b);
      joint_index_[j.name] = static_cast<int>(sp.joints.size());
      sp.joints.push_back(j);
      sp.joint_lines.push_back(line);
    }
    for (engine::SpatialTorsionalSpring d : robot.dampers) {
      claim(d.name, "force");
      d.joint += joint0;
      sp.torsional_springs.push_back(d);
      sp.torsional_lines.push_back(line);
    }
    for (contact::JointLimit l : robot.limits) {
      l.joint += joint0;
      sp.limits.push_back(l);
      sp.limit_lines.push_back(line);
    }
    for (std::size_t k = 0; k < robot.shapes.size(); ++k) {
      const std::string& name = robot.shapes[k].name();
      if (!IsValidName(name)) fail(file + ": shape '" + name + "': name " + std::string(kNameRule));
      if (shape_index_.count(name)) fail(file + ": duplicate shape name '" + name + "'");
      shape_index_[name] = static_cast<int>(sp.shapes.size());
      shape_groups_.push_back(static_cast<int>(sp.shapes.size()));
      sp.shapes.push_back(robot.shapes[k]);
      sp.shape_bodies.push_back(body_of(robot.shape_bodies[k]));
      sp.shape_lines.push_back(line);
      sp.shape_filters.push_back(contact::CollisionFilter{});
    }
    for (const auto& [i, j] : robot.adjacent_shapes) {
      implicit_excluded_.emplace(shape0 + i, shape0 + j);
    }
    for (const std::string& w : robot.warnings) {
      scene->warnings.push_back(WithLocation(file, 0, w));
    }
  }

  // ---- Shapes and contact pairs of spatial scenes (issue 4) -----------------------------------

  // A 32-bit collision bit set (`group`, `mask`): an integer in [0, 2^32 - 1].
  static std::uint32_t BitSet(const MapReader& r, std::string_view key, std::uint32_t fallback) {
    const YAML::Node* value = r.Find(key);
    if (value == nullptr) return fallback;
    std::optional<long> n;
    if (value->IsScalar()) n = ParseInteger(value->Scalar());
    if (!n || *n < 0 || *n > 4294967295L) {
      r.Fail(*value, std::string(key) + " must be an integer bit set in [0, 4294967295], got " +
                         Describe(*value));
    }
    return static_cast<std::uint32_t>(*n);
  }

  void ParseShape(const YAML::Node& node, Scene* scene) {
    SpatialScene& sp = scene->spatial;
    MapReader r(file_, node, "shape #" + std::to_string(sp.shapes.size() + 1));
    const std::string name = r.RequiredString("name");
    if (!IsValidName(name)) r.Fail(r.Require("name"), "name '" + name + "' " + kNameRule);
    if (const auto it = shape_index_.find(name); it != shape_index_.end()) {
      r.Fail(r.Require("name"),
             "duplicate shape name '" + name + "' (already used by the shape at line " +
                 std::to_string(sp.shape_lines[static_cast<std::size_t>(it->second)]) + ")");
    }
    r.SetItem("shape '" + name + "'");
    std::vector<std::string> parameters;
    const std::string type = Type(r, ShapeTypeParameters(), &parameters);
    const std::vector<std::string> common =
        Keys({"name", "body", "type", "position", "quaternion", "node", "group", "mask"});
    std::vector<std::string> all = common;
    for (const char* k :
         {"radius", "length", "half_size", "radii", "normal", "offset", "file", "per_triangle"}) {
      all.emplace_back(k);
    }
    std::vector<std::string> allowed = common;
    allowed.insert(allowed.end(), parameters.begin(), parameters.end());
    if (type == "triangle_mesh") allowed.emplace_back("per_triangle");
    r.CheckKeys(allowed, all, "a " + type + " shape");

    const int body = BodyRef(r, "body");
    // A shape on a flexible body is a sphere at one of its nodes (`node`, exclusive with the
    // pose: contact/spatial_contacts.h, "Contacts at nodes"), or swept along its whole centreline
    // (`node: centreline`; "Contacts along the centreline").
    const int at_node = NodeRef(r, "node", "position", body, sp.bodies, true);
    if (at_node != -1 && r.Has("quaternion")) {
      r.Fail(
          *r.Find("quaternion"),
          "node and quaternion are exclusive (the sphere at a node turns with the body's frame)");
    }
    if (body != engine::kGround && sp.bodies[static_cast<std::size_t>(body)].beam) {
      if (at_node == -1) {
        r.Fail(r.Require("body"), "a shape on the flexible body '" +
                                      sp.bodies[static_cast<std::size_t>(body)].name +
                                      "' needs `node: k` (a sphere at node k of its centreline) "
                                      "or `node: centreline` (a sphere swept along it)");
      }
      if (type != "sphere") {
        r.Fail(r.Require("type"),
               "a shape at a node of a flexible body must be a sphere (a point "
               "contact of that radius), got " +
                   type);
      }
    }
    Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
    pose.translation() = r.Vec3("position", Eigen::Vector3d::Zero(), "[x, y, z] (body frame)");
    if (const YAML::Node* qn = r.Find("quaternion")) {
      const Eigen::Vector4d Q =
          r.Vector("quaternion", 4, "[w, x, y, z]", Eigen::Vector4d(1, 0, 0, 0));
      if (!(std::abs(Q.norm() - 1.0) <= 1e-6)) {
        r.Fail(*qn, "quaternion must be a unit quaternion [w, x, y, z], got norm " +
                        FormatNumber(Q.norm()) + " (only norms within 1e-6 of 1 are normalized)");
      }
      pose.linear() = Eigen::Quaterniond(Q(0), Q(1), Q(2), Q(3)).normalized().toRotationMatrix();
    }
    const auto positive3 = [&](std::string_view key, std::string_view layout) {
      r.Require(key);
      const Eigen::Vector3d x = r.Vec3(key, Eigen::Vector3d::Zero(), layout);
      for (int i = 0; i < 3; ++i) {
        if (!(x[i] > 0)) {
          r.Fail(*r.Find(key), std::string(key) + " must have 3 entries > 0, got " +
                                   FormatNumber(x[i]) + " at position " + std::to_string(i));
        }
      }
      return x;
    };
    // The mesh file, relative to the scene file's folder.
    const auto mesh_path = [&]() {
      std::filesystem::path path(r.RequiredString("file"));
      if (path.is_relative()) path = std::filesystem::path(file_).parent_path() / path;
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec)) {
        r.Fail(*r.Find("file"), "mesh file '" + path.string() + "' is a directory, not a file");
      }
      return path.string();
    };
    using contact::Shape;
    std::optional<Shape> shape;
    try {
      if (type == "sphere") {
        shape = Shape::Sphere(r.RequiredNumber("radius", Range::kPositive), pose, name);
      } else if (type == "box") {
        shape = Shape::Box(positive3("half_size", "[hx, hy, hz] (half sizes)"), pose, name);
      } else if (type == "cylinder") {
        shape = Shape::Cylinder(r.RequiredNumber("radius", Range::kPositive),
                                r.RequiredNumber("length", Range::kPositive), pose, name);
      } else if (type == "capsule") {
        shape = Shape::Capsule(r.RequiredNumber("radius", Range::kPositive),
                               r.RequiredNumber("length", Range::kPositive), pose, name);
      } else if (type == "ellipsoid") {
        shape = Shape::Ellipsoid(positive3("radii", "[a, b, c]"), pose, name);
      } else if (type == "plane") {
        shape = Shape::Plane(NonZero3(r, "normal", Eigen::Vector3d::UnitZ()),
                             r.Number("offset", Range::kAny, 0.0), pose, name);
      } else if (type == "convex_mesh") {
        shape = Shape::ConvexMeshFromFile(mesh_path(), pose, name);
      } else {
        shape = Shape::TriangleMeshFromFile(mesh_path(), pose, name);
      }
    } catch (const SceneError&) {
      throw;  // a key of this shape, already "<file>:<line>: shape '<name>': ..."
    } catch (const std::invalid_argument& e) {
      const YAML::Node* at = r.Find("file");
      if (at == nullptr) at = &r.node();
      r.Fail(*at, e.what());
    }
    const contact::CollisionFilter filter{BitSet(r, "group", 1u), BitSet(r, "mask", 0xFFFFFFFFu)};
    std::vector<Shape> parts;
    if (type == "triangle_mesh" && r.Bool("per_triangle", false)) {
      // One shape (and so one contact row per pair) per planar face, named "<name>.<k>": a
      // concave surface then gives a separate gap for each face, so that crossing a crease is an
      // event of the face ahead instead of a jump of the nearest facet's normal.
      parts = PerTriangleShapes(*shape, name);
    } else {
      parts.push_back(*shape);
    }
    shape_index_[name] = static_cast<int>(sp.shapes.size());
    for (Shape& part : parts) {
      sp.shapes.push_back(std::move(part));
      sp.shape_nodes.resize(sp.shapes.size() - 1, -1);
      sp.shape_nodes.push_back(at_node);
      sp.shape_bodies.push_back(body);
      sp.shape_lines.push_back(r.line());
      sp.shape_filters.push_back(filter);
      shape_groups_.push_back(shape_index_[name]);
    }
  }

  // A [shape_a, shape_b] reference pair; returns the two shape indices.
  std::pair<int, int> ShapePair(const MapReader& r, const YAML::Node& value,
                                std::string_view key) const {
    if (!value.IsSequence() || value.size() != 2) {
      r.Fail(value, std::string(key) + " must be a list of two shape names [a, b], got " +
                        Describe(value));
    }
    int index[2] = {0, 0};
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string name = r.ToString(value[k], key);
      const auto it = shape_index_.find(name);
      if (it == shape_index_.end()) {
        std::vector<std::string> known;
        for (const auto& [n, i] : shape_index_) known.push_back(n);
        r.Fail(value[k], std::string(key) + ": '" + name + "' is not a shape" +
                             Suggestion(name, known) + " (shapes: " + JoinWords(known, ", ") + ")");
      }
      index[k] = it->second;
    }
    if (index[0] == index[1]) {
      r.Fail(value, std::string(key) + ": a shape cannot touch itself ('" +
                        r.ToString(value[0], key) + "' twice)");
    }
    return {std::min(index[0], index[1]), std::max(index[0], index[1])};
  }

  // Why shapes i and j can never form a pair (empty if they can).
  // (tools/scene_build.cc, shared with the Python SpatialBuilder).
  static std::string PairObstacle(const SpatialScene& sp, int i, int j) {
    return ContactPairObstacle(sp, i, j);
  }

  // `contacts:` of a spatial scene: which shape pairs get unilateral rows. All pairs by default
  // (except shapes on the same body, two shapes on the ground and two non-convex shapes),
  // filtered by the shapes' group/mask bits; `exclude` removes pairs, `pairs` adds pairs (needed
  // with `default: none`) and sets their restitution and friction. Returns the choice, for
  // SelectContactPairs once simulation.friction is known.
  ContactPairChoice ParseContactPairs(const MapReader& top, Scene* scene) {
    SpatialScene& sp = scene->spatial;
    bool all_pairs = true;
    std::set<std::pair<int, int>> excluded;
    std::map<std::pair<int, int>, ContactPairChoice::Listed> listed;
    if (const YAML::Node* section = top.Find("contacts"); section && !section->IsNull()) {
      if (section->IsSequence()) {  // the planar form, a list of contacts
        top.Fail(*section,
                 "contacts: a dimension: 3 scene selects pairs of shapes (a mapping with "
                 "default, exclude, pairs), not a list of planar contacts; a contact at a node of "
                 "a flexible body is a sphere shape with body and node: k");
      }
      MapReader r(file_, *section, "contacts");
      r.CheckKeys(Keys({"default", "exclude", "pairs"}));
      if (const YAML::Node* d = r.Find("default")) {
        const std::string value = r.ToString(*d, "default");
        if (value != "all" && value != "none") {
          r.Fail(*d,
                 "default must be 'all' (every shape pair may touch) or 'none' (only the "
                 "listed pairs), got '" +
                     value + "'");
        }
        all_pairs = value == "all";
      }
      if (const YAML::Node* ex = r.Find("exclude"); ex && !ex->IsNull()) {
        if (!ex->IsSequence()) {
          r.Fail(*ex, "exclude must be a list of shape pairs [[a, b], ...], got " + Describe(*ex));
        }
        for (std::size_t k = 0; k < ex->size(); ++k) {
          excluded.insert(ShapePair(r, (*ex)[k], "exclude[" + std::to_string(k) + "]"));
        }
      }
      for (const YAML::Node& item : ListSection(r, "pairs")) {
        MapReader pr(file_, item, "contact pair #" + std::to_string(listed.size() + 1));
        pr.CheckKeys(
            Keys({"shapes", "restitution", "friction", "rolling_friction", "spinning_friction"}));
        const std::pair<int, int> ij = ShapePair(pr, pr.Require("shapes"), "shapes");
        pr.SetItem("contact pair '" + sp.shapes[static_cast<std::size_t>(ij.first)].name() + "-" +
                   sp.shapes[static_cast<std::size_t>(ij.second)].name() + "'");
        if (const std::string why = PairObstacle(sp, ij.first, ij.second); !why.empty()) {
          pr.Fail(pr.Require("shapes"), why);
        }
        if (excluded.count(ij) != 0) pr.Fail(pr.Require("shapes"), "the pair is also excluded");
        if (listed.count(ij) != 0) {
          pr.Fail(pr.Require("shapes"), "the pair is listed twice (first at line " +
                                            std::to_string(listed[ij].line) + ")");
        }
        listed[ij] = {ij,
                      pr.Number("restitution", Range::kUnitInterval, -1.0),
                      pr.Number("friction", Range::kNonNegative, -1.0),
                      pr.Number("rolling_friction", Range::kNonNegative, -1.0),
                      pr.Number("spinning_friction", Range::kNonNegative, -1.0),
                      pr.line()};
        CheckResistanceShapes(pr, sp, ij);
      }
    }
    // `exclude` and `pairs` name shape items; a per-triangle mesh is one item of many shapes.
    ContactPairChoice choice;
    choice.all_pairs = all_pairs;
    excluded.insert(implicit_excluded_.begin(), implicit_excluded_.end());
    choice.excluded.assign(excluded.begin(), excluded.end());
    for (const auto& [items, value] : listed) choice.listed.push_back(value);
    return choice;
  }

  // A listed pair's rolling_friction or spinning_friction needs a sphere on one side
  // (contact/spatial_contacts.h, "Resistance rows").
  static void CheckResistanceShapes(const MapReader& pr, const SpatialScene& sp,
                                    std::pair<int, int> ij) {
    const auto sphere = [&](int i) {
      return sp.shapes[static_cast<std::size_t>(i)].type() == contact::ShapeType::kSphere;
    };
    if (sphere(ij.first) || sphere(ij.second)) return;
    for (const char* key : {"rolling_friction", "spinning_friction"}) {
      if (const YAML::Node* node = pr.Find(key)) {
        pr.Fail(*node, std::string(key) +
                           " applies to pairs with a sphere on one side (a single contact point "
                           "that can roll); neither shape of this pair is a sphere");
      }
    }
  }

  // A non-zero 3-vector (a direction; not normalized here, the engine normalizes).
  static Eigen::Vector3d NonZero3(const MapReader& r, std::string_view key,
                                  const Eigen::Vector3d& fallback) {
    const Eigen::Vector3d d = r.Vec3(key, fallback, "[x, y, z]");
    if (!(d.norm() > 1e-12)) {
      r.Fail(*r.Find(key), std::string(key) + " must be a non-zero vector, got [" +
                               FormatNumber(d.x()) + ", " + FormatNumber(d.y()) + ", " +
                               FormatNumber(d.z()) + "]");
    }
    return d;
  }

  // `inertia`: a number (J I), a list of 3 (diagonal) or a list of 3 rows of 3 (full tensor);
  // symmetric positive definite.
  static Eigen::Matrix3d SpatialInertia(const MapReader& r) {
    const YAML::Node& value = r.Require("inertia");
    const std::string what =
        "inertia must be a number, a list [Jxx, Jyy, Jzz] or a 3x3 matrix "
        "[[Jxx, Jxy, Jxz], [Jyx, Jyy, Jyz], [Jzx, Jzy, Jzz]] (kg m^2)";
    Eigen::Matrix3d J = Eigen::Matrix3d::Zero();
    if (value.IsScalar()) {
      J = r.ToNumber(value, "inertia", Range::kPositive) * Eigen::Matrix3d::Identity();
    } else if (value.IsSequence() && value.size() == 3 && value[0].IsScalar()) {
      for (int i = 0; i < 3; ++i) {
        J(i, i) = r.ToNumber(value[static_cast<std::size_t>(i)],
                             "inertia[" + std::to_string(i) + "]", Range::kAny);
      }
    } else if (value.IsSequence() && value.size() == 3) {
      for (int i = 0; i < 3; ++i) {
        const YAML::Node row = value[static_cast<std::size_t>(i)];
        if (!row.IsSequence() || row.size() != 3) r.Fail(row, what + ", got " + Describe(row));
        for (int j = 0; j < 3; ++j) {
          J(i, j) = r.ToNumber(row[static_cast<std::size_t>(j)],
                               "inertia[" + std::to_string(i) + "][" + std::to_string(j) + "]",
                               Range::kAny);
        }
      }
    } else {
      r.Fail(value, what + ", got " + Describe(value));
    }
    // Symmetry to ~round-off of the printed numbers: relative 1e-9 of the largest entry.
    const double scale = J.cwiseAbs().maxCoeff();
    for (int i = 0; i < 3; ++i) {
      for (int j = i + 1; j < 3; ++j) {
        if (std::abs(J(i, j) - J(j, i)) > 1e-9 * scale) {
          r.Fail(value, "inertia is not symmetric: J[" + std::to_string(i) + "][" +
                            std::to_string(j) + "] = " + FormatNumber(J(i, j)) + " but J[" +
                            std::to_string(j) + "][" + std::to_string(i) +
                            "] = " + FormatNumber(J(j, i)));
        }
      }
    }
    J = 0.5 * (J + J.transpose()).eval();
    const Eigen::Vector3d eig = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(J).eigenvalues();
    // Positive definite with a condition number below 1e12 (else singular for the solves).
    if (!(eig.minCoeff() > 1e-12 * std::max(scale, 0.0)) || !(scale > 0)) {
      r.Fail(value,
             "inertia must be positive definite (a singular or indefinite tensor has "
             "eigenvalues " +
                 FormatNumber(eig(0)) + ", " + FormatNumber(eig(1)) + ", " + FormatNumber(eig(2)) +
                 ")");
    }
    return J;
  }

  void ParseSpatialBody(const YAML::Node& node, Scene* scene) {
    SpatialScene& sp = scene->spatial;
    MapReader r(file_, node, "body #" + std::to_string(sp.bodies.size() + 1));
    engine::SpatialBody body;
    body.name = ClaimName(r, "body");
    r.CheckKeys(Keys({"name", "mass", "inertia", "com", "position", "quaternion", "velocity",
                      "angular_velocity"}));
    body.mass = r.RequiredNumber("mass", Range::kPositive);
    body.inertia = SpatialInertia(r);
    body.com = r.Vec3("com", Eigen::Vector3d::Zero(), "[x, y, z] (body frame)");
    ParseSpatialPose(r, &body, scene);
  }

  // The initial pose and velocity of a spatial body (rigid or flexible), then the body is added.
  void ParseSpatialPose(const MapReader& r, engine::SpatialBody* body, Scene* scene) {
    SpatialScene& sp = scene->spatial;
    body->position = r.Vec3("position", Eigen::Vector3d::Zero(), "[x, y, z]");
    if (const YAML::Node* qn = r.Find("quaternion")) {
      const Eigen::Vector4d Q =
          r.Vector("quaternion", 4, "[w, x, y, z]", Eigen::Vector4d(1, 0, 0, 0));
      const double norm = Q.norm();
      if (!(std::abs(norm - 1.0) <= 1e-6)) {
        r.Fail(*qn, "quaternion must be a unit quaternion [w, x, y, z], got norm " +
                        FormatNumber(norm) + " (only norms within 1e-6 of 1 are normalized)");
      }
      // Warn when the norm differs from 1 by more than the round-off of 17-digit input.
      if (std::abs(norm - 1.0) > 1e-14) {
        scene->warnings.push_back(WithLocation(
            file_, LineOf(*qn),
            r.item() + ": quaternion normalized (its norm was " + FormatNumber(norm) + ")"));
      }
      body->quaternion = Q / norm;
    }
    body->velocity = r.Vec3("velocity", Eigen::Vector3d::Zero(), "[vx, vy, vz] (world frame)");
    body->angular_velocity =
        r.Vec3("angular_velocity", Eigen::Vector3d::Zero(), "[wx, wy, wz] (body frame)");
    body_index_[body->name] = static_cast<int>(sp.bodies.size());
    body_names_.push_back(body->name);
    sp.bodies.push_back(*body);
    sp.body_lines.push_back(r.line());
  }

  // A spatial flexible beam (engine/flexible_beam_spatial.h): the keys of the planar one (the
  // Craig–Bampton reduction too, its default boundary the nodes where joints attach:
  // ResolveSpatialBoundaries), with the second moment of the x–z plane (`second_moment_xz`;
  // or width along z and height along y of a rectangle: I_xy = w h³/12, I_xz = h w³/12), the
  // optional St Venant torsion (ReadBeamTorsion: the torsion modes count in `modes`) and the
  // spatial pose.
  void ParseSpatialFlexibleBody(const YAML::Node& node, std::size_t index, Scene* scene) {
    MapReader r(file_, node, "flexible body #" + std::to_string(index + 1));
    engine::SpatialBody body;
    body.name = ClaimName(r, "flexible body");
    r.CheckKeys(Keys({"name",
                      "length",
                      "E",
                      "density",
                      "area",
                      "second_moment",
                      "second_moment_xz",
                      "width",
                      "height",
                      "shear_modulus",
                      "poisson_ratio",
                      "torsion_constant",
                      "elements",
                      "modes",
                      "reference",
                      "reduction",
                      "boundary_nodes",
                      "geometric_stiffening",
                      "rayleigh_alpha",
                      "rayleigh_beta",
                      "modal_damping",
                      "position",
                      "quaternion",
                      "velocity",
                      "angular_velocity",
                      "modal_position",
                      "modal_velocity"}));
    engine::BeamProperties beam = ReadBeamGeometry(r, &body.second_moment_xz);
    body.torsion = ReadBeamTorsion(r, beam, body.second_moment_xz);
    beam.modes = r.Integer("modes", 1, 2);
    const int available = engine::AvailableSpatialModes(beam.elements, body.torsion.has_value());
    if (beam.modes > available) {
      r.Fail(*r.Find("modes"), "modes must be at most " + std::to_string(available) +
                                   (body.torsion ? " (the axial, two-plane bending and torsion "
                                                 : " (the axial and two-plane bending ") +
                                   "modes of " + std::to_string(beam.elements) +
                                   " elements), got " + std::to_string(beam.modes));
    }
    if (ParseReduction(r, &beam)) {
      CheckFewestModes(r, beam, body.torsion.has_value());
    } else {
      pending_spatial_boundaries_.emplace_back(static_cast<int>(scene->spatial.bodies.size()),
                                               node);
    }
    ReadBeamStiffeningAndDamping(r, &beam);
    body.beam = beam;
    if (r.Has("modal_position")) {
      body.modal_position = r.Vector("modal_position", beam.modes, "[eta1, ..., eta_m] (m = modes)",
                                     Eigen::VectorXd());
    }
    if (r.Has("modal_velocity")) {
      body.modal_velocity = r.Vector("modal_velocity", beam.modes,
                                     "[veta1, ..., veta_m] (m = modes)", Eigen::VectorXd());
    }
    ParseSpatialPose(r, &body, scene);
  }

  // Initial pose of a body (ground: identity).
  static Eigen::Matrix3d InitialRotation(const SpatialScene& sp, int body) {
    if (body == engine::kGround) return Eigen::Matrix3d::Identity();
    const Eigen::Vector4d& Q = sp.bodies[static_cast<std::size_t>(body)].quaternion;
    return Eigen::Quaterniond(Q(0), Q(1), Q(2), Q(3)).normalized().toRotationMatrix();
  }
  static Eigen::Vector3d InitialOrigin(const SpatialScene& sp, int body) {
    if (body == engine::kGround) return Eigen::Vector3d::Zero();
    return sp.bodies[static_cast<std::size_t>(body)].position;
  }
  // Body-b coordinates of the point or direction that body a's `s` has initially.
  static Eigen::Vector3d PointInB(const SpatialScene& sp, int a, int b, const Eigen::Vector3d& s) {
    const Eigen::Vector3d world = InitialOrigin(sp, a) + InitialRotation(sp, a) * s;
    return InitialRotation(sp, b).transpose() * (world - InitialOrigin(sp, b));
  }
  static Eigen::Vector3d DirectionInB(const SpatialScene& sp, int a, int b,
                                      const Eigen::Vector3d& u) {
    return InitialRotation(sp, b).transpose() * (InitialRotation(sp, a) * u);
  }

  // arm_a / arm_b (engine::SpatialJoint::arm_a, SpatialSpringDamper::arm_a): a point of the
  // node's section, only with node_a / node_b.
  static void ReadArms(const MapReader& r, int node_a, int node_b, Eigen::Vector3d* arm_a,
                       Eigen::Vector3d* arm_b) {
    for (const auto& [arm_key, node_key, node_index, arm] :
         {std::tuple("arm_a", "node_a", node_a, arm_a),
          std::tuple("arm_b", "node_b", node_b, arm_b)}) {
      if (!r.Has(arm_key)) continue;
      if (node_index < 0) {
        r.Fail(*r.Find(arm_key), std::string(arm_key) + " needs " + node_key +
                                     " (an arm is a point of a node's section)");
      }
      *arm = r.Vec3(arm_key, Eigen::Vector3d::Zero(), "[x, y, z] (the node's section axes)");
    }
  }

  // Node k's undeformed place in the frame of flexible body `body`: (X_k, 0, 0).
  static Eigen::Vector3d NodePoint(const SpatialScene& sp, int body, int k) {
    const engine::BeamProperties& beam = *sp.bodies[static_cast<std::size_t>(body)].beam;
    return {beam.length * k / beam.elements, 0.0, 0.0};
  }
  void ParseSpatialJoint(const YAML::Node& node, Scene* scene) {
    SpatialScene& sp = scene->spatial;
    MapReader r(file_, node, "joint #" + std::to_string(sp.joints.size() + 1));
    engine::SpatialJoint joint;
    joint.name = ClaimName(r, "joint");
    using T = engine::SpatialJointType;
    const std::string type = Type(r, SpatialJointTypes(), &joint.type);
    const std::vector<std::string> all =
        Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "axis_a", "axis_b", "ref_a",
              "ref_b", "length", "limits", "node_a", "node_b", "arm_a", "arm_b"});
    const bool has_axes = joint.type != T::kSpherical && joint.type != T::kDistance;
    if (joint.type == T::kSpherical) {
      r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "node_a",
                        "node_b", "arm_a", "arm_b"}),
                  all, "a spherical joint");
    } else if (joint.type == T::kDistance) {
      r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "node_a",
                        "node_b", "arm_a", "arm_b", "length"}),
                  all, "a distance joint");
    } else if (joint.type == T::kRevolute || joint.type == T::kPrismatic) {
      r.CheckKeys(
          Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "axis_a", "axis_b",
                "ref_a", "ref_b", "limits", "node_a", "node_b", "arm_a", "arm_b"}),
          all, "a " + type + " joint");
    } else {
      r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "axis_a",
                        "axis_b", "ref_a", "ref_b", "node_a", "node_b", "arm_a", "arm_b"}),
                  all, "a " + type + " joint");
    }
    joint.body_a = BodyRef(r, "body_a");
    joint.body_b = BodyRef(r, "body_b");
    RequireDistinct(r, joint.body_a, joint.body_b);
    joint.node_a = NodeRef(r, "node_a", "point_a", joint.body_a, sp.bodies);
    joint.node_b = NodeRef(r, "node_b", "point_b", joint.body_b, sp.bodies);
    joint.point_a = r.Vec3("point_a", Eigen::Vector3d::Zero(), "[x, y, z] (body_a frame)");
    ReadArms(r, joint.node_a, joint.node_b, &joint.arm_a, &joint.arm_b);
    const Eigen::Vector3d s_a =
        joint.node_a >= 0 ? Eigen::Vector3d(NodePoint(sp, joint.body_a, joint.node_a) + joint.arm_a)
                          : joint.point_a;
    joint.point_b = joint.node_b >= 0
                        ? Eigen::Vector3d::Zero().eval()
                        : r.Vec3("point_b", PointInB(sp, joint.body_a, joint.body_b, s_a),
                                 "[x, y, z] (body_b frame)");
    if (has_axes) {
      joint.axis_a = NonZero3(r, "axis_a", Eigen::Vector3d::UnitZ());
      if (joint.type == T::kUniversal && !r.Has("axis_b")) {
        r.Fail("a universal joint needs axis_b (perpendicular to axis_a when assembled)");
      }
      joint.axis_b =
          NonZero3(r, "axis_b", DirectionInB(sp, joint.body_a, joint.body_b, joint.axis_a));
      joint.ref_a = r.Has("ref_a") ? NonZero3(r, "ref_a", Eigen::Vector3d::UnitX())
                                   : Eigen::Vector3d::Zero().eval();
      joint.ref_b =
          r.Has("ref_b")
              ? NonZero3(r, "ref_b", Eigen::Vector3d::UnitX())
              : (r.Has("ref_a") ? DirectionInB(sp, joint.body_a, joint.body_b, joint.ref_a)
                                : Eigen::Vector3d::Zero().eval());
    }
    if (joint.type == T::kDistance) {
      const double initial =
          (InitialOrigin(sp, joint.body_b) + InitialRotation(sp, joint.body_b) * joint.point_b -
           InitialOrigin(sp, joint.body_a) - InitialRotation(sp, joint.body_a) * joint.point_a)
              .norm();
      joint.length = r.Number("length", Range::kPositive, initial);
      if (!(joint.length > 0)) {
        r.Fail("length must be > 0: give it, or points that are apart initially");
      }
    }
    if (const YAML::Node* limits = r.Find("limits")) {
      ParseJointLimits(file_, *limits, joint.name, static_cast<int>(sp.joints.size()), &sp);
    }
    joint_index_[joint.name] = static_cast<int>(sp.joints.size());
    sp.joints.push_back(joint);
    sp.joint_lines.push_back(r.line());
  }

  // `limits: {lower: L, upper: U, restitution: e}` of joint `joint` (rad or m): the stops of
  // contact/joint_limits.h, rows "<joint>.lower" and "<joint>.upper".
  static void ParseJointLimits(const std::string& file, const YAML::Node& node,
                               const std::string& joint_name, int joint, SpatialScene* sp) {
    MapReader r(file, node, "joint '" + joint_name + "': limits");
    r.CheckKeys(Keys({"lower", "upper", "restitution"}));
    contact::JointLimit limit;
    limit.name = joint_name;
    limit.joint = joint;
    limit.lower = r.RequiredNumber("lower", Range::kAny);
    limit.upper = r.RequiredNumber("upper", Range::kAny);
    if (!(limit.lower < limit.upper)) r.Fail("lower must be < upper");
    limit.restitution = r.Number("restitution", Range::kUnitInterval, -1.0);
    sp->limits.push_back(limit);
    sp->limit_lines.push_back(r.line());
  }

  // A joint reference by name, for drivers and torsional springs.
  int JointRef(const MapReader& r, std::string_view key) const {
    const YAML::Node& value = r.Require(key);
    const std::string name = r.ToString(value, key);
    const auto it = joint_index_.find(name);
    if (it == joint_index_.end()) {
      std::vector<std::string> known;
      for (const auto& [n, i] : joint_index_) known.push_back(n);
      r.Fail(value, std::string(key) + " '" + name + "' is not a joint" + Suggestion(name, known) +
                        " (joints: " + (known.empty() ? "none" : JoinWords(known, ", ")) + ")");
    }
    return it->second;
  }

  // A TimeProfile from `profile` (constant_rate, polynomial, sine or spin_up) and its keys in `r`;
  // checks the keys of `r` against `own` plus that profile's keys.
  static engine::TimeProfile ParseProfile(const MapReader& r, std::vector<std::string> own,
                                          const std::string& label) {
    engine::TimeProfile p;
    const std::vector<std::string> kinds = Keys({"constant_rate", "polynomial", "sine", "spin_up"});
    const YAML::Node& value = r.Require("profile");
    const std::string kind = r.ToString(value, "profile");
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      r.Fail(value, "profile '" + kind + "' is unknown" + Suggestion(kind, kinds) +
                        " (use constant_rate, polynomial, sine or spin_up)");
    }
    std::vector<std::string> all = own;
    for (const char* k :
         {"value0", "rate", "coefficients", "amplitude", "frequency", "phase", "duration"}) {
      all.emplace_back(k);
    }
    std::vector<std::string> allowed = own;
    if (kind == "constant_rate") {
      p.kind = engine::TimeProfile::Kind::kConstantRate;
      allowed.insert(allowed.end(), {"value0", "rate"});
    } else if (kind == "polynomial") {
      p.kind = engine::TimeProfile::Kind::kPolynomial;
      allowed.emplace_back("coefficients");
    } else if (kind == "sine") {
      p.kind = engine::TimeProfile::Kind::kSine;
      allowed.insert(allowed.end(), {"value0", "amplitude", "frequency", "phase"});
    } else {
      p.kind = engine::TimeProfile::Kind::kSpinUp;
      allowed.insert(allowed.end(), {"value0", "rate", "duration"});
    }
    r.CheckKeys(allowed, all, label + " with a " + kind + " profile");
    p.value0 = r.Number("value0", Range::kAny, 0.0);
    p.rate = r.Number("rate", Range::kAny, 0.0);
    p.amplitude = r.Number("amplitude", Range::kAny, 0.0);
    p.frequency = r.Number("frequency", Range::kAny, 0.0);
    p.phase = r.Number("phase", Range::kAny, 0.0);
    if (p.kind == engine::TimeProfile::Kind::kSpinUp) {
      p.duration = r.RequiredNumber("duration", Range::kPositive);
    }
    if (p.kind == engine::TimeProfile::Kind::kPolynomial) {
      const YAML::Node& c = r.Require("coefficients");
      if (!c.IsSequence() || c.size() == 0) {
        r.Fail(c, "coefficients must be a non-empty list [c0, c1, ...] (phi = sum c_k t^k), got " +
                      Describe(c));
      }
      for (std::size_t k = 0; k < c.size(); ++k) {
        p.coefficients.push_back(
            r.ToNumber(c[k], "coefficients[" + std::to_string(k) + "]", Range::kAny));
      }
    }
    return p;
  }

  void ParseSpatialDriver(const YAML::Node& node, Scene* scene) {
    SpatialScene& sp = scene->spatial;
    MapReader r(file_, node, "driver #" + std::to_string(sp.drivers.size() + 1));
    engine::SpatialDriver driver;
    driver.name = ClaimName(r, "driver");
    driver.profile = ParseProfile(r, Keys({"name", "joint", "kind", "profile"}), "a driver");
    driver.joint = JointRef(r, "joint");
    using T = engine::SpatialJointType;
    const engine::SpatialJoint& joint = sp.joints[static_cast<std::size_t>(driver.joint)];
    driver.kind =
        DriverKindOf(r, joint.name, joint.type == T::kRevolute || joint.type == T::kCylindrical,
                     joint.type == T::kPrismatic || joint.type == T::kCylindrical,
                     "revolute or cylindrical", "prismatic or cylindrical");
    sp.drivers.push_back(driver);
    sp.driver_lines.push_back(r.line());
  }

  void ParseSpatialForce(const YAML::Node& node, Scene* scene) {
    SpatialScene& sp = scene->spatial;
    MapReader r(file_, node,
                "force #" + std::to_string(sp.springs.size() + sp.torsional_springs.size() +
                                           sp.loads.size() + sp.prismatic_frictions.size() + 1));
    const std::string name = ClaimName(r, "force");
    const std::string type =
        Type(r, Keys({"spring_damper", "torsional_spring", "load", "prismatic_friction"}));
    const std::vector<std::string> all = Keys(
        {"name",        "type",  "body_a", "body_b", "point_a", "point_b", "stiffness", "damping",
         "rest_length", "joint", "angle0", "body",   "force",   "point",   "node",      "torque",
         "scale",       "mu",    "node_a", "node_b", "arm_a",   "arm_b"});
    if (type == "spring_damper") {
      r.CheckKeys(Keys({"name", "type", "body_a", "body_b", "point_a", "point_b", "node_a",
                        "node_b", "arm_a", "arm_b", "stiffness", "damping", "rest_length"}),
                  all, "a spring_damper force");
      engine::SpatialSpringDamper s;
      s.name = name;
      s.body_a = BodyRef(r, "body_a");
      s.body_b = BodyRef(r, "body_b");
      RequireDistinct(r, s.body_a, s.body_b);
      s.point_a = r.Vec3("point_a", Eigen::Vector3d::Zero(), "[x, y, z] (body_a frame)");
      s.point_b = r.Vec3("point_b", Eigen::Vector3d::Zero(), "[x, y, z] (body_b frame)");
      s.node_a = NodeRef(r, "node_a", "point_a", s.body_a, sp.bodies);
      s.node_b = NodeRef(r, "node_b", "point_b", s.body_b, sp.bodies);
      ReadArms(r, s.node_a, s.node_b, &s.arm_a, &s.arm_b);
      s.stiffness = r.RequiredNumber("stiffness", Range::kNonNegative);
      s.damping = r.Number("damping", Range::kNonNegative, 0.0);
      // The ends' undeformed places in their body frames: a node at (X_k, 0, 0) plus its arm.
      const Eigen::Vector3d s_a =
          s.node_a >= 0 ? Eigen::Vector3d(NodePoint(sp, s.body_a, s.node_a) + s.arm_a) : s.point_a;
      const Eigen::Vector3d s_b =
          s.node_b >= 0 ? Eigen::Vector3d(NodePoint(sp, s.body_b, s.node_b) + s.arm_b) : s.point_b;
      const double initial = (InitialOrigin(sp, s.body_b) + InitialRotation(sp, s.body_b) * s_b -
                              InitialOrigin(sp, s.body_a) - InitialRotation(sp, s.body_a) * s_a)
                                 .norm();
      s.rest_length = r.Number("rest_length", Range::kNonNegative, initial);
      sp.springs.push_back(s);
      sp.spring_lines.push_back(r.line());
    } else if (type == "prismatic_friction") {
      r.CheckKeys(Keys({"name", "type", "joint", "mu"}), all, "a prismatic_friction force");
      engine::SpatialPrismaticFriction fr;
      fr.name = name;
      fr.joint = JointRef(r, "joint");
      const engine::SpatialJoint& j = sp.joints[static_cast<std::size_t>(fr.joint)];
      if (j.type != engine::SpatialJointType::kPrismatic) {
        r.Fail(*r.Find("joint"),
               "prismatic friction needs a prismatic joint; '" + j.name + "' is not one");
      }
      fr.mu = r.RequiredNumber("mu", Range::kNonNegative);
      sp.prismatic_frictions.push_back(fr);
      sp.friction_lines.push_back(r.line());
    } else if (type == "torsional_spring") {
      r.CheckKeys(Keys({"name", "type", "joint", "stiffness", "damping", "angle0"}), all,
                  "a torsional_spring force");
      engine::SpatialTorsionalSpring s;
      s.name = name;
      s.joint = JointRef(r, "joint");
      const engine::SpatialJoint& j = sp.joints[static_cast<std::size_t>(s.joint)];
      if (j.type != engine::SpatialJointType::kRevolute) {
        r.Fail(*r.Find("joint"),
               "a torsional spring needs a revolute joint; '" + j.name + "' is not one");
      }
      s.stiffness = r.RequiredNumber("stiffness", Range::kNonNegative);
      s.damping = r.Number("damping", Range::kNonNegative, 0.0);
      s.angle0 = r.Number("angle0", Range::kAny, 0.0);
      sp.torsional_springs.push_back(s);
      sp.torsional_lines.push_back(r.line());
    } else {
      r.CheckKeys(Keys({"name", "type", "body", "force", "point", "node", "torque", "scale"}), all,
                  "a load force");
      engine::SpatialLoad load;
      load.name = name;
      load.body = BodyRef(r, "body", /*allow_ground=*/false);
      load.force = r.Vec3("force", Eigen::Vector3d::Zero(), "[fx, fy, fz] (world frame)");
      load.point = r.Vec3("point", Eigen::Vector3d::Zero(), "[x, y, z] (body frame)");
      load.node = NodeRef(r, "node", "point", load.body, sp.bodies);
      load.torque = r.Vec3("torque", Eigen::Vector3d::Zero(), "[tx, ty, tz] (world frame)");
      if (const YAML::Node* sc = r.Find("scale")) {
        MapReader sr(file_, *sc, r.item() + ": scale");
        load.scale = ParseProfile(sr, Keys({"profile"}), "a load scale");
      }
      sp.loads.push_back(load);
      sp.load_lines.push_back(r.line());
    }
  }

  void ParseSimulation(const YAML::Node& node, Scene* scene) {
    MapReader r(file_, node, "simulation");
    r.CheckKeys(SimulationKeys());
    scene->lines.simulation = r.line();
    events::SimulationOptions& o = scene->options;
    integrators::IntegratorOptions& io = o.integrator_options;
    scene->t_end = r.RequiredNumber("t_end", Range::kPositive);

    o.integrator = r.String("integrator", o.integrator);
    scene->lines.integrator = r.Has("integrator") ? LineOf(*r.Find("integrator")) : r.line();
    // Without `formulation`, the integrator's first (its default; an unknown integrator is
    // reported below).
    io.formulation = DefaultFormulation(o.integrator).value_or(io.formulation);
    scene->formulation_given = r.Has("formulation");
    if (const YAML::Node* f = r.Find("formulation")) {
      const std::string name = r.ToString(*f, "formulation");
      const std::optional<integrators::Formulation> parsed = integrators::ParseFormulation(name);
      if (!parsed) {
        r.Fail(*f, "formulation '" + name + "' is unknown" +
                       Suggestion(name, Keys({"index1", "index2", "index3", "ggl"})) +
                       " (use index1, index2, index3 or ggl)");
      }
      io.formulation = *parsed;
    }
    if (const std::string problem = CheckIntegratorChoice(o.integrator, io.formulation);
        !problem.empty()) {
      // Point at the integrator when it is unknown, else at the unsupported formulation.
      const bool known = std::any_of(
          integrators::IntegratorTable().begin(), integrators::IntegratorTable().end(),
          [&](const integrators::IntegratorEntry& e) { return e.name == o.integrator; });
      const YAML::Node* at = r.Find(known && r.Has("formulation") ? "formulation" : "integrator");
      r.Fail(at ? *at : r.node(), problem);
    }

    io.rtol = r.Number("rtol", Range::kPositive, io.rtol);
    io.atol = r.Number("atol", Range::kPositive, io.atol);
    io.h_min = r.Number("h_min", Range::kPositive, io.h_min);
    io.h_max = r.Number("h_max", Range::kPositive, io.h_max);
    if (io.h_max < io.h_min) {
      r.Fail(*r.Find(r.Has("h_max") ? "h_max" : "h_min"), "h_max (" + FormatNumber(io.h_max) +
                                                              ") must be >= h_min (" +
                                                              FormatNumber(io.h_min) + ")");
    }
    io.h_init = r.Number("h_init", Range::kNonNegative, io.h_init);
    io.adaptive = r.Bool("adaptive", io.adaptive);
    if (!io.adaptive && !(io.h_init > 0)) {
      r.Fail(*r.Find("adaptive"), "adaptive: false needs a constant step h_init > 0");
    }
    const bool time_stepping = o.integrator == timestepping::kMoreauJeanName;
    ParseHybrid(r, time_stepping, scene);
    const bool hybrid = scene->hybrid.enabled;
    // `step`: a fixed step, the same as h_init = step with adaptive: false; with hybrid: on, the
    // step of the time-stepping phases (the event loop keeps its adaptive steps).
    if (const YAML::Node* step = r.Find("step")) {
      if (r.Has("h_init") || r.Has("adaptive")) {
        r.Fail(*step, "step fixes the step size: give either step or h_init/adaptive");
      }
      if (hybrid) {
        scene->hybrid.step = r.Number("step", Range::kPositive, 0.0);
      } else {
        io.h_init = r.Number("step", Range::kPositive, 0.0);
        io.adaptive = false;
      }
    }
    if (time_stepping && !(io.h_init > 0 && !io.adaptive)) {
      r.Fail(r.Has("integrator") ? *r.Find("integrator") : r.node(),
             "integrator moreau_jean needs a fixed step: simulation.step (s), e.g. step: 1.0e-3");
    }
    timestepping::SceneKeys& ts = scene->time_stepping;
    for (const char* key :
         {"theta", "speculative", "project_contacts", "sleeping", "sleep_speed", "sleep_time"}) {
      const YAML::Node* given = r.Find(key);
      if (given != nullptr && !time_stepping && !hybrid) {
        r.Fail(*given,
               std::string(key) + " is a parameter of integrator moreau_jean (or of hybrid: on)");
      }
    }
    if (const YAML::Node* theta = r.Find("theta")) {
      ts.theta = r.Number("theta", Range::kPositive, ts.theta);
      if (ts.theta < 0.5 || ts.theta > 1.0) r.Fail(*theta, "theta must be in [0.5, 1]");
    }
    ts.speculative = r.Bool("speculative", ts.speculative);
    if (r.Has("project_contacts")) ts.project_contacts = r.Bool("project_contacts", true);
    ts.sleeping = r.Bool("sleeping", ts.sleeping);
    ts.sleep_speed = r.Number("sleep_speed", Range::kPositive, ts.sleep_speed);
    ts.sleep_time = r.Number("sleep_time", Range::kPositive, ts.sleep_time);
    io.safety = r.Number("safety", Range::kPositive, io.safety);
    if (const YAML::Node* c = r.Find("error_control")) {
      const std::string value = r.ToString(*c, "error_control");
      const std::optional<integrators::ErrorControl> control =
          integrators::ParseErrorControl(value);
      if (!control) {
        r.Fail(*c, "error_control '" + value + "' is unknown" +
                       Suggestion(value, Keys({"per_step", "per_unit_step"})) +
                       " (use per_step or per_unit_step)");
      }
      io.error_control = *control;
    }
    if (io.safety > 1) r.Fail(*r.Find("safety"), "safety must be in (0, 1]");
    // Spectral radius at infinity of the generalized-α schemes (Haddouni et al. 2017, after
    // eq. 16); ignored by the other integrators.
    io.rho_inf = r.Number("rho_inf", Range::kNonNegative, io.rho_inf);
    if (io.rho_inf > 1) r.Fail(*r.Find("rho_inf"), "rho_inf must be in [0, 1]");
    io.fac_min = r.Number("fac_min", Range::kPositive, io.fac_min);
    if (io.fac_min > 1) r.Fail(*r.Find("fac_min"), "fac_min must be in (0, 1]");
    io.fac_max = r.Number("fac_max", Range::kPositive, io.fac_max);
    if (io.fac_max < 1) r.Fail(*r.Find("fac_max"), "fac_max must be >= 1");
    io.newton_tol = r.Number("newton_tol", Range::kPositive, io.newton_tol);
    io.max_newton_iterations =
        r.Integer("max_newton_iterations", 1, io.max_newton_iterations, kMaxIterations);

    o.output_step = r.Number("output_step", Range::kNonNegative, o.output_step);
    scene->lines.output_step = r.Has("output_step") ? LineOf(*r.Find("output_step")) : r.line();
    scene->max_output_rows = r.Number("max_output_rows", Range::kPositive, kDefaultMaxOutputRows);
    if (scene->max_output_rows < 1)
      r.Fail(*r.Find("max_output_rows"), "max_output_rows must be >= 1");
    CheckOutputRows(*scene);
    scene->max_output_bytes =
        r.Number("max_output_bytes", Range::kPositive, kDefaultMaxOutputBytes);
    if (scene->max_output_bytes < 1)
      r.Fail(*r.Find("max_output_bytes"), "max_output_bytes must be >= 1");
    o.restitution = r.Number("restitution", Range::kUnitInterval, o.restitution);
    o.restitution_threshold =
        r.Number("restitution_threshold", Range::kNonNegative, o.restitution_threshold);
    if (const YAML::Node* t = r.Find("thresholds")) {
      MapReader th(file_, *t, "simulation.thresholds");
      th.CheckKeys(Keys({"gap", "velocity", "force"}));
      o.thresholds.tau0 = th.Number("gap", Range::kPositive, o.thresholds.tau0);
      o.thresholds.tau1 = th.Number("velocity", Range::kPositive, o.thresholds.tau1);
      o.thresholds.tau3 = th.Number("force", Range::kPositive, o.thresholds.tau3);
    }

    io.project = r.Bool("projection", io.project);
    io.projection_tol = r.Number("projection_tolerance", Range::kPositive, io.projection_tol);
    if (const YAML::Node* m = r.Find("projection_metric")) {
      const std::string metric = r.ToString(*m, "projection_metric");
      if (metric == "mass") {
        io.projection_metric = engine::ProjectionMetric::kMass;
      } else if (metric == "identity") {
        io.projection_metric = engine::ProjectionMetric::kIdentity;
      } else {
        r.Fail(*m, "projection_metric '" + metric + "' is unknown (use mass or identity)");
      }
    }
    o.projection.metric = io.projection_metric;
    o.projection.tolerance =
        r.Number("event_projection_tolerance", Range::kPositive, o.projection.tolerance);
    o.projection.max_iterations =
        r.Integer("projection_max_iterations", 1, o.projection.max_iterations, kMaxIterations);

    if (const YAML::Node* s = r.Find("lcp_solver")) {
      const std::string solver = r.ToString(*s, "lcp_solver");
      const std::optional<contact::LcpSolver> parsed = contact::ParseLcpSolver(solver);
      if (!parsed) {
        r.Fail(*s, "lcp_solver '" + solver + "' is unknown" +
                       Suggestion(solver, Keys({"lemke", "pgs", "enum"})) +
                       " (use lemke, pgs or enum)");
      }
      o.lcp.solver = *parsed;
    }
    o.lcp.tolerance = r.Number("lcp_tolerance", Range::kPositive, o.lcp.tolerance);
    o.lcp.max_iterations =
        r.Integer("lcp_max_iterations", 1, o.lcp.max_iterations, kMaxLcpIterations);

    o.event_samples = r.Integer("event_samples", 0, o.event_samples, kMaxEventSamples);
    o.root_tolerance = r.Number("root_tolerance", Range::kPositive, o.root_tolerance);
    if (const YAML::Node* z = r.Find("zeno")) {
      MapReader zr(file_, *z, "simulation.zeno");
      zr.CheckKeys(Keys({"max_events", "window"}));
      o.zeno_max_events = zr.Integer("max_events", 1, o.zeno_max_events, kMaxLcpIterations);
      o.zeno_window = zr.Number("window", Range::kPositive, o.zeno_window);
    }
    ParseFrictionOptions(r, scene);
    if (const YAML::Node* te = r.Find("time_events")) {
      if (!te->IsSequence()) {
        r.Fail(*te, "time_events must be a list of times, got " + Describe(*te));
      }
      for (std::size_t i = 0; i < te->size(); ++i) {
        o.time_events.push_back(
            r.ToNumber((*te)[i], "time_events[" + std::to_string(i) + "]", Range::kNonNegative));
      }
      std::sort(o.time_events.begin(), o.time_events.end());
    }
  }

  // simulation.hybrid (on / off, true / false) and its criteria (tools/hybrid_options.h): the
  // criteria only with hybrid on, hybrid only with an event-loop integrator.
  void ParseHybrid(const MapReader& r, bool time_stepping, Scene* scene) const {
    HybridOptions& h = scene->hybrid;
    if (const YAML::Node* node = r.Find("hybrid")) {
      const std::string value = node->IsScalar() ? node->Scalar() : std::string();
      if (value == "on" || value == "true" || value == "True" || value == "TRUE") {
        h.enabled = true;
      } else if (!(value == "off" || value == "false" || value == "False" || value == "FALSE")) {
        r.Fail(*node, "hybrid must be on or off (true or false), got " + Describe(*node));
      }
      if (h.enabled && time_stepping) {
        r.Fail(*node,
               "hybrid: on switches between the event loop and moreau_jean: choose an "
               "event-loop integrator (e.g. dopri5), not moreau_jean");
      }
    }
    for (const char* key :
         {"hybrid_events", "hybrid_window", "hybrid_calm_time", "hybrid_calm_speed"}) {
      const YAML::Node* given = r.Find(key);
      if (given != nullptr && !h.enabled) {
        r.Fail(*given, std::string(key) + " is a parameter of hybrid: on");
      }
    }
    h.events = r.Integer("hybrid_events", 1, h.events, kMaxLcpIterations);
    h.window = r.Number("hybrid_window", Range::kPositive, h.window);
    h.calm_time = r.Number("hybrid_calm_time", Range::kPositive, h.calm_time);
    h.calm_speed = r.Number("hybrid_calm_speed", Range::kPositive, h.calm_speed);
  }

  // simulation.friction (FrictionOptions), painleve and friction_cone (events::SimulationOptions).
  void ParseFrictionOptions(const MapReader& r, Scene* scene) const {
    scene->friction.friction = r.Number("friction", Range::kNonNegative, scene->friction.friction);
    for (const char* key : {"rolling_friction", "spinning_friction"}) {
      const YAML::Node* node = r.Find(key);
      if (node == nullptr) continue;
      if (scene->dimension != 3) {
        r.Fail(*node, std::string(key) +
                          " applies to spatial scenes (dimension: 3): the resistance of a "
                          "sphere's contact");
      }
      (std::string_view(key) == "rolling_friction" ? scene->friction.rolling_friction
                                                   : scene->friction.spinning_friction) =
          r.Number(key, Range::kNonNegative, 0.0);
    }
    events::SimulationOptions& o = scene->options;
    if (const YAML::Node* p = r.Find("painleve")) {
      const std::string value = r.ToString(*p, "painleve");
      if (value != "error" && value != "impact") {
        r.Fail(*p, "painleve '" + value + "' is unknown" +
                       Suggestion(value, Keys({"error", "impact"})) +
                       " (use error: stop at a contact problem without a solution, or impact: "
                       "resolve it by a tangential impact)");
      }
      o.painleve = value == "error" ? events::PainleveResolution::kError
                                    : events::PainleveResolution::kImpact;
    }
    if (const YAML::Node* c = r.Find("friction_cone")) {
      if (scene->dimension != 3) {
        r.Fail(*c,
               "friction_cone applies to spatial scenes (dimension: 3); the planar friction "
               "cone is exact");
      }
      const std::string value = r.ToString(*c, "friction_cone");
      if (!ParseFrictionCone(value, &o)) {
        const bool faceted = value.rfind("faceted", 0) == 0;
        r.Fail(*c, "friction_cone '" + value +
                       (faceted ? "': faceted needs an integer N >= 3" : "' is unknown") +
                       " (use exact, or faceted N with an integer N >= 3 facets, e.g. 'faceted "
                       "8')");
      }
    }
  }

  std::string file_;
  std::map<std::string, std::pair<std::string, int>> names_;  // name -> (kind, line)
  std::map<std::string, int> body_index_;
  std::vector<std::string> body_names_;
  // Craig–Bampton flexible bodies whose boundary comes from the joints: (body, its YAML node).
  std::vector<std::pair<int, YAML::Node>> pending_boundaries_;
  std::vector<std::pair<int, YAML::Node>> pending_spatial_boundaries_;  // spatial body, its node
  std::map<std::string, int> joint_index_;                              // spatial scenes
  std::map<std::string, int> shape_index_;  // spatial scenes: first shape of each named item
  std::vector<int> shape_groups_;           // the named item (first shape) of every shape
  std::set<std::pair<int, int>> implicit_excluded_;  // shape items of included robots' joints
};

}  // namespace

void CheckOutputRows(const Scene& scene) {
  const double step = scene.options.output_step;
  if (!(step > 0)) return;  // rows at the accepted steps: bounded while running (the CLI)
  const double rows = scene.t_end / step;
  if (rows <= scene.max_output_rows) return;
  throw SceneError(
      scene.file, scene.lines.output_step,
      "simulation: output_step = " + FormatNumber(step) +
          " s over t_end = " + FormatNumber(scene.t_end) + " s gives " + FormatNumber(rows) +
          " output rows, more than max_output_rows = " + FormatNumber(scene.max_output_rows) +
          " (raise simulation.max_output_rows to allow it)");
}

void CheckOutputBytes(const Scene& scene, double duration, long numbers_per_row) {
  const double step = scene.options.output_step;
  if (!(step > 0)) return;
  const double rows = std::floor(duration / step) + 1;
  const double bytes = rows * static_cast<double>(numbers_per_row) * kCsvBytesPerNumber;
  if (bytes <= scene.max_output_bytes) return;
  throw SceneError(
      scene.file, scene.lines.output_step,
      "simulation: output_step = " + FormatNumber(step) + " s over " + FormatNumber(duration) +
          " s gives " + FormatNumber(rows) + " rows of " + std::to_string(numbers_per_row) +
          " numbers, up to " + FormatNumber(bytes) + " bytes of trajectory.csv (" +
          FormatNumber(kCsvBytesPerNumber) +
          " bytes a number), more than max_output_bytes = " + FormatNumber(scene.max_output_bytes) +
          " (raise simulation.max_output_bytes or --max-output-bytes, or output_step)");
}

bool ParseFrictionCone(const std::string& text, events::SimulationOptions* options) {
  std::istringstream words(text);
  std::string kind, count, extra;
  words >> kind >> count >> extra;
  if (kind == "exact" && count.empty()) {
    options->friction_cone = contact::FrictionCone::kExact;
    return true;
  }
  const std::optional<long> n = ParseInteger(count);
  if (kind != "faceted" || !n || *n < 3 || *n > std::numeric_limits<int>::max() || !extra.empty()) {
    return false;
  }
  options->friction_cone = contact::FrictionCone::kFaceted;
  options->friction_facets = static_cast<int>(*n);
  return true;
}

std::string FrictionConeText(const events::SimulationOptions& options) {
  return options.friction_cone == contact::FrictionCone::kExact
             ? "exact"
             : "faceted " + std::to_string(options.friction_facets);
}

const NameTable<engine::PlanarJointType>& PlanarJointTypes() {
  using T = engine::PlanarJointType;
  static const NameTable<T> table = {
      {"revolute", T::kRevolute}, {"prismatic", T::kPrismatic}, {"angle_driver", T::kAngleDriver},
      {"distance", T::kDistance}, {"fixed", T::kFixed},         {"point_on_line", T::kPointOnLine}};
  return table;
}

const NameTable<engine::SpatialJointType>& SpatialJointTypes() {
  using T = engine::SpatialJointType;
  static const NameTable<T> table = {{"spherical", T::kSpherical},
                                     {"revolute", T::kRevolute},
                                     {"universal", T::kUniversal},
                                     {"cylindrical", T::kCylindrical},
                                     {"prismatic", T::kPrismatic},
                                     {"fixed", T::kFixed},
                                     {"planar", T::kPlanar},
                                     {"distance", T::kDistance},
                                     {"point_on_line", T::kPointOnLine},
                                     {"point_on_plane", T::kPointOnPlane}};
  return table;
}

const NameTable<contact::PlanarContactType>& PlanarContactTypes() {
  using T = contact::PlanarContactType;
  static const NameTable<T> table = {{"point_line", T::kPointLine},
                                     {"disk_line", T::kDiskLine},
                                     {"disk_disk", T::kDiskDisk},
                                     {"disk_beam", T::kDiskBeam}};
  return table;
}

const NameTable<std::vector<std::string>>& ShapeTypeParameters() {
  static const NameTable<std::vector<std::string>> table = {{"sphere", {"radius"}},
                                                            {"box", {"half_size"}},
                                                            {"cylinder", {"radius", "length"}},
                                                            {"capsule", {"radius", "length"}},
                                                            {"ellipsoid", {"radii"}},
                                                            {"plane", {"normal", "offset"}},
                                                            {"convex_mesh", {"file"}},
                                                            {"triangle_mesh", {"file"}}};
  return table;
}

const std::vector<std::string>& SimulationKeys() {
  static const std::vector<std::string> keys = {"t_end",
                                                "integrator",
                                                "formulation",
                                                "rtol",
                                                "atol",
                                                "h_min",
                                                "h_max",
                                                "h_init",
                                                "adaptive",
                                                "step",
                                                "theta",
                                                "speculative",
                                                "project_contacts",
                                                "sleeping",
                                                "sleep_speed",
                                                "sleep_time",
                                                "hybrid",
                                                "hybrid_events",
                                                "hybrid_window",
                                                "hybrid_calm_time",
                                                "hybrid_calm_speed",
                                                "safety",
                                                "error_control",
                                                "fac_min",
                                                "fac_max",
                                                "newton_tol",
                                                "max_newton_iterations",
                                                "rho_inf",
                                                "output_step",
                                                "max_output_rows",
                                                "max_output_bytes",
                                                "restitution",
                                                "restitution_threshold",
                                                "thresholds",
                                                "projection",
                                                "projection_tolerance",
                                                "projection_metric",
                                                "event_projection_tolerance",
                                                "projection_max_iterations",
                                                "lcp_solver",
                                                "lcp_tolerance",
                                                "lcp_max_iterations",
                                                "event_samples",
                                                "root_tolerance",
                                                "zeno",
                                                "time_events",
                                                "friction",
                                                "rolling_friction",
                                                "spinning_friction",
                                                "painleve",
                                                "friction_cone"};
  return keys;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  return Suggestion(word, candidates);
}

std::optional<integrators::Formulation> DefaultFormulation(std::string_view integrator) {
  for (const integrators::IntegratorEntry& entry : integrators::IntegratorTable()) {
    if (entry.name == integrator) return entry.formulations.front();
  }
  return std::nullopt;
}

std::string CheckIntegratorChoice(std::string_view integrator,
                                  integrators::Formulation formulation) {
  // Moreau–Jean time-stepping works at velocity level whatever the formulation says.
  if (integrator == timestepping::kMoreauJeanName) return {};
  std::vector<std::string> known;
  for (const integrators::IntegratorEntry& entry : integrators::IntegratorTable()) {
    known.emplace_back(entry.name);
    if (entry.name != integrator) continue;
    std::vector<std::string> supported;
    for (integrators::Formulation f : entry.formulations) {
      if (f == formulation) return {};
      supported.emplace_back(integrators::ToString(f));
    }
    return "integrator '" + std::string(integrator) + "' does not support formulation '" +
           std::string(integrators::ToString(formulation)) + "' (it supports " +
           JoinWords(supported, " and ") + ")";
  }
  known.emplace_back(timestepping::kMoreauJeanName);
  return "unknown integrator '" + std::string(integrator) + "'" + Suggestion(integrator, known) +
         " (known: " + JoinWords(known, ", ") + ")";
}

namespace {

// Scene files are plain YAML: no tags (`!!binary`, `!custom`: a tag would silently change how a
// value reads) and no alias expansion beyond the size of the text (`*a` repeating an anchored
// list can make a few lines describe 10⁹ items). Every node of a document without aliases takes
// at least one character, so more nodes than characters means aliases are expanding.
void CheckPlainYaml(const YAML::Node& node, const std::string& file, std::size_t budget,
                    std::size_t* visited) {
  if (++*visited > budget) {
    throw SceneError(file, LineOf(node),
                     "YAML aliases (*name) expand to more items than the file has characters; "
                     "write the items out");
  }
  const std::string& tag = node.Tag();
  if (!tag.empty() && tag != "?" && tag != "!") {
    throw SceneError(
        file, LineOf(node),
        "YAML tag '" + tag + "' is not supported in scene files (write the plain value)");
  }
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) CheckPlainYaml(item, file, budget, visited);
  } else if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      CheckPlainYaml(it->first, file, budget, visited);
      CheckPlainYaml(it->second, file, budget, visited);
    }
  }
}

}  // namespace

Scene ParseScene(std::string_view yaml_text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw SceneError(file, e.mark.is_null() ? 0 : e.mark.line + 1, "malformed YAML: " + e.msg);
  }
  std::size_t visited = 0;
  CheckPlainYaml(root, file, yaml_text.size() + 1, &visited);
  try {
    return SceneParser(file).Parse(root);
  } catch (const YAML::Exception& e) {
    // Not expected (the parser checks node types before converting); keep the location anyway.
    throw SceneError(file, e.mark.is_null() ? 0 : e.mark.line + 1, e.msg);
  }
}

// `saltus run robot.urdf`: the robot alone (tools/urdf.h), named by the file, simulated for
// 1 s with the default options (--t-end and the other run options override them).
std::string UrdfSceneText(const std::string& path) {
  std::string name = std::filesystem::path(path).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || name[0] == '-') {
    name = "robot_" + name;
  }
  return "scene: " + name + "\ndimension: 3\ninclude: '" +
         std::filesystem::path(path).filename().string() + "'\nsimulation: {t_end: 1}\n";
}

Scene LoadSceneFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw SceneError(path, 0,
                     std::filesystem::exists(path, ec)
                         ? "not a regular file"
                         : "cannot read the scene file: no such file");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw SceneError(path, 0, "cannot read the scene file");
  if (std::filesystem::path(path).extension() == ".urdf")
    return ParseScene(UrdfSceneText(path), path);
  return ParseScene(text.str(), path);
}

}  // namespace saltus::tools
