#include "contact/sparse_rolling_step.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contact/complementarity.h"
#include "contact/delassus.h"
#include "contact/rolling_friction_step.h"
#include "contact/sparse_assembly.h"

namespace saltus::contact {
namespace {

using Eigen::VectorXd;
using Vector5d = Eigen::Matrix<double, 5, 1>;
using Matrix5d = Eigen::Matrix<double, 5, 5>;

constexpr const char* kWho = "SolveRollingFrictionVelocityStepSparse";
constexpr int kUnknowns = 5;           // per contact: normal, tangent 1, 2, rolling 1, 2
constexpr int kLocalIterations = 500;  // projected fixed point of one contact
constexpr int kResidualEvery = 4;      // sweeps between residual checks

void Validate(const engine::MechanicalSystem& system, double t, const VectorXd& q,
              const VectorXd& v, const VectorXd& f, std::span<const int> normal_rows,
              std::span<const double> restitution, const FrictionOptions& options,
              const RollingStepOptions& rolling) {
  const std::string who(kWho);
  ValidateState(kWho, system, t, q, v, "v");
  if (f.size() != system.nv() || !f.allFinite()) {
    throw std::invalid_argument(who + ": f must have nv = " + std::to_string(system.nv()) +
                                " finite entries");
  }
  ValidateRows(kWho, system, {}, normal_rows);
  const auto count = [&](std::size_t n, const char* what) {
    if (n != normal_rows.size()) {
      throw std::invalid_argument(who + ": " + std::to_string(n) + " " + what + " for " +
                                  std::to_string(normal_rows.size()) + " contacts");
    }
  };
  count(restitution.size(), "restitution coefficients");
  if (!rolling.gap_rate.empty()) count(rolling.gap_rate.size(), "gap rates");
  if (rolling.warm_start != nullptr) {
    count(static_cast<std::size_t>(rolling.warm_start->size() / kUnknowns), "warm starts");
    if (rolling.warm_start->size() % kUnknowns != 0 || !rolling.warm_start->allFinite()) {
      throw std::invalid_argument(who + ": the warm start needs 5 finite entries per contact");
    }
  }
  for (std::size_t k = 0; k < normal_rows.size(); ++k) {
    if (!(restitution[k] >= 0.0 && restitution[k] <= 1.0)) {
      throw std::invalid_argument(who + ": " + RowLabel(system, normal_rows[k]) +
                                  ": restitution must be in [0, 1]");
    }
    if (!rolling.gap_rate.empty() && !std::isfinite(rolling.gap_rate[k])) {
      throw std::invalid_argument(who + ": " + RowLabel(system, normal_rows[k]) +
                                  ": the gap rate must be finite");
    }
  }
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance) || rolling.max_sweeps <= 0 ||
      !(rolling.accepted_residual >= 0.0) || !std::isfinite(rolling.accepted_residual)) {
    throw std::invalid_argument(who +
                                ": tolerance must be finite and > 0, max_sweeps > 0, "
                                "accepted_residual finite and >= 0");
  }
}

// The rows of the contacts (CollectRollingRows) and the position of each contact's normal row
// in `rows` (first[α]; its rows run to first[α + 1]).
struct Layout : RollingLayout {
  std::vector<int> first;
};

// std::nullopt for a planar contact (one tangential row): the dense path.
std::optional<Layout> Collect(const engine::MechanicalSystem& system,
                              std::span<const int> normal_rows) {
  Layout out;
  static_cast<RollingLayout&>(out) = CollectRollingRows(kWho, system, normal_rows);
  for (const int n : normal_rows) {
    if (system.TangentRows(n).size() == 1) return std::nullopt;
  }
  for (std::size_t e = 0; e < out.rows.size(); ++e) {
    if (out.slot[e] % kUnknowns == 0) out.first.push_back(static_cast<int>(e));
  }
  ValidateRows(kWho, system, {}, out.rows);
  return out;
}

Eigen::Vector2d ProjectOntoDisk(const Eigen::Vector2d& x, double radius) {
  const double norm = x.norm();
  return norm <= radius ? x : Eigen::Vector2d(x * (radius / norm));
}

// Largest eigenvalue of a symmetric 2 × 2 block.
double LargestEigenvalue(const Eigen::Matrix2d& A) {
  const double mean = 0.5 * (A(0, 0) + A(1, 1)), half = 0.5 * (A(0, 0) - A(1, 1));
  return mean + std::sqrt(half * half + A(0, 1) * A(0, 1));
}

