#include "contact/rolling_friction_step.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/complementarity.h"
#include "contact/delassus.h"

namespace saltus::contact {
namespace {

constexpr int kUnknowns = 5;  // per contact: normal, tangent 1, 2, rolling 1, 2

// x projected onto the disk of radius `radius` ≥ 0.
Eigen::Vector2d ProjectOntoDisk(const Eigen::Vector2d& x, double radius) {
  const double norm = x.norm();
  return norm <= radius ? x : Eigen::Vector2d(x * (radius / norm));
}

void ValidateInputs(const char* who, const engine::MechanicalSystem& system, double t,
                    const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& f,
                    std::span<const int> bilateral_rows, std::span<const int> normal_rows,
                    std::span<const double> restitution, const FrictionOptions& options) {
  const std::string w(who);
  ValidateState(who, system, t, q, v, "v");
  if (f.size() != system.nv() || !f.allFinite()) {
    throw std::invalid_argument(w + ": f must have nv = " + std::to_string(system.nv()) +
                                " finite entries");
  }
  if (restitution.size() != normal_rows.size()) {
    throw std::invalid_argument(w + ": " + std::to_string(restitution.size()) +
                                " restitution coefficients for " +
                                std::to_string(normal_rows.size()) + " contacts");
  }
  for (double e : restitution) {
    if (!(e >= 0.0 && e <= 1.0)) {
      throw std::invalid_argument(w + ": restitution must be in [0, 1], got " + std::to_string(e));
    }
  }
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance) ||
      options.max_iterations <= 0) {
    throw std::invalid_argument(w + ": tolerance must be finite and > 0, max_iterations > 0");
  }
  ValidateRows(who, system, bilateral_rows, normal_rows);
}

// Mode of a contact from its impulses and post-step rates (threshold `tol` on the rates).
ContactMode ModeOf(const FrictionalContactResult& c, double mu, double tol) {
  if (c.normal <= 0.0 && c.normal_rate > tol) return ContactMode::kOpen;
  if (mu == 0.0) return ContactMode::kClosed;
  return c.tangential_rate.norm() <= tol ? ContactMode::kStick : ContactMode::kSlip;
}

}  // namespace

RollingLayout CollectRollingRows(const char* who, const engine::MechanicalSystem& system,
                                 std::span<const int> normal_rows) {
  RollingLayout out;
  const auto nc = static_cast<Eigen::Index>(normal_rows.size());
  out.mu = Eigen::VectorXd::Zero(nc);
  out.mu_r = Eigen::VectorXd::Zero(nc);
  for (Eigen::Index a = 0; a < nc; ++a) {
    const int n = normal_rows[static_cast<std::size_t>(a)];
    const engine::ConstraintRowInfo& info = system.constraint_info(n);
    const std::string label = RowLabel(system, n);
    if (info.kind != engine::ConstraintKind::kUnilateral) {
      throw std::invalid_argument(std::string(who) + ": " + label + " is not a unilateral row");
    }
    if (!system.SpinningRows(n).empty()) {
      throw std::invalid_argument(
          std::string(who) + ": " + label +
          " has spinning resistance, which Siconos' rolling friction problem (5 unknowns per "
          "contact) does not have");
    }
    const auto add = [&](int row, int k) {
      out.rows.push_back(row);
      out.slot.push_back(kUnknowns * static_cast<int>(a) + k);
    };
    add(n, 0);
    const std::span<const int> tangents = system.TangentRows(n);
    const std::span<const int> rolling = system.RollingRows(n);
    if (tangents.size() == 2) {
      add(tangents[0], 1);
      add(tangents[1], 2);
      out.mu[a] = info.friction;
    }
    if (rolling.size() == 2) {
      add(rolling[0], 3);
      add(rolling[1], 4);
      out.mu_r[a] = info.rolling_friction;
    }
  }
  return out;
}

