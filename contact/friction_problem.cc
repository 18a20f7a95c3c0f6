#include "contact/friction_problem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "contact/delassus.h"
#include "contact/impact_problem.h"

namespace saltus::contact {

FrictionalContact FrictionalContact::FromSystem(const engine::MechanicalSystem& system,
                                                int normal_row, double restitution) {
  const engine::ConstraintRowInfo& info = system.constraint_info(normal_row);
  if (info.kind != engine::ConstraintKind::kUnilateral) {
    throw std::invalid_argument("FrictionalContact::FromSystem: " + RowLabel(system, normal_row) +
                                " is not a unilateral row");
  }
  const std::span<const int> tangents = system.TangentRows(normal_row);
  if (tangents.size() > 2) {
    throw std::invalid_argument("FrictionalContact::FromSystem: " + RowLabel(system, normal_row) +
                                " has more than two tangential rows");
  }
  FrictionalContact c;
  c.normal_row = normal_row;
  c.num_tangent_rows = static_cast<int>(tangents.size());
  for (std::size_t k = 0; k < tangents.size(); ++k) c.tangent_rows[k] = tangents[k];
  c.friction = info.friction;
  c.restitution = restitution;
  return c;
}

namespace {

Eigen::VectorXd PackContacts(const std::vector<FrictionalContactResult>& contacts) {
  Eigen::VectorXd out(3 * static_cast<Eigen::Index>(contacts.size()));
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const auto k = 3 * static_cast<Eigen::Index>(i);
    out[k] = contacts[i].normal;
    out.segment<2>(k + 1) = contacts[i].tangential;
  }
  return out;
}

enum class Level { kImpact, kAcceleration };

std::string Describe(const engine::MechanicalSystem& system, const FrictionalContact& c) {
  const auto number = [](double x) {  // 6 significant digits, as a user wrote them
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return std::string(text);
  };
  std::string s = "'" + system.constraint_info(c.normal_row).name + "' (mu = " + number(c.friction);
  if (c.sliding) {
    s += ", sliding along (" + number(c.slip_direction[0]);
    if (c.num_tangent_rows == 2) s += ", " + number(c.slip_direction[1]);
    s += ")";
  }
  return s + ")";
}

void ValidateOptions(const char* who, const FrictionOptions& o, std::size_t num_contacts) {
  const std::string w(who);
  if (!(o.tolerance > 0.0) || !std::isfinite(o.tolerance)) {
    throw std::invalid_argument(w + ": tolerance must be finite and > 0");
  }
  if (o.max_iterations <= 0) throw std::invalid_argument(w + ": max_iterations must be > 0");
  if (o.cone == FrictionCone::kFaceted && o.facets < 3) {
    throw std::invalid_argument(w + ": a faceted cone needs at least 3 facets, got " +
                                std::to_string(o.facets));
  }
  if (o.cone != FrictionCone::kExact && o.cone != FrictionCone::kFaceted) {
    throw std::invalid_argument(w + ": unknown friction cone");
  }
  if (o.warm_start != nullptr &&
      o.warm_start->size() != 3 * static_cast<Eigen::Index>(num_contacts)) {
    throw std::invalid_argument(w + ": warm start has " + std::to_string(o.warm_start->size()) +
                                " entries, expected 3 per contact");
  }
}

void ValidateContact(const char* who, const engine::MechanicalSystem& system,
                     const FrictionalContact& c, Level level) {
  const std::string w(who);
  if (c.normal_row < 0 || c.normal_row >= system.num_constraints()) {
    throw std::invalid_argument(w + ": normal row " + std::to_string(c.normal_row) +
                                " outside [0, " + std::to_string(system.num_constraints()) + ")");
  }
  const std::string label = RowLabel(system, c.normal_row);
  if (system.constraint_info(c.normal_row).kind != engine::ConstraintKind::kUnilateral) {
    throw std::invalid_argument(w + ": " + label + " is not a unilateral row");
  }
  if (c.num_tangent_rows < 0 || c.num_tangent_rows > 2) {
    throw std::invalid_argument(w + ": " + label + ": num_tangent_rows must be 0, 1 or 2, got " +
                                std::to_string(c.num_tangent_rows));
  }
  for (int k = 0; k < c.num_tangent_rows; ++k) {
    const int t = c.tangent_rows[static_cast<std::size_t>(k)];
    if (t < 0 || t >= system.num_constraints() ||
        system.constraint_info(t).kind != engine::ConstraintKind::kTangential ||
        system.NormalRow(t) != c.normal_row) {
      throw std::invalid_argument(w + ": " + label + ": tangential row " + std::to_string(t) +
                                  " is not a tangential row of this contact");
    }
  }
  if (!(c.friction >= 0.0) || !std::isfinite(c.friction)) {
    throw std::invalid_argument(w + ": " + label + ": friction must be finite and >= 0, got " +
                                std::to_string(c.friction));
  }
  if (c.friction > 0.0 && c.num_tangent_rows == 0) {
    throw std::invalid_argument(w + ": " + label + ": friction > 0 needs tangential rows");
  }
  if (!(c.restitution >= 0.0 && c.restitution <= 1.0)) {
    throw std::invalid_argument(w + ": " + label + ": restitution must be in [0, 1], got " +
                                std::to_string(c.restitution));
  }
  if (!std::isfinite(c.gap_rate)) {
    throw std::invalid_argument(w + ": " + label + ": the gap rate must be finite, got " +
                                std::to_string(c.gap_rate));
  }
  if (!c.sliding) return;
  if (level == Level::kImpact) {
    throw std::invalid_argument(w + ": " + label +
                                ": a sliding contact is an acceleration-level notion");
  }
  const double norm = c.slip_direction.head(std::max(c.num_tangent_rows, 1)).norm();
  if (c.num_tangent_rows == 0 || !c.slip_direction.allFinite() || std::abs(norm - 1.0) > 1e-6 ||
      (c.num_tangent_rows == 1 && c.slip_direction[1] != 0.0)) {
    throw std::invalid_argument(w + ": " + label +
                                ": a sliding contact needs tangential rows and a unit direction");
  }
}

// All rows of the contacts (normal, then tangential, per contact) and their local description.
struct ContactRows {
  std::vector<int> rows;
  std::vector<LocalContact> local;
};

ContactRows Collect(std::span<const FrictionalContact> contacts) {
  ContactRows out;
  for (const FrictionalContact& c : contacts) {
    LocalContact l;
    l.normal = static_cast<int>(out.rows.size());
    out.rows.push_back(c.normal_row);
    l.num_tangents = c.num_tangent_rows;
    for (int k = 0; k < c.num_tangent_rows; ++k) {
      l.tangents[static_cast<std::size_t>(k)] = static_cast<int>(out.rows.size());
      out.rows.push_back(c.tangent_rows[static_cast<std::size_t>(k)]);
    }
    l.mu = c.friction;
    l.sliding = c.sliding;
    l.direction = c.slip_direction;
    out.local.push_back(l);
  }
  return out;
}

ContactRows Validate(const char* who, const engine::MechanicalSystem& system, double t,
                     const Eigen::VectorXd& q, const Eigen::VectorXd& v, const char* v_name,
                     std::span<const int> bilateral_rows,
                     std::span<const FrictionalContact> contacts, const FrictionOptions& options,
                     Level level) {
  ValidateState(who, system, t, q, v, v_name);
  ValidateOptions(who, options, contacts.size());
  for (const FrictionalContact& c : contacts) ValidateContact(who, system, c, level);
  ContactRows rows = Collect(contacts);
  ValidateRows(who, system, bilateral_rows, rows.rows);
  return rows;
}

bool Frictionless(std::span<const FrictionalContact> contacts) {
  return std::all_of(contacts.begin(), contacts.end(), [](const FrictionalContact& c) {
    return !c.sliding && (c.friction == 0.0 || c.num_tangent_rows == 0);
  });
}

// Contacts coupled through W (any entry between their rows non-zero), as lists of contact
// indices in ascending order.
std::vector<std::vector<int>> Components(const Eigen::MatrixXd& W,
                                         const std::vector<LocalContact>& contacts) {
  const auto nc = static_cast<int>(contacts.size());
  std::vector<int> parent(static_cast<std::size_t>(nc));
  for (int i = 0; i < nc; ++i) parent[static_cast<std::size_t>(i)] = i;
  const auto find = [&](int i) {
    while (parent[static_cast<std::size_t>(i)] != i) i = parent[static_cast<std::size_t>(i)];
    return i;
  };
  const auto rows_of = [&](int i) {
    const LocalContact& c = contacts[static_cast<std::size_t>(i)];
    return std::pair<int, int>(c.normal, c.normal + 1 + c.num_tangents);  // contiguous
  };
  for (int i = 0; i < nc; ++i) {
    const auto [ri0, ri1] = rows_of(i);
    for (int j = i + 1; j < nc; ++j) {
      const auto [rj0, rj1] = rows_of(j);
      if (W.block(ri0, rj0, ri1 - ri0, rj1 - rj0).cwiseAbs().maxCoeff() != 0.0) {
        const int a = find(i), b = find(j);
        if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
      }
    }
  }
  std::vector<std::vector<int>> out;
  std::vector<int> label(static_cast<std::size_t>(nc), -1);
  for (int i = 0; i < nc; ++i) {
    const auto root = static_cast<std::size_t>(find(i));
    if (label[root] < 0) {
      label[root] = static_cast<int>(out.size());
      out.emplace_back();
    }
    out[static_cast<std::size_t>(label[root])].push_back(i);
  }
  return out;
}

int Severity(Solvability s) {
  switch (s) {
    case Solvability::kUnique:
      return 0;
    case Solvability::kSolved:
      return 1;
    case Solvability::kIndeterminate:
      return 2;
    case Solvability::kNoSolutionFound:
      return 3;
    case Solvability::kInconsistent:
      return 4;
  }
  return 4;
}

// The local law solved on every component of (W, b).
struct Solved {
  bool ok = true;
  Eigen::VectorXd z;  // m
  std::vector<ContactMode> modes;
  std::vector<Eigen::Vector2d> directions;
  double residual = 0.0;
  PainleveDiagnosis diagnosis;
  int components = 0;
  std::string message;
};

Solved SolveComponents(const engine::MechanicalSystem& system,
                       std::span<const FrictionalContact> contacts, const ContactRows& rows,
                       const Eigen::MatrixXd& W, const Eigen::VectorXd& b,
                       const FrictionOptions& options, bool prefer_impulsive,
                       const Eigen::VectorXd* energy_rate = nullptr) {
  Solved out;
  out.z = Eigen::VectorXd::Zero(b.size());
  out.modes.assign(contacts.size(), ContactMode::kOpen);
  out.directions.assign(contacts.size(), Eigen::Vector2d::Zero());
  LocalOptions lo;
  lo.cone = options.cone;
  lo.facets = options.facets;
  lo.tolerance = options.tolerance;
  lo.max_iterations = options.max_iterations;
  lo.diagnose = options.diagnose || prefer_impulsive;
  lo.max_combinations = options.max_enumerated_combinations;
  lo.prefer_impulsive = prefer_impulsive;
  const std::vector<std::vector<int>> components = Components(W, rows.local);
  out.components = static_cast<int>(components.size());
  for (const std::vector<int>& comp : components) {
    // Local rows of the component, in contact order.
    std::vector<int> idx;
    LocalProblem p;
    for (int i : comp) {
      LocalContact c = rows.local[static_cast<std::size_t>(i)];
      const int first = c.normal;
      c.normal = static_cast<int>(idx.size());
      for (int k = 0; k < c.num_tangents; ++k) {
        c.tangents[static_cast<std::size_t>(k)] = c.normal + 1 + k;
      }
      for (int r = first; r <= first + c.num_tangents; ++r) idx.push_back(r);
      p.contacts.push_back(c);
    }
    const auto mc = static_cast<Eigen::Index>(idx.size());
    p.W.resize(mc, mc);
    p.b.resize(mc);
    if (energy_rate != nullptr) p.energy_rate.resize(mc);
    for (Eigen::Index i = 0; i < mc; ++i) {
      p.b[i] = b[idx[static_cast<std::size_t>(i)]];
      if (energy_rate != nullptr)
        p.energy_rate[i] = (*energy_rate)[idx[static_cast<std::size_t>(i)]];
      for (Eigen::Index j = 0; j < mc; ++j) {
        p.W(i, j) = W(idx[static_cast<std::size_t>(i)], idx[static_cast<std::size_t>(j)]);
      }
    }
    Eigen::VectorXd warm;
    if (options.warm_start != nullptr) {
      warm.resize(mc);
      for (std::size_t k = 0; k < comp.size(); ++k) {
        const LocalContact& c = p.contacts[k];
        const auto base = 3 * static_cast<Eigen::Index>(comp[k]);
        warm[c.normal] = (*options.warm_start)[base];
        for (int j = 0; j < c.num_tangents; ++j)
          warm[c.normal + 1 + j] = (*options.warm_start)[base + 1 + j];
      }
      lo.warm_start = &warm;
    }
    const LocalResult r = SolveLocal(p, lo);
    for (Eigen::Index i = 0; i < mc; ++i) out.z[idx[static_cast<std::size_t>(i)]] = r.z[i];
    for (std::size_t k = 0; k < comp.size(); ++k) {
      out.modes[static_cast<std::size_t>(comp[k])] = r.modes[k];
      out.directions[static_cast<std::size_t>(comp[k])] = r.directions[k];
    }
    out.residual = std::max(out.residual, r.residual);
    out.ok = out.ok && r.ok;
    auto names = [&] {  // the component's contacts with μ (and d when sliding), for messages
      std::string n;
      for (int i : comp) {
        n += (n.empty() ? "" : ", ") + Describe(system, contacts[static_cast<std::size_t>(i)]);
      }
      return n;
    };
    if (!r.ok && out.message.empty()) {
      // What happened first; the solver's own account in brackets (kept in summary.json, left
      // out of `saltus run`'s terminal message).
      out.message = "contacts " + names() +
                    ": no forces or impulses satisfying Coulomb's friction law and the contact "
                    "conditions were found within the tolerance [solver: " +
                    r.message + "]";
    }
    if (Severity(r.status) > Severity(out.diagnosis.status)) out.diagnosis.status = r.status;
    if (Severity(r.status) >= Severity(Solvability::kIndeterminate)) {
      out.diagnosis.contacts.insert(out.diagnosis.contacts.end(), comp.begin(), comp.end());
      if (!out.diagnosis.message.empty()) out.diagnosis.message += "; ";
      out.diagnosis.message += std::string(ToString(r.status)) + " (" +
                               std::to_string(r.solutions) + " distinct solutions in " +
                               std::to_string(r.combinations) + " mode combinations): contacts " +
                               names();
    }
  }
  return out;
}

// Per-contact results from the multipliers z and the rates (rows of the contacts, in order).
std::vector<FrictionalContactResult> ContactResults(const ContactRows& rows,
                                                    const Eigen::VectorXd& z,
                                                    const Eigen::VectorXd& rates,
                                                    const std::vector<ContactMode>& modes,
                                                    const std::vector<Eigen::Vector2d>& dirs) {
  std::vector<FrictionalContactResult> out(rows.local.size());
  for (std::size_t i = 0; i < rows.local.size(); ++i) {
    const LocalContact& c = rows.local[i];
    FrictionalContactResult& r = out[i];
    r.normal = z[c.normal];
    r.normal_rate = rates[c.normal];
    for (int k = 0; k < c.num_tangents; ++k) {
      r.tangential[k] = z[c.tangents[static_cast<std::size_t>(k)]];
      r.tangential_rate[k] = rates[c.tangents[static_cast<std::size_t>(k)]];
    }
    r.mode = modes.empty() ? ContactMode::kOpen : modes[i];
    if (!dirs.empty()) r.slip_direction = dirs[i];
  }
  return out;
}

// Modes of a frictionless problem from its multipliers and rates (the same rule as
// friction_cone.h with the same threshold).
std::vector<ContactMode> FrictionlessModes(const ContactRows& rows, const Eigen::VectorXd& z,
                                           const Eigen::VectorXd& rates, double tol) {
  std::vector<ContactMode> modes(rows.local.size(), ContactMode::kClosed);
  for (std::size_t i = 0; i < rows.local.size(); ++i) {
    const int n = rows.local[i].normal;
    if (z[n] == 0.0 && rates[n] > tol) modes[i] = ContactMode::kOpen;
  }
  return modes;
}

// The fields a frictionless answer (contact::SolveImpact / SolveContactAccelerations) shares
// with a frictional one: status, bilateral data, the normal multipliers as contacts, modes from
// the rates of all contact rows (G x + ∂g/∂t or G v̇ + γ).
template <class Result>
void FillFrictionless(bool ok, int rank, double bilateral_residual, const LcpResult& lcp,
                      const std::string& message, const Eigen::VectorXd& normal_multipliers,
                      const ContactRows& rows, const Eigen::VectorXd& rates, double tolerance,
                      Result* r) {
  r->ok = ok;
  r->bilateral_rank = rank;
  r->bilateral_residual = bilateral_residual;
  r->residual = lcp.residual;
  r->components = lcp.components;
  r->message = message;
  Eigen::VectorXd z = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows.rows.size()));
  for (std::size_t i = 0; i < rows.local.size(); ++i) {
    z[rows.local[i].normal] = normal_multipliers[static_cast<Eigen::Index>(i)];
  }
  const double tol =
      10.0 * tolerance * std::max(1.0, rates.size() > 0 ? rates.lpNorm<Eigen::Infinity>() : 0.0);
  r->contacts = ContactResults(rows, z, rates, FrictionlessModes(rows, z, rates, tol), {});
  r->diagnosis.status = ok ? Solvability::kUnique : Solvability::kNoSolutionFound;
}

