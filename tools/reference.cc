#include "tools/reference.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "tools/json_writer.h"

namespace saltus::tools {

namespace {

// t_k lies on the grid k·Δ when |t_k/Δ − round(t_k/Δ)| ≤ this (relative round-off of the grid
// and of %.17g text).
constexpr double kGridTolerance = 1e-6;

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) {
    while (!field.empty() && (field.back() == '\r' || field.back() == ' ')) field.pop_back();
    while (!field.empty() && field.front() == ' ') field.erase(field.begin());
    fields.push_back(field);
  }
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

bool ParseNumber(const std::string& text, double* x) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, *x);
  return !text.empty() && ec == std::errc() && end == last && std::isfinite(*x);
}

// Index of the position coordinate called `name`, or -1.
int PositionIndex(const engine::MechanicalSystem& system, const std::string& name) {
  for (int i = 0; i < system.nq(); ++i) {
    if (system.PositionName(i) == name) return i;
  }
  return -1;
}

}  // namespace

std::vector<double> ReferenceTimes(double t_end, double step) {
  if (!(step > 0) || !std::isfinite(t_end) || t_end < 0) {
    throw std::invalid_argument("reference times: step must be > 0 and t_end >= 0");
  }
  std::vector<double> times;
  for (long k = 0;; ++k) {
    const double t = static_cast<double>(k) * step;
    if (t > t_end + 1e-9 * step) break;
    times.push_back(t);
  }
  return times;
}

ReferenceSolution LoadReferenceFile(const std::string& path, const engine::MechanicalSystem& system,
                                    double t_end, double step) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read the reference file");
  const auto fail = [&](int line, const std::string& what) {
    return std::invalid_argument(path + ":" + std::to_string(line) + ": " + what);
  };
  ReferenceSolution ref;
  ref.how = "file " + path;
  std::string line;
  if (!std::getline(in, line)) throw fail(1, "empty reference file (expected a header t,...)");
  const std::vector<std::string> header = SplitCsv(line);
  if (header.size() < 2 || header[0] != "t") {
    throw fail(1, "the header must be t followed by position names (e.g. t,ball.y)");
  }
  for (std::size_t j = 1; j < header.size(); ++j) {
    const int column = PositionIndex(system, header[j]);
    if (column < 0) {
      throw fail(1, "column '" + header[j] + "' is not a position coordinate of the scene");
    }
    if (std::find(ref.columns.begin(), ref.columns.end(), column) != ref.columns.end()) {
      throw fail(1, "column '" + header[j] + "' is given twice");
    }
    ref.names.push_back(header[j]);
    ref.columns.push_back(column);
  }
  std::vector<std::vector<double>> rows;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> fields = SplitCsv(line);
    if (fields.size() != header.size()) {
      throw fail(number, "expected " + std::to_string(header.size()) + " values, got " +
                             std::to_string(fields.size()));
    }
    std::vector<double> row(fields.size());
    for (std::size_t j = 0; j < fields.size(); ++j) {
      if (!ParseNumber(fields[j], &row[j])) {
        throw fail(number, "'" + fields[j] + "' is not a finite number");
      }
    }
    if (!ref.times.empty() && !(row[0] > ref.times.back())) {
      throw fail(number, "times must be increasing");
    }
    if (row[0] < 0) throw fail(number, "time " + FormatDouble(row[0]) + " is negative");
    if (row[0] > t_end * (1 + 1e-12)) continue;  // past the simulated span (t_end overridden)
    ref.times.push_back(row[0]);
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw fail(number, "no reference values");
  if (step <= 0) {
    if (rows.size() < 2) throw fail(number, "one row: give the grid step (reference: step)");
    step = ref.times[1] - ref.times[0];
  }
  ref.step = step;
  for (std::size_t k = 0; k < ref.times.size(); ++k) {
    const double ratio = ref.times[k] / step;
    if (std::abs(ratio - std::round(ratio)) > kGridTolerance) {
      throw fail(static_cast<int>(k) + 2, "time " + FormatDouble(ref.times[k]) +
                                              " is not on the grid k*" + FormatDouble(step));
    }
  }
  ref.values.resize(static_cast<Eigen::Index>(rows.size()),
                    static_cast<Eigen::Index>(ref.names.size()));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    for (std::size_t j = 0; j < ref.names.size(); ++j) {
      ref.values(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) = rows[k][j + 1];
    }
  }
  return ref;
}

std::vector<std::string> AnalyticReferenceNames() { return {"bouncing_disk"}; }