// The local law's natural-map residual of one contact: P − Π(P − w) per group, its 2-norm.
double LocalResidual(const Vector5d& P, const Vector5d& w, double mu, double mu_r) {
  const double pn = std::max(P[0], 0.0);
  const Eigen::Vector2d et =
      P.segment<2>(1) - ProjectOntoDisk(P.segment<2>(1) - w.segment<2>(1), mu * pn);
  const Eigen::Vector2d er =
      P.segment<2>(3) - ProjectOntoDisk(P.segment<2>(3) - w.segment<2>(3), mu_r * pn);
  const double en = std::min(P[0], w[0]);
  return std::sqrt(en * en + et.squaredNorm() + er.squaredNorm());
}

// One contact's problem w = A P + c with the law of the header (the local solve); `tol` on its
// residual. P holds the start and receives the answer.
void SolveLocal(const Matrix5d& A, const Vector5d& c, double mu, double mu_r, double tol,
                Vector5d* P) {
  if (c[0] >= 0.0) {  // open: P = 0 satisfies every law (w = c, w_N ≥ 0)
    P->setZero();
    return;
  }
  // Sticking: A P = −c on every active unknown (inert ones, with μ or μ_R = 0, stay 0: their
  // rows and columns are replaced by the identity).
  const bool t = mu > 0.0, r = mu_r > 0.0;
  Matrix5d As = A;
  Vector5d cs = c;
  for (int k = 1; k < kUnknowns; ++k) {
    if ((k < 3 && t) || (k >= 3 && r)) continue;
    As.row(k).setZero();
    As.col(k).setZero();
    As(k, k) = 1.0;
    cs[k] = 0.0;
  }
  const Eigen::LDLT<Matrix5d> ldlt(As);
  if (ldlt.info() == Eigen::Success) {
    const Vector5d stick = ldlt.solve(-cs);
    if (stick.allFinite() && stick[0] >= 0.0 && stick.segment<2>(1).norm() <= mu * stick[0] &&
        stick.segment<2>(3).norm() <= mu_r * stick[0] &&
        LocalResidual(stick, A * stick + c, mu, mu_r) <= tol) {
      *P = stick;
      return;
    }
  }
  // Projected fixed point, group by group (header): its fixed points are the law's.
  const double rho_n = 1.0 / A(0, 0);
  const double rho_t = t ? 1.0 / LargestEigenvalue(A.block<2, 2>(1, 1)) : 0.0;
  const double rho_r = r ? 1.0 / LargestEigenvalue(A.block<2, 2>(3, 3)) : 0.0;
  Vector5d& x = *P;
  if (!t) x.segment<2>(1).setZero();
  if (!r) x.segment<2>(3).setZero();
  for (int it = 0; it < kLocalIterations; ++it) {
    x[0] = std::max(0.0, x[0] - rho_n * (A.row(0).dot(x) + c[0]));
    if (t) {
      const Eigen::Vector2d w = A.block<2, 5>(1, 0) * x + c.segment<2>(1);
      x.segment<2>(1) = ProjectOntoDisk(x.segment<2>(1) - rho_t * w, mu * x[0]);
    }
    if (r) {
      const Eigen::Vector2d w = A.block<2, 5>(3, 0) * x + c.segment<2>(3);
      x.segment<2>(3) = ProjectOntoDisk(x.segment<2>(3) - rho_r * w, mu_r * x[0]);
    }
    if (LocalResidual(x, A * x + c, mu, mu_r) <= tol) return;
  }
}

// One component: its contacts (ascending), W with 5 unknowns per contact (inert unknowns: W's
// largest diagonal entry, no coupling, b = 0), b, μ, μ_R and the map from unknowns to `rows`.
struct Component {
  std::vector<int> contacts;
  std::vector<int> idx, at;  // positions in Layout::rows, and their unknowns (5 k + j)
  Eigen::SparseMatrix<double> W;
  VectorXd b, mu, mu_r;
};