LcpOptions ToLcpOptions(const FrictionOptions& o) {
  LcpOptions lo;
  lo.tolerance = o.tolerance;
  lo.max_iterations = o.max_iterations;
  return lo;
}

double EnergyChange(const Eigen::VectorXd& y_minus, const Eigen::VectorXd& y_plus) {
  return 0.5 * (y_plus - y_minus).dot(y_plus + y_minus);
}

// W_c = ½ zᵀ (u⁺ + u⁻) over the contact rows (header: the law's share of ΔT) and the gain flag.
void ReportEnergy(double T_minus, const Eigen::VectorXd& z, const Eigen::VectorXd& u_minus,
                  const Eigen::VectorXd& u_plus, FrictionalImpactResult* r) {
  r->contact_work = 0.5 * z.dot(u_plus + u_minus);
  // The LCP tolerance 1e-10 bounds the velocity error relative to the problem's scale, so W_c is
  // accurate to ~1e-10 T⁻: 1e-8 T⁻ leaves a margin of 100.
  r->energy_gain = r->contact_work > 1e-8 * T_minus;
  if (r->energy_gain) {
    r->message += (r->message.empty() ? "" : "; ") +
                  std::string("the contact impulses gained energy: ") +
                  std::to_string(r->contact_work) + " J (T- = " + std::to_string(T_minus) + " J)";
  }
}

