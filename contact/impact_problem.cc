#include "contact/impact_problem.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/delassus.h"
#include "contact/lcp_capture.h"
#include "contact/sparse_assembly.h"
#include "engine/block_sparse.h"

namespace saltus::contact {
namespace {

// Where a problem comes from, for the opt-in capture (contact/lcp_capture.h).
struct Origin {
  const char* kind;  // "impact" or "acceleration"
  double t;
  std::span<const int> rows;  // unilateral rows, the unknowns of the LCP
};

// Writes the LCP (W, b) just solved into the capture folder when the environment asks for it;
// `fill_W` builds W only then.
void MaybeCapture(const Origin& origin, const LcpResult& lcp, const Eigen::VectorXd& b,
                  const std::function<void(Eigen::SparseMatrix<double>*)>& fill_W) {
  if (!LcpCaptureWanted(lcp)) return;
  CaptureLcp([&](CapturedLcp* p) {
    p->kind = origin.kind;
    p->t = origin.t;
    p->note = lcp.ok ? lcp.message : "failed: " + lcp.message;
    p->rows.assign(origin.rows.begin(), origin.rows.end());
    p->b = b;
    fill_W(&p->W);
  });
}

// The reduced problem shared by the impact and the acceleration problems, written in the
// Cholesky-scaled unknown y = Lᵀ x (x = v⁺ or v̇):
//
//   y = y0 + A_B z_B + A_U z_U,   A_Bᵀ y + c_B = 0,   0 ≤ A_Uᵀ y + d_U + e ⊙ u_U ⊥ z_U ≥ 0,
//
// with A = L⁻¹ Gᵀ. See impact_problem.h for the elimination of the bilateral rows. For the
// impact, `restitution` is e and u_U = A_Uᵀ y_free + d_U is the approach velocity at the
// pre-impact velocity with the bilateral drift removed (impact_problem.h, "Energy");
// null for the acceleration problem (no e term).
struct Reduced {
  Eigen::VectorXd y, z_b, z_u;
  Eigen::VectorXd u_free;  // A_Uᵀ y_free + d_U
  int rank = 0;
  double bilateral_residual = 0;
  LcpResult lcp;
};

Reduced SolveReduced(const Eigen::MatrixXd& A_b, const Eigen::MatrixXd& A_u,
                     const Eigen::VectorXd& y0, const Eigen::VectorXd& c_b,
                     const Eigen::VectorXd& d_u, const Eigen::VectorXd* restitution,
                     const LcpOptions& options, const Origin& origin) {
  Reduced out;
  const BilateralElimination elimination(A_b, A_u, y0, c_b);
  out.rank = elimination.rank();
  out.u_free = elimination.Rhs(d_u);
  Eigen::VectorXd b = out.u_free;
  if (restitution != nullptr) b += restitution->cwiseProduct(out.u_free);
  out.lcp = SolveLcpByComponents(elimination.W(), b, options);
  MaybeCapture(origin, out.lcp, b,
               [&](Eigen::SparseMatrix<double>* W) { *W = elimination.W().sparseView(); });
  out.z_u = out.lcp.z;
  elimination.Recover(out.z_u, &out.y, &out.z_b, &out.bilateral_residual);
  return out;
}

// The LCP on W = G M⁻¹ Gᵀ, one component at a time (never formed as m × m; only for the
// opt-in capture).
LcpResult SolveSparse(const SparseAssembled& a, const Eigen::VectorXd& b, const LcpOptions& options,
                      const Origin& origin) {
  LcpResult lcp = SolveLcpByComponents(
      a.component_of_row, a.num_components,
      [&a](int, const std::vector<int>& idx, Eigen::MatrixXd* W_c) { a.Block(idx, W_c); },
      [&a](int, const std::vector<int>& idx, Eigen::SparseMatrix<double>* W_c) {
        a.SparseBlock(idx, W_c);
      },
      b, options);
  MaybeCapture(origin, lcp, b, [&](Eigen::SparseMatrix<double>* W) {
    std::vector<int> all(static_cast<std::size_t>(b.size()));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    W->resize(b.size(), b.size());
    a.SparseBlock(all, W);
  });
  return lcp;
}

// What a failed solve means for the contacts named before it; the solver's own account follows
// in brackets (kept in summary.json, left out of `saltus run`'s terminal message).
constexpr const char* kNoImpulses =
    ": no impulses satisfying Newton's impact law at these contacts were found within the "
    "tolerance [solver: ";
constexpr const char* kNoForces =
    ": no contact forces that keep these contacts closed (pushing) or let them separate were "
    "found within the tolerance [solver: ";

// The contacts of a problem as a user named them in the scene, for the messages of a failed
// solve (statuses: they reach users through `saltus run`, so they name no function).
std::string ContactNames(const engine::MechanicalSystem& system, std::span<const int> rows) {
  constexpr std::size_t kShown = 4;
  std::string names = rows.size() == 1 ? "contact " : "contacts ";
  for (std::size_t k = 0; k < rows.size() && k < kShown; ++k) {
    names += (k > 0 ? ", '" : "'") + system.constraint_info(rows[k]).name + "'";
  }
  if (rows.size() > kShown) names += " and " + std::to_string(rows.size() - kShown) + " more";
  return names;
}

bool UseSparse(const engine::MechanicalSystem& system, std::span<const int> bilateral_rows) {
  return bilateral_rows.empty() && system.nv() >= engine::kSparseMinimumNv;
}

// One unilateral row and no bilateral row (a single bouncing body, the usual impact): the
// Delassus "matrix" is the number W = G M⁻¹ Gᵀ = ‖a‖², a = L⁻¹ Gᵀ the one column of A_U, and
// the LCP 0 ≤ W z + b ⊥ z ≥ 0 has the closed form z = max(0, −b/W) (W > 0). For the impact
// (f null) b = (1 + e) u⁻ with u⁻ = aᵀ y0 + ∂g/∂t (eq. 4 with one row): P = max(0, −(1 + e) u⁻/W)
// and u⁺ = −e u⁻ when P > 0. For a velocity step b = aᵀ (y0 + L⁻¹ f) + ∂g/∂t + e u⁻ + s (s the
// step's gap rate, SolveVelocityStep). This is what SolveReduced computes for n_B = 0, n_U = 1
// (C = A_U, y_free = y0, one component), without the elimination object, the component search
// and the solver dispatch; the result carries the same fields and the same residual test
// (SolveLcp's natural-map residual against options.tolerance). Returns false (result untouched)
// when W is not positive or the residual fails: the caller then takes the general path, which
// reports or falls back.
bool SolveOneRow(const DenseAssembly& a, const Eigen::VectorXd& v, const Eigen::VectorXd* f,
                 double gt_u, double e, double s, const LcpOptions& options,
                 const Eigen::VectorXd& y0, Eigen::VectorXd* y_work, ImpactResult* result) {
  const auto col = a.A_u.col(0);
  const double W = col.squaredNorm();
  if (!(W > 0.0) || !std::isfinite(W)) return false;
  Eigen::VectorXd& y = *y_work;
  y = y0;
  double u_minus = 0.0, b = 0.0;
  if (f == nullptr) {
    u_minus = col.dot(y) + gt_u;
    b = u_minus + e * u_minus;
  } else {
    u_minus = a.G_u.row(0).dot(v) + gt_u;
    y += a.llt.matrixL().solve(*f);  // + L⁻¹ f = Lᵀ M⁻¹ f
    b = col.dot(y) + (gt_u + e * u_minus + s);
  }
  const double z = b < 0.0 ? -b / W : 0.0;
  const double w = W * z + b;
  const double scale = std::max(1.0, std::abs(b));
  LcpResult& lcp = result->lcp;
  lcp.residual = std::abs(std::min(w, z)) / scale;
  if (!(lcp.residual <= options.tolerance)) return false;
  lcp.ok = true;
  lcp.z.setConstant(1, z);
  lcp.w.setConstant(1, w);
  lcp.components = 1;
  lcp.components_solved = b < 0.0 ? 1 : 0;
  lcp.largest_component = lcp.components_solved;
  result->largest_lcp = lcp.largest_component;
  result->u_minus_u.setConstant(1, u_minus);
  result->impulse_u.setConstant(1, z);
  y += z * col;                     // y = y_free + A_U z
  a.llt.matrixU().solveInPlace(y);  // L⁻ᵀ y
  result->v_plus = y;
  result->u_plus_u.setConstant(1, a.G_u.row(0).dot(result->v_plus) + gt_u);
  result->ok = true;
  return true;
}

// SolveImpact and SolveVelocityStep: v⁺ = v + M⁻¹ (f + Gᵀ P) with u⁻ = G v + ∂g/∂t and
// 0 ≤ G v⁺ + ∂g/∂t + e u⁻ ⊥ P_U ≥ 0 (f null: no free impulse).
// The result is written to ws.result (every field set); ws.assembly keeps the factor of a
// constant M when keep_mass (ImpactWorkspace).
void SolveVelocityLevel(const char* who, const engine::MechanicalSystem& system, double t,
                        const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                        const Eigen::VectorXd* f, std::span<const int> bilateral_rows,
                        std::span<const int> unilateral_rows, std::span<const double> restitution,
                        const LcpOptions& options, const char* kind, ImpactWorkspace& ws,
                        bool keep_mass, std::span<const double> gap_rate = {}) {
  const auto w = [who] { return std::string(who); };  // (messages built on failure only)
  ValidateState(who, system, t, q, v, f ? "v" : "v_minus");
  ValidateRows(who, system, bilateral_rows, unilateral_rows);
  if (f != nullptr && (f->size() != system.nv() || !f->allFinite())) {
    throw std::invalid_argument(w() + ": the free impulse must have nv = " +
                                std::to_string(system.nv()) + " finite entries");
  }
  if (restitution.size() != unilateral_rows.size()) {
    throw std::invalid_argument(w() + ": " + std::to_string(restitution.size()) +
                                " restitution coefficients for " +
                                std::to_string(unilateral_rows.size()) + " unilateral rows");
  }
  for (std::size_t i = 0; i < restitution.size(); ++i) {
    if (!(restitution[i] >= 0.0 && restitution[i] <= 1.0)) {
      throw std::invalid_argument(w() + ": " + RowLabel(system, unilateral_rows[i]) +
                                  ": restitution must be in [0, 1], got " +
                                  std::to_string(restitution[i]));
    }
  }
  if (!gap_rate.empty() && gap_rate.size() != unilateral_rows.size()) {
    throw std::invalid_argument(w() + ": " + std::to_string(gap_rate.size()) + " gap rates for " +
                                std::to_string(unilateral_rows.size()) + " unilateral rows");
  }
  for (std::size_t i = 0; i < gap_rate.size(); ++i) {
    if (!std::isfinite(gap_rate[i])) {
      throw std::invalid_argument(w() + ": " + RowLabel(system, unilateral_rows[i]) +
                                  ": the gap rate must be finite, got " +
                                  std::to_string(gap_rate[i]));
    }
  }
  const auto n_b = static_cast<Eigen::Index>(bilateral_rows.size());
  const auto n_u = static_cast<Eigen::Index>(unilateral_rows.size());
  const Eigen::Map<const Eigen::VectorXd> e(restitution.data(), n_u);
  // s of the step's law (SolveVelocityStep), zero when not given (a map of zeros then: no
  // allocation on the impact path).
  static constexpr double kNoGapRate = 0.0;
  const Eigen::Map<const Eigen::VectorXd, 0, Eigen::InnerStride<>> s(
      gap_rate.empty() ? &kNoGapRate : gap_rate.data(), n_u,
      Eigen::InnerStride<>(gap_rate.empty() ? 0 : 1));
  const Origin origin{kind, t, unilateral_rows};

  ImpactResult& result = ws.result;
  result.ok = false;
  result.v_plus = v;
  result.impulse_b.setZero(n_b);
  result.impulse_u.setZero(n_u);
  result.bilateral_rank = 0;
  result.bilateral_residual = 0;
  result.largest_lcp = 0;
  result.message.clear();
  const auto nothing_solved = [&result](const std::string& why) {
    result.message = why;
    result.u_minus_u.resize(0);
    result.u_plus_u.resize(0);
    result.lcp.z.resize(0);
    result.lcp.w.resize(0);
  };
  // The vectors below keep their storage (and a reused workspace's sizes) until a path sets
  // them; a failure before any solve empties them (`nothing_solved`).
  LcpResult& lcp = result.lcp;
  lcp.ok = false;
  lcp.residual = 0;
  lcp.iterations = 0;
  lcp.message.clear();
  lcp.components = lcp.components_solved = lcp.largest_component = 0;
  lcp.components_sparse = lcp.failed_stages = 0;

  if (UseSparse(system, bilateral_rows)) {
    SparseAssembled sa = AssembleSparse(system, t, q, unilateral_rows, f != nullptr);
    if (sa.available) {
      if (!sa.error.empty()) {
        nothing_solved(sa.error);
        return;
      }
      Eigen::VectorXd gt_u;
      system.ConstraintTimeDerivative(t, q, unilateral_rows, &gt_u);
      if (!gt_u.allFinite()) {
        nothing_solved("a constraint's time derivative has a non-finite entry");
        return;
      }
      sa.G.Multiply(v, &result.u_minus_u);
      result.u_minus_u += gt_u;
      if (f != nullptr) result.v_plus += MinvTimes(sa, *f);  // the free velocity
      // b = G v_free + ∂g/∂t + e u⁻ + s (the reduced problem below with no bilateral rows).
      Eigen::VectorXd b;
      sa.G.Multiply(result.v_plus, &b);
      b += gt_u + e.cwiseProduct(result.u_minus_u) + s;
      result.lcp = SolveSparse(sa, b, options, origin);
      result.largest_lcp = result.lcp.largest_component;
      result.impulse_u = result.lcp.z;
      if (result.impulse_u.size() == n_u) AddMinvGtz(sa, result.impulse_u, &result.v_plus);
      sa.G.Multiply(result.v_plus, &result.u_plus_u);
      result.u_plus_u += gt_u;
      if (!result.lcp.ok) {
        result.message =
            ContactNames(system, unilateral_rows) + kNoImpulses + result.lcp.message + "]";
        return;
      }
      result.ok = true;
      return;
    }
  }
  DenseAssembly& a = ws.assembly;
  AssembleDenseInto(system, t, q, bilateral_rows, unilateral_rows, keep_mass, &a);
  if (!a.error.empty()) {
    nothing_solved(a.error);
    return;
  }
  Eigen::VectorXd& gt_b = ws.gt_b;
  Eigen::VectorXd& gt_u = ws.gt_u;
  system.ConstraintTimeDerivative(t, q, bilateral_rows, &gt_b);
  system.ConstraintTimeDerivative(t, q, unilateral_rows, &gt_u);
  if (!gt_b.allFinite() || !gt_u.allFinite()) {
    nothing_solved("a constraint's time derivative has a non-finite entry");
    return;
  }
  Eigen::VectorXd& y0 = ws.y0;
  y0.noalias() = a.llt.matrixU() * v;  // Lᵀ v
  if (n_b == 0 && n_u == 1 &&
      SolveOneRow(a, v, f, gt_u[0], e[0], s[0], options, y0, &ws.y, &result)) {
    return;
  }
  Reduced r;
  if (f == nullptr) {
    // The impact: Newton's law on the approach velocity without the joints' drift (the e term
    // of SolveReduced), so that the joints do no work (impact_problem.h, "Energy").
    const Eigen::VectorXd e_u = e;
    r = SolveReduced(a.A_b, a.A_u, y0, gt_b, gt_u, &e_u, options, origin);
    result.u_minus_u = r.u_free;
  } else {
    // A velocity step: the free velocity v + M⁻¹ f, the restitution term from u at v.
    result.u_minus_u = a.G_u * v + gt_u;
    y0 += a.llt.matrixL().solve(*f);  // + L⁻¹ f = Lᵀ M⁻¹ f
    const Eigen::VectorXd d_u = gt_u + e.cwiseProduct(result.u_minus_u) + s;
    r = SolveReduced(a.A_b, a.A_u, y0, gt_b, d_u, nullptr, options, origin);
  }
  result.lcp = r.lcp;
  result.largest_lcp = r.lcp.largest_component;
  result.bilateral_rank = r.rank;
  result.impulse_u = r.z_u;
  result.impulse_b = r.z_b;
  result.v_plus = a.llt.matrixU().solve(r.y);  // L⁻ᵀ y
  result.u_plus_u = a.G_u * result.v_plus + gt_u;
  result.bilateral_residual =
      n_b > 0 ? (a.G_b * result.v_plus + gt_b).lpNorm<Eigen::Infinity>() : 0.0;
  if (!r.lcp.ok) {
    result.message = ContactNames(system, unilateral_rows) + kNoImpulses + r.lcp.message + "]";
    return;
  }
  result.ok = true;
}

}  // namespace

ImpactResult SolveImpact(const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                         const Eigen::VectorXd& v_minus, std::span<const int> bilateral_rows,
                         std::span<const int> unilateral_rows, std::span<const double> restitution,
                         const LcpOptions& options) {
  ImpactWorkspace ws;
  SolveVelocityLevel("SolveImpact", system, t, q, v_minus, nullptr, bilateral_rows, unilateral_rows,
                     restitution, options, "impact", ws, false);
  return std::move(ws.result);
}

const ImpactResult& SolveImpact(const engine::MechanicalSystem& system, double t,
                                const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
                                std::span<const int> bilateral_rows,
                                std::span<const int> unilateral_rows,
                                std::span<const double> restitution, const LcpOptions& options,
                                ImpactWorkspace* workspace) {
  if (workspace == nullptr) throw std::invalid_argument("SolveImpact: null workspace");
  if (workspace->system == nullptr) workspace->system = &system;
  if (workspace->system != &system) {
    throw std::invalid_argument("SolveImpact: the workspace belongs to another system");
  }
  SolveVelocityLevel("SolveImpact", system, t, q, v_minus, nullptr, bilateral_rows, unilateral_rows,
                     restitution, options, "impact", *workspace, true);
  return workspace->result;
}

ImpactResult SolveVelocityStep(const engine::MechanicalSystem& system, double t,
                               const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                               const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
                               std::span<const int> unilateral_rows,
                               std::span<const double> restitution, const LcpOptions& options,
                               std::span<const double> gap_rate) {
  ImpactWorkspace ws;
  SolveVelocityLevel("SolveVelocityStep", system, t, q, v, &f, bilateral_rows, unilateral_rows,
                     restitution, options, "step", ws, false, gap_rate);
  return std::move(ws.result);
}

ContactAccelerationResult SolveContactAccelerations(const engine::MechanicalSystem& system,
                                                    double t, const Eigen::VectorXd& q,
                                                    const Eigen::VectorXd& v,
                                                    std::span<const int> bilateral_rows,
                                                    std::span<const int> unilateral_rows,
                                                    const LcpOptions& options) {
  ValidateState("SolveContactAccelerations", system, t, q, v, "v");
  ValidateRows("SolveContactAccelerations", system, bilateral_rows, unilateral_rows);
  const auto n_b = static_cast<Eigen::Index>(bilateral_rows.size());
  const auto n_u = static_cast<Eigen::Index>(unilateral_rows.size());

  ContactAccelerationResult result;
  result.vdot = Eigen::VectorXd::Zero(system.nv());
  result.lambda_b = Eigen::VectorXd::Zero(n_b);
  result.lambda_u = Eigen::VectorXd::Zero(n_u);
  result.accel_u = Eigen::VectorXd::Zero(n_u);

  if (UseSparse(system, bilateral_rows)) {
    SparseAssembled s = AssembleSparse(system, t, q, unilateral_rows, true);
    if (s.available) {
      if (!s.error.empty()) {
        result.message = s.error;
        return result;
      }
      Eigen::VectorXd F, gamma_u;
      system.Forces(t, q, v, &F);
      system.ConstraintGamma(t, q, v, unilateral_rows, &gamma_u);
      if (F.size() != system.nv() || !F.allFinite()) {
        result.message = "the applied forces have a non-finite entry";
        return result;
      }
      if (!gamma_u.allFinite()) {
        result.message = "a constraint's acceleration term (gamma) has a non-finite entry";
        return result;
      }
      // v̇ = M⁻¹ (F + Gᵀ λ), 0 ≤ G v̇ + γ ⊥ λ ≥ 0: LCP on W with b = G M⁻¹ F + γ.
      const Eigen::VectorXd a0 = MinvTimes(s, F);
      Eigen::VectorXd b;
      s.G.Multiply(a0, &b);
      b += gamma_u;
      result.lcp = SolveSparse(s, b, options, Origin{"acceleration", t, unilateral_rows});
      result.largest_lcp = result.lcp.largest_component;
      result.lambda_u = result.lcp.z;
      result.vdot = a0;
      if (result.lambda_u.size() == n_u) AddMinvGtz(s, result.lambda_u, &result.vdot);
      s.G.Multiply(result.vdot, &result.accel_u);
      result.accel_u += gamma_u;
      if (!result.lcp.ok) {
        result.message =
            ContactNames(system, unilateral_rows) + kNoForces + result.lcp.message + "]";
        return result;
      }
      result.ok = true;
      return result;
    }
  }
  DenseAssembly a = AssembleDense(system, t, q, bilateral_rows, unilateral_rows);
  if (!a.error.empty()) {
    result.message = a.error;
    return result;
  }
  Eigen::VectorXd F, gamma_b, gamma_u;
  system.Forces(t, q, v, &F);
  system.ConstraintGamma(t, q, v, bilateral_rows, &gamma_b);
  system.ConstraintGamma(t, q, v, unilateral_rows, &gamma_u);
  if (F.size() != system.nv() || !F.allFinite()) {
    result.message = "the applied forces have a non-finite entry";
    return result;
  }
  if (!gamma_b.allFinite() || !gamma_u.allFinite()) {
    result.message = "a constraint's acceleration term (gamma) has a non-finite entry";
    return result;
  }
  const Eigen::VectorXd y0 = a.llt.matrixL().solve(F);  // L⁻¹ F = Lᵀ M⁻¹ F

  Reduced r = SolveReduced(a.A_b, a.A_u, y0, gamma_b, gamma_u, nullptr, options,
                           Origin{"acceleration", t, unilateral_rows});
  result.lcp = r.lcp;
  result.largest_lcp = r.lcp.largest_component;
  result.bilateral_rank = r.rank;
  result.lambda_u = r.z_u;
  result.lambda_b = r.z_b;
  result.vdot = a.llt.matrixU().solve(r.y);
  result.accel_u = a.G_u * result.vdot + gamma_u;
  result.bilateral_residual =
      n_b > 0 ? (a.G_b * result.vdot + gamma_b).lpNorm<Eigen::Infinity>() : 0.0;
  if (!r.lcp.ok) {
    result.message = ContactNames(system, unilateral_rows) + kNoForces + r.lcp.message + "]";
    return result;
  }
  result.ok = true;
  return result;
}

}  // namespace saltus::contact