namespace {

// The bouncing disk (header comment). Normal coordinate s (gap) and its rate at t.
struct Bounce {
  double s0, sdot0, a, e;
  // Gap at time t ≥ 0.
  double Gap(double t) const {
    double t0 = 0, s = s0, sdot = sdot0;
    for (int impact = 0; impact < 100000; ++impact) {
      // Root of s + sdot τ + a τ²/2 = 0 with τ > 0 (a < 0, s ≥ 0).
      const double disc = sdot * sdot - 2 * a * s;
      const double tau = (-sdot - std::sqrt(disc)) / a;
      if (t <= t0 + tau) {
        const double dt = t - t0;
        return s + sdot * dt + 0.5 * a * dt * dt;
      }
      t0 += tau;
      const double sdot_minus = sdot + a * tau;
      sdot = -e * sdot_minus;
      s = 0;
      // Flights shorter than round-off on t: the disk is at rest (accumulation point reached).
      if (2 * sdot / -a <= 1e-15 * std::max(1.0, t0)) return 0;
    }
    return 0;
  }
};

ReferenceSolution BouncingDisk(const Scene& scene, const engine::MechanicalSystem& system,
                               double step) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("scene '" + scene.name +
                                 "': analytic reference bouncing_disk: " + why);
  };
  if (scene.bodies.size() != 1 || !scene.joints.empty() || !scene.springs.empty() ||
      !scene.loads.empty() || scene.contacts.size() != 1) {
    throw bad("needs one body, one contact and no joints or forces");
  }
  const contact::PlanarContact& c = scene.contacts[0];
  if (c.body_a != engine::kGround) throw bad("the contact's line must be the ground (body_a)");
  double radius = 0;
  if (c.type == contact::PlanarContactType::kDiskLine) {
    radius = c.radius_b;
    if (!c.point_b.isZero()) throw bad("the disk must be centred on the body (point_b = 0)");
  } else if (c.type == contact::PlanarContactType::kPointLine) {
    if (!c.point_b.isZero()) throw bad("the contact point must be the body's centre");
  } else {
    throw bad("the contact must be disk_line or point_line");
  }
  const Eigen::Vector2d n = c.normal_a.normalized();
  const double a = n.dot(scene.gravity);
  if (!(a < 0)) throw bad("gravity must push the body towards the line");
  const engine::PlanarBody& body = scene.bodies[0];
  const Eigen::Vector2d p0 = body.q0.head<2>();
  const Eigen::Vector2d v0 = body.v0.head<2>();
  const double e = c.restitution >= 0 ? c.restitution : scene.options.restitution;
  Bounce bounce{n.dot(p0 - c.point_a) - radius, n.dot(v0), a, e};
  if (bounce.s0 < 0) throw bad("the disk starts below the line");
  if (bounce.s0 == 0 && bounce.sdot0 <= 0) throw bad("the disk starts at rest on the line");

  ReferenceSolution ref;
  ref.step = step;
  ref.how = "analytic bouncing_disk";
  ref.times = ReferenceTimes(scene.t_end, step);
  const int base = 0;  // the only body's coordinates are q[0..2]
  for (int i = 0; i < 3; ++i) {
    ref.names.push_back(system.PositionName(base + i));
    ref.columns.push_back(base + i);
  }
  ref.values.resize(static_cast<Eigen::Index>(ref.times.size()), 3);
  const Eigen::Vector2d g_tangent = scene.gravity - a * n;
  for (std::size_t k = 0; k < ref.times.size(); ++k) {
    const double t = ref.times[k];
    const Eigen::Vector2d free = p0 + v0 * t + 0.5 * g_tangent * t * t;
    const Eigen::Vector2d tangent_part = free - n * n.dot(free);
    const Eigen::Vector2d p = tangent_part + n * (n.dot(c.point_a) + radius + bounce.Gap(t));
    const auto row = static_cast<Eigen::Index>(k);
    ref.values(row, 0) = p.x();
    ref.values(row, 1) = p.y();
    ref.values(row, 2) = body.q0[2] + body.v0[2] * t;
  }
  return ref;
}

}  // namespace

ReferenceSolution AnalyticReference(const std::string& name, const Scene& scene,
                                    const engine::MechanicalSystem& system, double step) {
  if (name == "bouncing_disk") return BouncingDisk(scene, system, step);
  std::string known;
  for (const std::string& n : AnalyticReferenceNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("scene '" + scene.name + "': unknown analytic reference '" + name +
                              "' (known: " + known + ")");
}

void WriteReferenceCsv(const ReferenceSolution& reference, std::ostream& out) {
  out << 't';
  for (const std::string& name : reference.names) out << ',' << name;
  out << '\n';
  for (std::size_t k = 0; k < reference.times.size(); ++k) {
    out << FormatDouble(reference.times[k]);
    for (Eigen::Index j = 0; j < reference.values.cols(); ++j) {
      out << ',' << FormatDouble(reference.values(static_cast<Eigen::Index>(k), j));
    }
    out << '\n';
  }
}

ReferenceRecorder::ReferenceRecorder(const ReferenceSolution& reference)
    : reference_(reference),
      values_(reference.values.rows(), reference.values.cols()),
      seen_(reference.times.size(), false) {
  values_.setConstant(std::numeric_limits<double>::quiet_NaN());
}

void ReferenceRecorder::OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& /*v*/) {
  const double tolerance = kGridTolerance * reference_.step;
  const auto it = std::lower_bound(reference_.times.begin(), reference_.times.end(), t - tolerance);
  if (it == reference_.times.end() || std::abs(*it - t) > tolerance) return;
  const auto k = static_cast<std::size_t>(it - reference_.times.begin());
  if (seen_[k]) return;
  seen_[k] = true;
  ++recorded_;
  for (std::size_t j = 0; j < reference_.columns.size(); ++j) {
    values_(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) = q[reference_.columns[j]];
  }
}

double ReferenceRecorder::Error() const {
  if (!complete()) return std::numeric_limits<double>::infinity();
  const Eigen::ArrayXXd ref = reference_.values.array();
  return ((values_.array() - ref).abs() / (1.0 + ref.abs())).maxCoeff();
}

ReferenceSolution ReferenceRecorder::AsReference(std::string how) const {
  ReferenceSolution out = reference_;
  out.values = values_;
  out.how = std::move(how);
  return out;
}

}  // namespace saltus::tools