// `f`: the force impulse of a time step (SolveFrictionalVelocityStep), null for an impact.
FrictionalImpactResult FrictionlessImpact(const engine::MechanicalSystem& system, double t,
                                          const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
                                          const Eigen::VectorXd* f,
                                          std::span<const int> bilateral_rows,
                                          std::span<const FrictionalContact> contacts,
                                          const ContactRows& rows, const FrictionOptions& options) {
  std::vector<int> normal_rows;
  std::vector<double> e, s;
  for (const FrictionalContact& c : contacts) {
    normal_rows.push_back(c.normal_row);
    e.push_back(c.restitution);
    s.push_back(c.gap_rate);
  }
  const ImpactResult ir =
      f ? SolveVelocityStep(system, t, q, v_minus, *f, bilateral_rows, normal_rows, e,
                            ToLcpOptions(options), s)
        : SolveImpact(system, t, q, v_minus, bilateral_rows, normal_rows, e, ToLcpOptions(options));
  FrictionalImpactResult r;
  r.v_plus = ir.v_plus;
  r.impulse_b = ir.impulse_b;
  Eigen::MatrixXd G;
  Eigen::VectorXd g_t;
  system.ConstraintJacobian(t, q, rows.rows, &G);
  system.ConstraintTimeDerivative(t, q, rows.rows, &g_t);
  const Eigen::VectorXd u_plus = G * r.v_plus + g_t;
  FillFrictionless(ir.ok, ir.bilateral_rank, ir.bilateral_residual, ir.lcp, ir.message,
                   ir.impulse_u, rows, u_plus, options.tolerance, &r);
  Eigen::MatrixXd M;
  system.MassMatrix(q, &M);
  // A step: the change from the free velocity v⁻ + M⁻¹ f (what the contact impulses did).
  const Eigen::VectorXd v_free = f ? Eigen::VectorXd(v_minus + M.llt().solve(*f)) : v_minus;
  r.kinetic_energy_change = 0.5 * (r.v_plus - v_free).dot(M * (r.v_plus + v_free));
  if (ir.impulse_u.size() == u_plus.size()) {
    ReportEnergy(0.5 * v_free.dot(M * v_free), ir.impulse_u, G * v_free + g_t, u_plus, &r);
  }
  return r;
}

