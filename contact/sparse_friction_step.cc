#include "contact/sparse_friction_step.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/complementarity.h"
#include "contact/delassus.h"
#include "contact/friction_cone.h"
#include "contact/sparse_assembly.h"
#include "engine/block_sparse.h"

namespace saltus::contact {
namespace {

using Eigen::VectorXd;

constexpr const char* kWho = "SolveFrictionalVelocityStepSparse";

void Validate(const engine::MechanicalSystem& system, double t, const VectorXd& q,
              const VectorXd& v, const VectorXd& f, std::span<const int> normal_rows,
              std::span<const double> restitution, const FrictionOptions& options) {
  const std::string who(kWho);
  ValidateState(kWho, system, t, q, v, "v");
  if (f.size() != system.nv() || !f.allFinite()) {
    throw std::invalid_argument(who + ": f must have nv = " + std::to_string(system.nv()) +
                                " finite entries");
  }
  ValidateRows(kWho, system, {}, normal_rows);
  if (restitution.size() != normal_rows.size()) {
    throw std::invalid_argument(who + ": " + std::to_string(restitution.size()) +
                                " restitution coefficients for " +
                                std::to_string(normal_rows.size()) + " contacts");
  }
  for (std::size_t k = 0; k < restitution.size(); ++k) {
    if (!(restitution[k] >= 0.0 && restitution[k] <= 1.0)) {
      throw std::invalid_argument(who + ": " + RowLabel(system, normal_rows[k]) +
                                  ": restitution must be in [0, 1], got " +
                                  std::to_string(restitution[k]));
    }
  }
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance) ||
      options.max_iterations <= 0) {
    throw std::invalid_argument(who + ": tolerance and max_iterations must be > 0");
  }
  if (options.warm_start != nullptr &&
      options.warm_start->size() != 3 * static_cast<Eigen::Index>(normal_rows.size())) {
    throw std::invalid_argument(who + ": warm start has " +
                                std::to_string(options.warm_start->size()) +
                                " entries, expected 3 per contact");
  }
}

// The rows of the contacts (normal, then tangential, per contact) and the first of each.
struct Rows {
  std::vector<FrictionalContact> contacts;
  std::vector<int> rows;   // global rows, in contact order
  std::vector<int> first;  // position of each contact's normal row in `rows`
};

// std::nullopt when a contact has one tangential row (the planar case: dense path).
std::optional<Rows> CollectRows(const engine::MechanicalSystem& system,
                                std::span<const int> normal_rows,
                                std::span<const double> restitution) {
  Rows out;
  for (std::size_t k = 0; k < normal_rows.size(); ++k) {
    const FrictionalContact c =
        FrictionalContact::FromSystem(system, normal_rows[k], restitution[k]);
    if (c.num_tangent_rows == 1) return std::nullopt;
    out.first.push_back(static_cast<int>(out.rows.size()));
    out.rows.push_back(c.normal_row);
    for (int j = 0; j < c.num_tangent_rows; ++j) {
      out.rows.push_back(c.tangent_rows[static_cast<std::size_t>(j)]);
    }
    out.contacts.push_back(c);
  }
  ValidateRows(kWho, system, {}, out.rows);
  return out;
}

// One component: its contacts (indices into Rows::contacts, ascending) as the local problem of
// 3 unknowns per contact (normal, tangent 1, tangent 2; inert tangents for frictionless contacts).
struct Component {
  std::vector<int> contacts;
  std::vector<int> idx;  // the rows of `rows` of these contacts, ascending
  std::vector<int> at;   // for each entry of idx, its unknown (3 k + j)
  Eigen::SparseMatrix<double> W;
  LocalProblem law;  // contacts and b (3 per contact); W stays empty (CoulombResidual needs b)
  VectorXd mu;
};