double RollingFrictionResidual(const Eigen::VectorXd& r, const Eigen::VectorXd& w,
                               const Eigen::VectorXd& mu, const Eigen::VectorXd& mu_r,
                               double scale) {
  double worst = 0.0;
  for (Eigen::Index a = 0; a < mu.size(); ++a) {
    const Eigen::Index k = kUnknowns * a;
    const double p_n = r[k];
    const double radius_t = mu[a] * std::max(p_n, 0.0), radius_r = mu_r[a] * std::max(p_n, 0.0);
    const Eigen::Vector2d p_t = r.segment<2>(k + 1), p_r = r.segment<2>(k + 3);
    const Eigen::Vector2d e_t = p_t - ProjectOntoDisk(p_t - w.segment<2>(k + 1), radius_t);
    const Eigen::Vector2d e_r = p_r - ProjectOntoDisk(p_r - w.segment<2>(k + 3), radius_r);
    const double e_n = std::min(p_n, w[k]);
    worst = std::max(worst, std::sqrt(e_n * e_n + e_t.squaredNorm() + e_r.squaredNorm()));
  }
  return worst / scale;
}

FrictionalImpactResult SolveRollingFrictionVelocityStep(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
    std::span<const int> normal_rows, std::span<const double> restitution,
    const FrictionOptions& options, std::span<const double> gap_rate) {
  const char* who = "SolveRollingFrictionVelocityStep";
  ValidateInputs(who, system, t, q, v, f, bilateral_rows, normal_rows, restitution, options);
  if (!gap_rate.empty() &&
      (gap_rate.size() != normal_rows.size() ||
       !std::all_of(gap_rate.begin(), gap_rate.end(), [](double s) { return std::isfinite(s); }))) {
    throw std::invalid_argument(std::string(who) +
                                ": gap rates must be one finite value per contact");
  }
  const RollingLayout layout = CollectRollingRows(who, system, normal_rows);
  ValidateRows(who, system, bilateral_rows, layout.rows);
  FrictionalImpactResult r;
  r.v_plus = v;
  r.impulse_b = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(bilateral_rows.size()));
  const DenseAssembly a = AssembleDense(system, t, q, bilateral_rows, layout.rows);
  if (!a.error.empty()) {
    r.message = a.error;
    return r;
  }
  Eigen::VectorXd gt_b, gt_u;
  system.ConstraintTimeDerivative(t, q, bilateral_rows, &gt_b);
  system.ConstraintTimeDerivative(t, q, layout.rows, &gt_u);
  if (!gt_b.allFinite() || !gt_u.allFinite()) {
    r.message = "a constraint's time derivative has a non-finite entry";
    return r;
  }
  // Newton's law over the step on the normal rows: w_N = u_N⁺ + e u_N⁻.
  const Eigen::VectorXd u_minus = a.G_u * v + gt_u;
  Eigen::VectorXd d = gt_u;
  for (std::size_t i = 0; i < layout.rows.size(); ++i) {
    const int s = layout.slot[i];
    if (s % kUnknowns == 0) {
      const auto c = static_cast<std::size_t>(s / kUnknowns);
      d[static_cast<Eigen::Index>(i)] += restitution[c] * u_minus[static_cast<Eigen::Index>(i)] +
                                         (gap_rate.empty() ? 0.0 : gap_rate[c]);
    }
  }
  // Lᵀ (v + M⁻¹ f) = Lᵀ v + L⁻¹ f (M = L Lᵀ): the free velocity, scaled.
  const Eigen::VectorXd y0 = a.llt.matrixU() * v + a.llt.matrixL().solve(f);
  const BilateralElimination elimination(a.A_b, a.A_u, y0, gt_b);
  r.bilateral_rank = elimination.rank();
  const Eigen::MatrixXd& W = elimination.W();
  const Eigen::VectorXd b = elimination.Rhs(d);
  // The local problem on 5 unknowns per contact; inert unknowns get a unit-scaled diagonal.
  const auto n5 = kUnknowns * static_cast<Eigen::Index>(normal_rows.size());
  const auto m = static_cast<Eigen::Index>(layout.rows.size());
  Eigen::MatrixXd M5 = Eigen::MatrixXd::Zero(n5, n5);
  Eigen::VectorXd q5 = Eigen::VectorXd::Zero(n5);
  const double diag = m > 0 && W.diagonal().maxCoeff() > 0.0 ? W.diagonal().mean() : 1.0;
  M5.diagonal().setConstant(diag);
  for (Eigen::Index i = 0; i < m; ++i) {
    const int si = layout.slot[static_cast<std::size_t>(i)];
    q5[si] = b[i];
    for (Eigen::Index j = 0; j < m; ++j) M5(si, layout.slot[static_cast<std::size_t>(j)]) = W(i, j);
  }
  RollingFc3dOptions ro;
  ro.tolerance = options.tolerance;
  ro.max_iterations = std::max(options.max_iterations, 1000);
  const double scale = std::max(1.0, n5 > 0 ? q5.lpNorm<Eigen::Infinity>() : 0.0);
  Eigen::VectorXd r5 = Eigen::VectorXd::Zero(n5), w5 = q5;
  for (int attempt = 0; attempt < 3; ++attempt) {  // header, "Residual"
    const Fc3dResult fr = SolveRollingFrictionContact3d(M5, q5, layout.mu, layout.mu_r, ro, &r5);
    r5 = fr.r;
    w5 = M5 * r5 + q5;
    r.message += (r.message.empty() ? "" : "; ") + fr.message;
    if (!r5.allFinite()) break;
    r.residual = RollingFrictionResidual(r5, w5, layout.mu, layout.mu_r, scale);
    if (r.residual <= options.tolerance) break;
    ro.tolerance *= 1e-2;
  }
  r.ok = r5.allFinite() && r.residual <= options.tolerance;
  if (!r5.allFinite()) return r;
  Eigen::VectorXd z(m);
  for (Eigen::Index i = 0; i < m; ++i) z[i] = r5[layout.slot[static_cast<std::size_t>(i)]];
  Eigen::VectorXd y;
  elimination.Recover(z, &y, &r.impulse_b, &r.bilateral_residual);
  r.v_plus = a.llt.matrixU().solve(y);
  const Eigen::VectorXd u_plus = a.G_u * r.v_plus + gt_u;
  // Per contact: impulses and rates from the unknowns (inert ones are 0).
  Eigen::VectorXd rate5 = Eigen::VectorXd::Zero(n5);
  for (Eigen::Index i = 0; i < m; ++i) rate5[layout.slot[static_cast<std::size_t>(i)]] = u_plus[i];
  const double tol = 10.0 * options.tolerance * scale;
  r.contacts.resize(normal_rows.size());
  for (std::size_t c = 0; c < normal_rows.size(); ++c) {
    const Eigen::Index k = kUnknowns * static_cast<Eigen::Index>(c);
    FrictionalContactResult& out = r.contacts[c];
    out.normal = r5[k];
    out.tangential = r5.segment<2>(k + 1);
    out.rolling = r5.segment<2>(k + 3);
    out.normal_rate = rate5[k];
    out.tangential_rate = rate5.segment<2>(k + 1);
    out.rolling_rate = rate5.segment<2>(k + 3);
    out.mode = ModeOf(out, layout.mu[static_cast<Eigen::Index>(c)], tol);
    if (out.mode == ContactMode::kSlip) {
      out.slip_direction = out.tangential_rate.normalized();
    }
  }
  if (!r.ok) {
    r.message =
        "no impulses satisfying Coulomb's law with rolling resistance were found within "
        "the tolerance (residual " +
        std::to_string(r.residual) + ") [solver: " + r.message + "]";
  } else {
    r.message.clear();
  }
  // Energy against the free velocity (header): W_c = ½ zᵀ (u_free + u⁺).
  r.kinetic_energy_change = 0.5 * (y - y0).dot(y + y0);
  const Eigen::VectorXd u_free = a.G_u * a.llt.matrixU().solve(y0) + gt_u;
  r.contact_work = 0.5 * z.dot(u_free + u_plus);
  r.energy_gain = r.contact_work > 1e-8 * 0.5 * y0.squaredNorm();
  return r;
}

}  // namespace saltus::contact