// `f`: the force impulse of a time step (SolveFrictionalVelocityStep), null for an impact.
FrictionalImpactResult Impact(const char* who, const engine::MechanicalSystem& system, double t,
                              const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
                              const Eigen::VectorXd* f, std::span<const int> bilateral_rows,
                              std::span<const FrictionalContact> contacts,
                              const FrictionOptions& options, bool tangential) {
  const ContactRows rows = Validate(who, system, t, q, v_minus, "v_minus", bilateral_rows, contacts,
                                    options, Level::kImpact);
  if (f && (f->size() != system.nv() || !f->allFinite())) {
    throw std::invalid_argument(
        std::string(who) + ": f must have nv = " + std::to_string(system.nv()) + " finite entries");
  }
  if (Frictionless(contacts) && !tangential) {
    return FrictionlessImpact(system, t, q, v_minus, f, bilateral_rows, contacts, rows, options);
  }
  FrictionalImpactResult r;
  r.v_plus = v_minus;
  r.impulse_b = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(bilateral_rows.size()));
  const DenseAssembly a = AssembleDense(system, t, q, bilateral_rows, rows.rows);
  if (!a.error.empty()) {
    r.message = a.error;
    return r;
  }
  Eigen::VectorXd gt_b, gt_u;
  system.ConstraintTimeDerivative(t, q, bilateral_rows, &gt_b);
  system.ConstraintTimeDerivative(t, q, rows.rows, &gt_u);
  if (!gt_b.allFinite() || !gt_u.allFinite()) {
    r.message = "a constraint's time derivative has a non-finite entry";
    return r;
  }
  const Eigen::VectorXd u_minus = a.G_u * v_minus + gt_u;
  Eigen::VectorXd d = gt_u;  // + e u_N⁻ on the normal rows
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const int n = rows.local[i].normal;
    if (!tangential) d[n] += contacts[i].restitution * u_minus[n] + contacts[i].gap_rate;
  }
  // Lᵀ v⁻, and for a step Lᵀ (v⁻ + M⁻¹ f) = Lᵀ v⁻ + L⁻¹ f (M = L Lᵀ).
  Eigen::VectorXd y0 = a.llt.matrixU() * v_minus;
  if (f) y0 += a.llt.matrixL().solve(*f);
  const BilateralElimination elimination(a.A_b, a.A_u, y0, gt_b);
  r.bilateral_rank = elimination.rank();
  // Impacts: T⁺ − T(y_free) = cᵀz + ½ zᵀWz with c = Cᵀ y_free, for the choice among the
  // solutions of an indeterminate impact (friction_cone.h, "Choice among solutions"); the
  // components are independent in T (W and C's columns of different components are orthogonal).
  const Eigen::VectorXd energy_rate = elimination.C().transpose() * elimination.y_free();
  const Solved s =
      SolveComponents(system, contacts, rows, elimination.W(), elimination.Rhs(d), options,
                      tangential, f == nullptr && !tangential ? &energy_rate : nullptr);
  Eigen::VectorXd y;
  elimination.Recover(s.z, &y, &r.impulse_b, &r.bilateral_residual);
  r.v_plus = a.llt.matrixU().solve(y);
  const Eigen::VectorXd u_plus = a.G_u * r.v_plus + gt_u;
  std::vector<ContactMode> modes = s.modes;
  const double tol = 10.0 * options.tolerance *
                     std::max(1.0, u_minus.size() > 0 ? u_minus.lpNorm<Eigen::Infinity>() : 0.0);
  for (std::size_t i = 0; i < modes.size(); ++i) {
    if (u_plus[rows.local[i].normal] > tol) modes[i] = ContactMode::kOpen;  // bounces off
  }
  r.contacts = ContactResults(rows, s.z, u_plus, modes, s.directions);
  r.residual = s.residual;
  r.diagnosis = s.diagnosis;
  r.components = s.components;
  r.ok = s.ok;
  r.message = s.ok ? "" : s.message;
  r.kinetic_energy_change = EnergyChange(y0, y);
  // The impulses' work against the free velocity (a step: v⁻ + M⁻¹ f; y0 = Lᵀ of it).
  const Eigen::VectorXd u_free =
      f ? Eigen::VectorXd(a.G_u * a.llt.matrixU().solve(y0) + gt_u) : u_minus;
  ReportEnergy(0.5 * y0.squaredNorm(), s.z, u_free, u_plus, &r);
  return r;
}

}  // namespace