Component BuildComponent(const SparseAssembled& a, const Rows& rows, std::vector<int> contacts,
                         const VectorXd& b) {
  Component c;
  c.contacts = std::move(contacts);
  const auto nc = static_cast<Eigen::Index>(c.contacts.size());
  c.law.b = VectorXd::Zero(3 * nc);
  c.mu = VectorXd::Zero(nc);
  for (Eigen::Index k = 0; k < nc; ++k) {
    const auto i = static_cast<std::size_t>(c.contacts[static_cast<std::size_t>(k)]);
    const FrictionalContact& fc = rows.contacts[i];
    LocalContact lc;
    lc.normal = static_cast<int>(3 * k);
    lc.num_tangents = fc.num_tangent_rows;
    lc.tangents = {lc.normal + 1, lc.normal + 2};
    lc.mu = fc.friction;
    c.mu[k] = fc.num_tangent_rows == 2 ? fc.friction : 0.0;
    c.law.contacts.push_back(lc);
    for (int j = 0; j <= fc.num_tangent_rows; ++j) {
      c.idx.push_back(rows.first[i] + j);
      c.at.push_back(static_cast<int>(3 * k) + j);
      c.law.b[3 * k + j] = b[rows.first[i] + j];
    }
  }
  Eigen::SparseMatrix<double> W_rows(static_cast<Eigen::Index>(c.idx.size()),
                                     static_cast<Eigen::Index>(c.idx.size()));
  a.SparseBlock(c.idx, &W_rows);
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(static_cast<std::size_t>(W_rows.nonZeros()) + 2 * c.contacts.size());
  double diagonal = 0.0;
  for (int j = 0; j < W_rows.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(W_rows, j); it; ++it) {
      entries.emplace_back(c.at[static_cast<std::size_t>(it.row())],
                           c.at[static_cast<std::size_t>(j)], it.value());
      if (it.row() == j) diagonal = std::max(diagonal, it.value());
    }
  }
  // Inert unknowns (no row): a diagonal of W's scale keeps the Newton matrix regular; q = 0 there.
  for (Eigen::Index k = 0; k < nc; ++k) {
    if (c.law.contacts[static_cast<std::size_t>(k)].num_tangents > 0) continue;
    const double d = diagonal > 0.0 ? diagonal : 1.0;
    entries.emplace_back(3 * k + 1, 3 * k + 1, d);
    entries.emplace_back(3 * k + 2, 3 * k + 2, d);
  }
  c.W.resize(3 * nc, 3 * nc);
  c.W.setFromTriplets(entries.begin(), entries.end());
  return c;
}

struct ComponentResult {
  bool ok = false;
  VectorXd r;  // 3 per contact
  double residual = 0.0;
  std::string message;
};

// Gauss–Seidel sweeps allowed to fc3d NSGS: the hardest captured step problem (a 100-sphere pile
// at t = 0.545 s, 167 contacts) needs 1910 sweeps (0.12 s) to 1e-10.
constexpr int kNsgsSweeps = 20000;

// fc3d on the component (header): NSGS, then Alart–Curnier Newton from its answer (locally
// quadratic where NSGS stalls; its leak costs only these rare calls), then both again with
// Siconos' tolerance 100× tighter when its error measure accepted an answer ours does not.
ComponentResult SolveComponent(const Component& c, const FrictionOptions& options,
                               const VectorXd& r_start) {
  ComponentResult out;
  VectorXd r0 = r_start;
  for (int attempt = 0; attempt < 4; ++attempt) {
    Fc3dOptions fo;
    fo.solver = attempt % 2 == 0 ? Fc3dSolver::kNsgs : Fc3dSolver::kAlartCurnierNewton;
    fo.fallback = false;
    fo.tolerance = attempt < 2 ? options.tolerance : 1e-2 * options.tolerance;
    fo.max_iterations = attempt % 2 == 0 ? std::max(options.max_iterations, kNsgsSweeps) : 200;
    const Fc3dResult fr = SolveFrictionContact3d(c.W, c.law.b, c.mu, fo, &r0);
    out.message += (out.message.empty() ? "" : "; ") + fr.message;
    if (!fr.r.allFinite()) continue;
    const double residual = CoulombResidual(c.law, fr.r, c.W * fr.r + c.law.b);
    if (out.r.size() == 0 || residual < out.residual) {
      out.r = fr.r;
      out.residual = residual;
      r0 = fr.r;
    }
    if (out.residual <= options.tolerance) break;
  }
  if (out.r.size() == 0) {
    out.r = VectorXd::Zero(c.law.b.size());
    out.residual = std::numeric_limits<double>::infinity();
  }
  out.ok = out.residual <= options.tolerance;
  return out;
}