Component Build(const SparseAssembled& a, const Layout& layout, std::vector<int> contacts,
                const VectorXd& b) {
  Component c;
  c.contacts = std::move(contacts);
  const auto nc = static_cast<Eigen::Index>(c.contacts.size());
  c.b = VectorXd::Zero(kUnknowns * nc);
  c.mu = VectorXd::Zero(nc);
  c.mu_r = VectorXd::Zero(nc);
  std::vector<char> present(static_cast<std::size_t>(kUnknowns * nc), 0);
  for (Eigen::Index k = 0; k < nc; ++k) {
    const auto i = static_cast<std::size_t>(c.contacts[static_cast<std::size_t>(k)]);
    c.mu[k] = layout.mu[static_cast<Eigen::Index>(i)];
    c.mu_r[k] = layout.mu_r[static_cast<Eigen::Index>(i)];
    const std::size_t end = i + 1 < layout.first.size()
                                ? static_cast<std::size_t>(layout.first[i + 1])
                                : layout.rows.size();
    for (auto e = static_cast<std::size_t>(layout.first[i]); e < end; ++e) {
      const int unknown = kUnknowns * static_cast<int>(k) + layout.slot[e] % kUnknowns;
      c.idx.push_back(static_cast<int>(e));
      c.at.push_back(unknown);
      c.b[unknown] = b[static_cast<Eigen::Index>(e)];
      present[static_cast<std::size_t>(unknown)] = 1;
    }
  }
  Eigen::SparseMatrix<double> W_rows(static_cast<Eigen::Index>(c.idx.size()),
                                     static_cast<Eigen::Index>(c.idx.size()));
  a.SparseBlock(c.idx, &W_rows);
  std::vector<Eigen::Triplet<double>> entries;
  double diagonal = 0.0;
  for (int j = 0; j < W_rows.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(W_rows, j); it; ++it) {
      entries.emplace_back(c.at[static_cast<std::size_t>(it.row())],
                           c.at[static_cast<std::size_t>(j)], it.value());
      if (it.row() == j) diagonal = std::max(diagonal, it.value());
    }
  }
  for (Eigen::Index u = 0; u < kUnknowns * nc; ++u) {
    if (!present[static_cast<std::size_t>(u)]) {
      entries.emplace_back(u, u, diagonal > 0.0 ? diagonal : 1.0);
    }
  }
  c.W.resize(kUnknowns * nc, kUnknowns * nc);
  c.W.setFromTriplets(entries.begin(), entries.end());
  return c;
}

// w += W_·k ΔP (the columns of contact k).
void AddColumns(const Eigen::SparseMatrix<double>& W, Eigen::Index k, const Vector5d& dP,
                VectorXd* w) {
  for (int j = 0; j < kUnknowns; ++j) {
    if (dP[j] == 0.0) continue;
    for (Eigen::SparseMatrix<double>::InnerIterator it(W, kUnknowns * k + j); it; ++it) {
      (*w)[it.row()] += it.value() * dP[j];
    }
  }
}

struct ComponentAnswer {
  VectorXd P;
  double residual = 0.0;
  int sweeps = 0;
  bool converged = false;
};

// Gauss–Seidel over the contacts of `c` from P0 (header), at most max_sweeps sweeps.
ComponentAnswer GaussSeidel(const Component& c, const VectorXd& P0, double tolerance,
                            int max_sweeps) {
  const Eigen::Index nc = c.mu.size();
  const double scale = std::max(1.0, c.b.lpNorm<Eigen::Infinity>());
  std::vector<Matrix5d> diag(static_cast<std::size_t>(nc));
  for (Eigen::Index k = 0; k < nc; ++k) {
    diag[static_cast<std::size_t>(k)] =
        Eigen::MatrixXd(c.W.block(kUnknowns * k, kUnknowns * k, kUnknowns, kUnknowns));
  }
  ComponentAnswer out;
  out.P = P0;
  VectorXd w = c.W * out.P + c.b;
  // Local solves to a tenth of the tolerance, so that the sweeps decide the global residual.
  const double local_tol = 0.1 * tolerance * scale;
  for (int s = 1; s <= max_sweeps; ++s) {
    for (Eigen::Index k = 0; k < nc; ++k) {
      const Matrix5d& A = diag[static_cast<std::size_t>(k)];
      const Vector5d old = out.P.segment<kUnknowns>(kUnknowns * k);
      const Vector5d q_local = w.segment<kUnknowns>(kUnknowns * k) - A * old;
      Vector5d P = old;
      SolveLocal(A, q_local, c.mu[k], c.mu_r[k], local_tol, &P);
      out.P.segment<kUnknowns>(kUnknowns * k) = P;
      AddColumns(c.W, k, P - old, &w);
    }
    out.sweeps = s;
    if (s % kResidualEvery == 0 || s == max_sweeps || s == 1) {
      w = c.W * out.P + c.b;  // refreshed: no drift from the incremental updates
      out.residual = RollingFrictionResidual(out.P, w, c.mu, c.mu_r, scale);
      if (out.residual <= tolerance) {
        out.converged = true;
        return out;
      }
    }
  }
  return out;
}