Eigen::VectorXd FrictionalImpactResult::Packed() const { return PackContacts(contacts); }
Eigen::VectorXd FrictionalAccelerationResult::Packed() const { return PackContacts(contacts); }

FrictionalImpactResult SolveFrictionalImpact(const engine::MechanicalSystem& system, double t,
                                             const Eigen::VectorXd& q,
                                             const Eigen::VectorXd& v_minus,
                                             std::span<const int> bilateral_rows,
                                             std::span<const FrictionalContact> contacts,
                                             const FrictionOptions& options) {
  return Impact("SolveFrictionalImpact", system, t, q, v_minus, nullptr, bilateral_rows, contacts,
                options, false);
}

FrictionalImpactResult SolveTangentialImpact(const engine::MechanicalSystem& system, double t,
                                             const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                             std::span<const int> bilateral_rows,
                                             std::span<const FrictionalContact> contacts,
                                             const FrictionOptions& options) {
  return Impact("SolveTangentialImpact", system, t, q, v, nullptr, bilateral_rows, contacts,
                options, true);
}

FrictionalImpactResult SolveFrictionalVelocityStep(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
    std::span<const FrictionalContact> contacts, const FrictionOptions& options) {
  return Impact("SolveFrictionalVelocityStep", system, t, q, v, &f, bilateral_rows, contacts,
                options, false);
}