// The contacts of every component of the body–contact graph, in ascending order.
std::vector<std::vector<int>> ContactsByComponent(const SparseAssembled& a, const Rows& rows) {
  std::vector<std::vector<int>> by(static_cast<std::size_t>(a.num_components));
  for (std::size_t i = 0; i < rows.contacts.size(); ++i) {
    const auto comp =
        static_cast<std::size_t>(a.component_of_row[static_cast<std::size_t>(rows.first[i])]);
    by[comp].push_back(static_cast<int>(i));
  }
  std::erase_if(by, [](const std::vector<int>& c) { return c.empty(); });
  return by;
}

// x ↦ M x by blocks.
VectorXd MTimes(const SparseAssembled& a, const VectorXd& x) {
  const int b = a.M.block_size;
  VectorXd y(x.size());
  for (Eigen::Index off = 0; off < x.size(); off += b) {
    y.segment(off, b) = a.M.blocks.middleCols(off, b) * x.segment(off, b);
  }
  return y;
}

std::string Names(const engine::MechanicalSystem& system, const Rows& rows,
                  const std::vector<int>& contacts) {
  constexpr std::size_t kShown = 4;
  std::string s = contacts.size() == 1 ? "contact " : "contacts ";
  for (std::size_t k = 0; k < contacts.size() && k < kShown; ++k) {
    const int row = rows.contacts[static_cast<std::size_t>(contacts[k])].normal_row;
    s += (k > 0 ? ", '" : "'") + system.constraint_info(row).name + "'";
  }
  if (contacts.size() > kShown) s += " and " + std::to_string(contacts.size() - kShown) + " more";
  return s;
}

// Per-contact impulses, rates and modes (friction_cone.h, ContactMode) with rate threshold tol.
FrictionalContactResult ContactOf(const FrictionalContact& c, int first, const VectorXd& z,
                                  const VectorXd& u_plus, double tol) {
  FrictionalContactResult r;
  r.normal = z[first];
  r.normal_rate = u_plus[first];
  for (int j = 0; j < c.num_tangent_rows; ++j) {
    r.tangential[j] = z[first + 1 + j];
    r.tangential_rate[j] = u_plus[first + 1 + j];
  }
  if (r.normal_rate > tol) {
    r.mode = ContactMode::kOpen;
  } else if (c.friction == 0.0 || c.num_tangent_rows == 0) {
    r.mode = ContactMode::kClosed;
  } else if (r.tangential_rate.norm() <= tol) {
    r.mode = ContactMode::kStick;
  } else {
    r.mode = ContactMode::kSlip;
    r.slip_direction = r.tangential_rate.normalized();
  }
  return r;
}

}  // namespace

