#include "contact/sparse_friction_step.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "contact/complementarity.h"
#include "contact/delassus.h"
#include "contact/fc3d_newton.h"
#include "contact/friction_cone.h"
#include "contact/lcp_capture.h"
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
  VectorXd b;   // 3 per contact
  VectorXd mu;  // 0 for contacts without two tangential rows
};

Component BuildComponent(const SparseAssembled& a, const Rows& rows, std::vector<int> contacts,
                         const VectorXd& b) {
  Component c;
  c.contacts = std::move(contacts);
  const auto nc = static_cast<Eigen::Index>(c.contacts.size());
  c.b = VectorXd::Zero(3 * nc);
  c.mu = VectorXd::Zero(nc);
  std::vector<char> inert(static_cast<std::size_t>(nc));
  for (Eigen::Index k = 0; k < nc; ++k) {
    const auto i = static_cast<std::size_t>(c.contacts[static_cast<std::size_t>(k)]);
    const FrictionalContact& fc = rows.contacts[i];
    c.mu[k] = fc.num_tangent_rows == 2 ? fc.friction : 0.0;
    inert[static_cast<std::size_t>(k)] = fc.num_tangent_rows == 0;
    for (int j = 0; j <= fc.num_tangent_rows; ++j) {
      c.idx.push_back(rows.first[i] + j);
      c.at.push_back(static_cast<int>(3 * k) + j);
      c.b[3 * k + j] = b[rows.first[i] + j];
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
    if (!inert[static_cast<std::size_t>(k)]) continue;
    const double d = diagonal > 0.0 ? diagonal : 1.0;
    entries.emplace_back(3 * k + 1, 3 * k + 1, d);
    entries.emplace_back(3 * k + 2, 3 * k + 2, d);
  }
  c.W.resize(3 * nc, 3 * nc);
  c.W.setFromTriplets(entries.begin(), entries.end());
  return c;
}

// A component that needed more than the first attempt, or failed, into the capture folder
// (contact/lcp_capture.h, kind "friction_step").
void MaybeCapture(double t, const Rows& rows, const Component& c, const FrictionChainResult& s) {
  const int failed_stages = s.stage == FrictionStage::kNsgs ? 0 : 1;
  if (!CaptureWanted(s.stage != FrictionStage::kFailed, failed_stages, false)) return;
  CaptureLcp([&](CapturedLcp* p) {
    p->kind = "friction_step";
    p->t = t;
    p->note = s.message;
    for (const int i : c.contacts) {
      const FrictionalContact& fc = rows.contacts[static_cast<std::size_t>(i)];
      p->rows.push_back(fc.normal_row);
      for (int j = 0; j < 2; ++j) {
        p->rows.push_back(j < fc.num_tangent_rows ? fc.tangent_rows[static_cast<std::size_t>(j)]
                                                  : fc.normal_row);
      }
    }
    p->W = c.W;
    p->b = c.b;
    p->mu = c.mu;
  });
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

// The kNewton stage (contact/fc3d_newton.h) from the best answer so far: true when it met the
// tolerance (out then holds its answer and stage).
bool TryNewton(const Eigen::SparseMatrix<double>& W, const VectorXd& b, const VectorXd& mu,
               const FrictionChainOptions& options, FrictionChainResult* out) {
  if (options.newton_iterations == 0) return false;
  struct Attempt {
    double rho_scale;
    int iterations;
  };
  const Attempt attempts[] = {{Fc3dNewtonOptions{}.rho_scale, options.newton_iterations},
                              {options.newton_retry_rho_scale, options.newton_retry_iterations}};
  for (const Attempt& a : attempts) {
    if (a.rho_scale == 0.0) continue;
    const double c = a.rho_scale;
    Fc3dNewtonOptions no;
    no.tolerance = options.tolerance;
    no.max_iterations = a.iterations;
    no.rho_scale = c;
    const Fc3dNewtonResult nr = SolveFc3dNewton(W, b, mu, no, out->r);
    char scale[32];
    std::snprintf(scale, sizeof scale, " [c = %g]", c);
    out->message += "; " + nr.message + scale;
    if (nr.residual < out->residual) {
      out->r = nr.r;
      out->residual = nr.residual;
    }
    if (out->residual <= options.tolerance) {
      out->stage = FrictionStage::kNewton;
      out->ok = true;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view FrictionStageName(FrictionStage stage) {
  switch (stage) {
    case FrictionStage::kNsgs:
      return "nsgs";
    case FrictionStage::kNewton:
      return "newton";
    case FrictionStage::kProximal:
      return "proximal";
    case FrictionStage::kAdmm:
      return "admm";
    case FrictionStage::kPolish:
      return "nsgs_polish";
    case FrictionStage::kAccepted:
      return "accepted";
    case FrictionStage::kFailed:
      return "failed";
  }
  return "unknown";
}

FrictionChainResult SolveFrictionComponent(const Eigen::SparseMatrix<double>& W, const VectorXd& b,
                                           const VectorXd& mu, const FrictionChainOptions& options,
                                           const VectorXd& r0) {
  if (!(options.tolerance > 0.0) || !(options.accepted_residual >= 0.0) ||
      !(options.newton_retry_rho_scale >= 0.0) || !std::isfinite(options.newton_retry_rho_scale) ||
      options.newton_retry_iterations <= 0 || options.nsgs_sweeps <= 0 ||
      options.newton_iterations < 0 || options.proximal_iterations <= 0 ||
      options.proximal_max_contacts < 0 || options.admm_iterations <= 0 ||
      options.polish_sweeps <= 0) {
    throw std::invalid_argument(
        "SolveFrictionComponent: tolerance must be > 0, accepted_residual >= 0, "
        "newton_retry_rho_scale finite and >= 0, the iteration counts > 0 (newton_iterations >= "
        "0) and proximal_max_contacts >= 0");
  }
  FrictionChainResult out;
  out.r = r0;
  out.residual = Fc3dResidual(W, b, mu, r0);  // SolveFrictionContact3d checks the sizes
  if (out.residual <= options.tolerance && r0.size() == b.size()) {
    // The start already solves it (a step solved again with the answer of its last round as
    // warm start, timestepping/moreau_jean.h): Siconos' NSGS measures its error in another
    // norm and could sweep on.
    out.stage = FrictionStage::kNsgs;
    out.ok = true;
    out.message = "the start meets the tolerance";
    return out;
  }
  struct Attempt {
    FrictionStage stage;
    Fc3dSolver solver;
    int iterations;
    double siconos_factor;  // Siconos' tolerance relative to ours (its error is another norm)
  };
  const Attempt attempts[] = {
      {FrictionStage::kNsgs, Fc3dSolver::kNsgs, options.nsgs_sweeps, 1.0},
      {FrictionStage::kAdmm, Fc3dSolver::kAdmm, options.admm_iterations, 1.0},
      {FrictionStage::kPolish, Fc3dSolver::kNsgs, options.polish_sweeps, 1e-2},
      {FrictionStage::kProximal, Fc3dSolver::kProximal, options.proximal_iterations, 1e-2},
  };
  const bool dense_fits = mu.size() <= options.proximal_max_contacts;
  for (const Attempt& a : attempts) {
    if (a.stage == FrictionStage::kAdmm && TryNewton(W, b, mu, options, &out)) return out;
    const bool dense = a.stage == FrictionStage::kProximal;
    if (dense && !dense_fits) continue;
    Fc3dOptions fo;
    fo.solver = a.solver;
    fo.fallback = false;
    fo.tolerance = a.siconos_factor * options.tolerance;
    fo.max_iterations = a.iterations;
    // The proximal stage on the dense W: Siconos' sparse Newton leaks (see the header).
    const Fc3dResult fr = dense ? SolveFrictionContact3d(Eigen::MatrixXd(W), b, mu, fo, &out.r)
                                : SolveFrictionContact3d(W, b, mu, fo, &out.r);
    out.message += (out.message.empty() ? "" : "; ") + fr.message;
    if (!fr.r.allFinite()) continue;
    const double residual = Fc3dResidual(W, b, mu, fr.r);
    if (residual < out.residual) {
      out.r = fr.r;
      out.residual = residual;
    }
    if (out.residual <= options.tolerance) {
      out.stage = a.stage;
      out.ok = true;
      return out;
    }
  }
  out.ok = out.residual <= options.accepted_residual;
  out.stage = out.ok ? FrictionStage::kAccepted : FrictionStage::kFailed;
  char tail[128];
  std::snprintf(tail, sizeof tail, "; best residual %.3g %s %.3g)", out.residual,
                out.ok ? "accepted (bound" : "above the accepted bound (",
                options.accepted_residual);
  out.message += tail;
  return out;
}

std::optional<FrictionalImpactResult> SolveFrictionalVelocityStepSparse(
    const engine::MechanicalSystem& system, double t, const VectorXd& q, const VectorXd& v,
    const VectorXd& f, std::span<const int> normal_rows, std::span<const double> restitution,
    const FrictionOptions& options, const SparseStepOptions& sparse) {
  Validate(system, t, q, v, f, normal_rows, restitution, options);
  if (!(sparse.accepted_residual >= 0.0) || !std::isfinite(sparse.accepted_residual)) {
    throw std::invalid_argument(std::string(kWho) + ": accepted_residual must be finite and >= 0");
  }
  FrictionChainOptions chain;
  chain.tolerance = options.tolerance;
  chain.accepted_residual = sparse.accepted_residual;
  SparseFrictionStats* stats = sparse.stats;
  if (options.cone != FrictionCone::kExact || system.nv() < engine::kSparseMinimumNv) {
    return std::nullopt;
  }
  if (!sparse.gap_rate.empty() && sparse.gap_rate.size() != normal_rows.size()) {
    throw std::invalid_argument(std::string(kWho) + ": " + std::to_string(sparse.gap_rate.size()) +
                                " gap rates for " + std::to_string(normal_rows.size()) +
                                " contacts");
  }
  for (std::size_t k = 0; k < sparse.gap_rate.size(); ++k) {
    if (!std::isfinite(sparse.gap_rate[k])) {
      throw std::invalid_argument(std::string(kWho) + ": " + RowLabel(system, normal_rows[k]) +
                                  ": the gap rate must be finite");
    }
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
  StepRates rates;
  r.message = ComputeStepRates(system, a, t, q, rows->rows, v, f, &rates);
  if (!r.message.empty()) return r;
  const VectorXd& gt = rates.gt;
  const VectorXd& v_free = rates.v_free;
  const VectorXd& u_minus = rates.u_minus;
  const VectorXd& u_free = rates.u_free;
  VectorXd b = u_free;
  for (std::size_t i = 0; i < rows->contacts.size(); ++i) {
    const int n = rows->first[i];
    b[n] += rows->contacts[i].restitution * u_minus[n];
    if (!sparse.gap_rate.empty()) b[n] += sparse.gap_rate[i];
  }

  VectorXd z = VectorXd::Zero(b.size());
  r.ok = true;
  ComponentMemo* memo = sparse.memo;
  if (memo != nullptr && !(memo->t == t && memo->q.size() == q.size() && memo->q == q)) {
    memo->t = t;
    memo->q = q;
    memo->entries.clear();
  }
  for (std::vector<int>& contacts : ContactsByComponent(a, *rows)) {
    const bool pushed = std::any_of(contacts.begin(), contacts.end(), [&](int i) {
      return b[rows->first[static_cast<std::size_t>(i)]] < 0.0;
    });
    if (!pushed) continue;
    const Component c = BuildComponent(a, *rows, std::move(contacts), b);
    VectorXd r0 = VectorXd::Zero(c.b.size());
    if (options.warm_start != nullptr) {
      for (std::size_t k = 0; k < c.contacts.size(); ++k) {
        r0.segment<3>(3 * static_cast<Eigen::Index>(k)) =
            options.warm_start->segment<3>(3 * static_cast<Eigen::Index>(c.contacts[k]));
      }
    }
    std::vector<int> normals;
    for (const int i : c.contacts) {
      normals.push_back(rows->contacts[static_cast<std::size_t>(i)].normal_row);
    }
    const ComponentMemo::Entry* seen = nullptr;
    if (memo != nullptr) {
      for (const ComponentMemo::Entry& e : memo->entries) {
        if (e.normal_rows == normals && e.b.size() == c.b.size() && e.b == c.b) seen = &e;
      }
    }
    FrictionChainResult s;
    if (seen != nullptr) {
      s = seen->result;
      ++memo->reused;
    } else {
      s = SolveFrictionComponent(c.W, c.b, c.mu, chain, r0);
      if (!s.ok && !r0.isZero(0.0)) {
        // The warm start can lead every stage to the same stall (header): the chain once more
        // from P = 0, kept when it ends better.
        FrictionChainResult cold =
            SolveFrictionComponent(c.W, c.b, c.mu, chain, VectorXd::Zero(r0.size()));
        if (cold.ok || cold.residual < s.residual) s = std::move(cold);
      }
      MaybeCapture(t, *rows, c, s);
      if (memo != nullptr) memo->entries.push_back({std::move(normals), c.b, s});
    }
    if (stats != nullptr && seen == nullptr) {
      ++stats->components[static_cast<std::size_t>(s.stage)];
      if (s.stage == FrictionStage::kAccepted) {
        stats->largest_accepted_residual = std::max(stats->largest_accepted_residual, s.residual);
      }
    }
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