FrictionalAccelerationResult SolveFrictionalAccelerations(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, std::span<const int> bilateral_rows,
    std::span<const FrictionalContact> contacts, const FrictionOptions& options) {
  const char* who = "SolveFrictionalAccelerations";
  const ContactRows rows =
      Validate(who, system, t, q, v, "v", bilateral_rows, contacts, options, Level::kAcceleration);
  FrictionalAccelerationResult r;
  if (Frictionless(contacts)) {
    std::vector<int> normal_rows;
    for (const FrictionalContact& c : contacts) normal_rows.push_back(c.normal_row);
    const ContactAccelerationResult ar = SolveContactAccelerations(
        system, t, q, v, bilateral_rows, normal_rows, ToLcpOptions(options));
    r.vdot = ar.vdot;
    r.lambda_b = ar.lambda_b;
    Eigen::MatrixXd G;
    Eigen::VectorXd gamma;
    system.ConstraintJacobian(t, q, rows.rows, &G);
    system.ConstraintGamma(t, q, v, rows.rows, &gamma);
    FillFrictionless(ar.ok, ar.bilateral_rank, ar.bilateral_residual, ar.lcp, ar.message,
                     ar.lambda_u, rows, G * r.vdot + gamma, options.tolerance, &r);
    return r;
  }
  r.vdot = Eigen::VectorXd::Zero(system.nv());
  r.lambda_b = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(bilateral_rows.size()));
  const DenseAssembly a = AssembleDense(system, t, q, bilateral_rows, rows.rows);
  if (!a.error.empty()) {
    r.message = a.error;
    return r;
  }
  Eigen::VectorXd F, gamma_b, gamma_u;
  system.Forces(t, q, v, &F);
  system.ConstraintGamma(t, q, v, bilateral_rows, &gamma_b);
  system.ConstraintGamma(t, q, v, rows.rows, &gamma_u);
  if (F.size() != system.nv() || !F.allFinite() || !gamma_b.allFinite() || !gamma_u.allFinite()) {
    r.message =
        "the applied forces or a constraint's acceleration term (gamma) have a non-finite entry";
    return r;
  }
  const Eigen::VectorXd y0 = a.llt.matrixL().solve(F);  // L⁻¹ F = Lᵀ M⁻¹ F
  const BilateralElimination elimination(a.A_b, a.A_u, y0, gamma_b);
  r.bilateral_rank = elimination.rank();
  const Solved s = SolveComponents(system, contacts, rows, elimination.W(),
                                   elimination.Rhs(gamma_u), options, false);
  Eigen::VectorXd y;
  elimination.Recover(s.z, &y, &r.lambda_b, &r.bilateral_residual);
  r.vdot = a.llt.matrixU().solve(y);
  const Eigen::VectorXd accel = a.G_u * r.vdot + gamma_u;
  r.contacts = ContactResults(rows, s.z, accel, s.modes, s.directions);
  r.residual = s.residual;
  r.diagnosis = s.diagnosis;
  r.components = s.components;
  r.ok = s.ok;
  r.message = s.ok ? "" : s.message;
  return r;
}

}  // namespace saltus::contact