std::optional<FrictionalImpactResult> SolveFrictionalVelocityStepSparse(
    const engine::MechanicalSystem& system, double t, const VectorXd& q, const VectorXd& v,
    const VectorXd& f, std::span<const int> normal_rows, std::span<const double> restitution,
    const FrictionOptions& options) {
  Validate(system, t, q, v, f, normal_rows, restitution, options);
  if (options.cone != FrictionCone::kExact || system.nv() < engine::kSparseMinimumNv) {
    return std::nullopt;
  }
  const std::optional<Rows> rows = CollectRows(system, normal_rows, restitution);
  if (!rows) return std::nullopt;
  SparseAssembled a = AssembleSparse(system, t, q, rows->rows, true);
  if (!a.available) return std::nullopt;
  FrictionalImpactResult r;
  r.v_plus = v;
  if (!a.error.empty()) {
    r.message = a.error;
    return r;
  }
  VectorXd gt;
  system.ConstraintTimeDerivative(t, q, rows->rows, &gt);
  if (!gt.allFinite()) {
    r.message = "a constraint's time derivative has a non-finite entry";
    return r;
  }
  VectorXd u_minus, u_free;
  a.G.Multiply(v, &u_minus);
  u_minus += gt;
  const VectorXd v_free = v + MinvTimes(a, f);
  a.G.Multiply(v_free, &u_free);
  u_free += gt;
  VectorXd b = u_free;
  for (std::size_t i = 0; i < rows->contacts.size(); ++i) {
    const int n = rows->first[i];
    b[n] += rows->contacts[i].restitution * u_minus[n];
  }

  VectorXd z = VectorXd::Zero(b.size());
  r.ok = true;
  for (std::vector<int>& contacts : ContactsByComponent(a, *rows)) {
    const bool pushed = std::any_of(contacts.begin(), contacts.end(), [&](int i) {
      return b[rows->first[static_cast<std::size_t>(i)]] < 0.0;
    });
    if (!pushed) continue;
    const Component c = BuildComponent(a, *rows, std::move(contacts), b);
    VectorXd r0 = VectorXd::Zero(c.law.b.size());
    if (options.warm_start != nullptr) {
      for (std::size_t k = 0; k < c.contacts.size(); ++k) {
        r0.segment<3>(3 * static_cast<Eigen::Index>(k)) =
            options.warm_start->segment<3>(3 * static_cast<Eigen::Index>(c.contacts[k]));
      }
    }
    const ComponentResult s = SolveComponent(c, options, r0);
    for (std::size_t e = 0; e < c.idx.size(); ++e) {
      z[c.idx[e]] = s.r[c.at[e]];
    }
    ++r.components;
    r.residual = std::max(r.residual, s.residual);
    if (!s.ok && r.ok) r.message = Names(system, *rows, c.contacts) + ": " + s.message;
    r.ok = r.ok && s.ok;
  }

  r.v_plus = v_free;
  AddMinvGtz(a, z, &r.v_plus);
  VectorXd u_plus;
  a.G.Multiply(r.v_plus, &u_plus);
  u_plus += gt;
  const double tol =
      10.0 * options.tolerance * std::max(1.0, b.size() > 0 ? b.lpNorm<Eigen::Infinity>() : 0.0);
  for (std::size_t i = 0; i < rows->contacts.size(); ++i) {
    r.contacts.push_back(ContactOf(rows->contacts[i], rows->first[i], z, u_plus, tol));
  }
  r.diagnosis.status = r.ok ? Solvability::kSolved : Solvability::kNoSolutionFound;
  // Energy against the free velocity (friction_problem.h: ΔT and W_c = ½ Pᵀ (u⁺ + u_free)).
  const VectorXd M_free = MTimes(a, v_free);
  const double T_free = 0.5 * v_free.dot(M_free);
  r.kinetic_energy_change = 0.5 * (r.v_plus - v_free).dot(MTimes(a, r.v_plus + v_free));
  r.contact_work = 0.5 * z.dot(u_plus + u_free);
  // W_c is accurate to ~1e-10 T (the law's tolerance): 1e-8 T leaves a margin of 100.
  r.energy_gain = r.contact_work > 1e-8 * T_free;
  if (r.energy_gain) {
    r.message += (r.message.empty() ? "" : "; ") +
                 std::string("the contact impulses gained energy: ") +
                 std::to_string(r.contact_work) + " J (T- = " + std::to_string(T_free) + " J)";
  }
  return r;
}

}  // namespace saltus::contact