// The existing chain (header): Siconos' dense rolling solver from `start`, three attempts.
ComponentAnswer DenseFallback(const Component& c, const VectorXd& start, double tolerance) {
  const double scale = std::max(1.0, c.b.lpNorm<Eigen::Infinity>());
  const Eigen::MatrixXd W(c.W);
  ComponentAnswer out;
  out.P = start;
  out.residual = RollingFrictionResidual(start, W * start + c.b, c.mu, c.mu_r, scale);
  RollingFc3dOptions ro;
  ro.tolerance = tolerance;
  VectorXd r = start;
  for (int attempt = 0; attempt < 3 && out.residual > tolerance; ++attempt) {
    const Fc3dResult fr = SolveRollingFrictionContact3d(W, c.b, c.mu, c.mu_r, ro, &r);
    if (!fr.r.allFinite()) break;
    r = fr.r;
    const double residual = RollingFrictionResidual(r, W * r + c.b, c.mu, c.mu_r, scale);
    if (residual < out.residual) {
      out.P = r;
      out.residual = residual;
    }
    ro.tolerance *= 1e-2;
  }
  out.converged = out.residual <= tolerance;
  return out;
}

// The contacts of every component of the body–contact graph, ascending.
std::vector<std::vector<int>> ContactsByComponent(const SparseAssembled& a, const Layout& layout) {
  std::vector<std::vector<int>> by(static_cast<std::size_t>(a.num_components));
  for (std::size_t i = 0; i < layout.first.size(); ++i) {
    by[static_cast<std::size_t>(a.component_of_row[static_cast<std::size_t>(layout.first[i])])]
        .push_back(static_cast<int>(i));
  }
  std::erase_if(by, [](const std::vector<int>& c) { return c.empty(); });
  return by;
}

// Per-contact impulses, rates and mode from the unknowns (5 per contact) and the rates.
FrictionalContactResult ContactOf(const Vector5d& P, const Vector5d& u, double mu, double tol) {
  FrictionalContactResult out;
  out.normal = P[0];
  out.tangential = P.segment<2>(1);
  out.rolling = P.segment<2>(3);
  out.normal_rate = u[0];
  out.tangential_rate = u.segment<2>(1);
  out.rolling_rate = u.segment<2>(3);
  if (out.normal <= 0.0 && out.normal_rate > tol) {
    out.mode = ContactMode::kOpen;
  } else if (mu == 0.0) {
    out.mode = ContactMode::kClosed;
  } else if (out.tangential_rate.norm() <= tol) {
    out.mode = ContactMode::kStick;
  } else {
    out.mode = ContactMode::kSlip;
    out.slip_direction = out.tangential_rate.normalized();
  }
  return out;
}

}  // namespace

std::optional<FrictionalImpactResult> SolveRollingFrictionVelocityStepSparse(
    const engine::MechanicalSystem& system, double t, const VectorXd& q, const VectorXd& v,
    const VectorXd& f, std::span<const int> normal_rows, std::span<const double> restitution,
    const FrictionOptions& options, const RollingStepOptions& rolling, RollingStepStats* stats) {
  Validate(system, t, q, v, f, normal_rows, restitution, options, rolling);
  const std::optional<Layout> layout = Collect(system, normal_rows);
  if (!layout) return std::nullopt;
  const SparseAssembled a = AssembleSparse(system, t, q, layout->rows, true);
  if (!a.available) return std::nullopt;
  FrictionalImpactResult r;
  r.v_plus = v;
  if (!a.error.empty()) {
    r.message = a.error;
    return r;
  }
  StepRates rates;
  r.message = ComputeStepRates(system, a, t, q, layout->rows, v, f, &rates);
  if (!r.message.empty()) return r;
  const VectorXd& gt = rates.gt;
  const VectorXd& v_free = rates.v_free;
  const VectorXd& u_minus = rates.u_minus;
  const VectorXd& u_free = rates.u_free;
  VectorXd b = u_free;
  for (std::size_t i = 0; i < layout->first.size(); ++i) {
    const int n = layout->first[i];
    b[n] += restitution[i] * u_minus[n];
    if (!rolling.gap_rate.empty()) b[n] += rolling.gap_rate[i];
  }
  VectorXd z = VectorXd::Zero(b.size());
  r.ok = true;
  for (std::vector<int>& contacts : ContactsByComponent(a, *layout)) {
    const bool pushed = std::any_of(contacts.begin(), contacts.end(), [&](int i) {
      return b[layout->first[static_cast<std::size_t>(i)]] < 0.0;
    });
    if (!pushed) continue;
    const Component c = Build(a, *layout, std::move(contacts), b);
    VectorXd P0 = VectorXd::Zero(c.b.size());
    if (rolling.warm_start != nullptr) {
      for (std::size_t k = 0; k < c.contacts.size(); ++k) {
        P0.segment<kUnknowns>(kUnknowns * static_cast<Eigen::Index>(k)) =
            rolling.warm_start->segment<kUnknowns>(kUnknowns *
                                                   static_cast<Eigen::Index>(c.contacts[k]));
      }
    }
    ComponentAnswer s = GaussSeidel(c, P0, options.tolerance, rolling.max_sweeps);
    if (stats != nullptr) stats->sweeps += s.sweeps;
    long* outcome = nullptr;
    RollingStepStats unused;
    RollingStepStats& st = stats != nullptr ? *stats : unused;
    if (s.converged) {
      outcome = &st.gauss_seidel;
    } else {
      ComponentAnswer d = DenseFallback(c, s.P, options.tolerance);
      if (d.residual < s.residual) s = std::move(d);
      if (s.residual <= options.tolerance) {
        outcome = &st.fallback;
      } else if (s.residual <= rolling.accepted_residual) {
        outcome = &st.accepted;
        st.largest_accepted_residual = std::max(st.largest_accepted_residual, s.residual);
      } else {
        outcome = &st.failed;
        if (r.ok) {
          r.message = RowLabel(system, normal_rows[static_cast<std::size_t>(c.contacts[0])]) +
                      " and " + std::to_string(c.contacts.size() - 1) +
                      " more contacts: no impulses satisfying Coulomb's law with rolling "
                      "resistance within the tolerance (residual " +
                      std::to_string(s.residual) + ")";
        }
        r.ok = false;
      }
    }
    ++*outcome;
    for (std::size_t e = 0; e < c.idx.size(); ++e) {
      z[c.idx[e]] = s.P[c.at[e]];
    }
    ++r.components;
    r.residual = std::max(r.residual, s.residual);
  }
  r.v_plus = v_free;
  AddMinvGtz(a, z, &r.v_plus);
  VectorXd u_plus;
  a.G.Multiply(r.v_plus, &u_plus);
  u_plus += gt;
  const double tol = 10.0 * options.tolerance * std::max(1.0, b.lpNorm<Eigen::Infinity>());
  for (std::size_t i = 0; i < layout->first.size(); ++i) {
    Vector5d P = Vector5d::Zero(), u = Vector5d::Zero();
    const std::size_t end = i + 1 < layout->first.size()
                                ? static_cast<std::size_t>(layout->first[i + 1])
                                : layout->rows.size();
    for (auto e = static_cast<std::size_t>(layout->first[i]); e < end; ++e) {
      P[layout->slot[e] % kUnknowns] = z[static_cast<Eigen::Index>(e)];
      u[layout->slot[e] % kUnknowns] = u_plus[static_cast<Eigen::Index>(e)];
    }
    r.contacts.push_back(ContactOf(P, u, layout->mu[static_cast<Eigen::Index>(i)], tol));
  }
  r.diagnosis.status = r.ok ? Solvability::kSolved : Solvability::kNoSolutionFound;
  // Energy against the free velocity (rolling_friction_step.h): ΔT and W_c = ½ Pᵀ (u⁺ + u_free).
  const double T_free = 0.5 * v_free.dot(MTimes(a, v_free));
  r.kinetic_energy_change = 0.5 * (r.v_plus - v_free).dot(MTimes(a, r.v_plus + v_free));
  r.contact_work = 0.5 * z.dot(u_plus + u_free);
  r.energy_gain = r.contact_work > 1e-8 * T_free;
  return r;
}

}  // namespace saltus::contact
