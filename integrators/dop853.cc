#include "integrators/dop853.h"

#include <cmath>
#include <span>
#include <vector>

namespace saltus::integrators {

namespace tab = dop853_tableau;

namespace {

constexpr auto kAFlat = FlattenTableau(tab::kA);

// b̂⁽⁵⁾ = b − (b − b̂⁽⁵⁾): the published table gives the difference (header).
constexpr std::array<double, tab::kStages> BHat5() {
  std::array<double, tab::kStages> b_hat{};
  for (int j = 0; j < tab::kStages; ++j) b_hat[j] = tab::kA[tab::kStages - 1][j] - tab::kE5[j];
  return b_hat;
}
constexpr auto kBHat5 = BHat5();

const ExplicitRkTableau& Tableau() {
  static const ExplicitRkTableau tableau{
      tab::kStages,
      tab::kDenseStages,
      tab::kC,
      kAFlat,
      std::span<const double>(tab::kA[tab::kStages - 1].data(), tab::kStages),
      {kBHat5, tab::kBHat3},
      /*order=*/8,
      tab::kEstimateOrder};
  return tableau;
}

}  // namespace

Dop853::Dop853(const IntegratorOptions& options)
    : ExplicitRungeKutta(options, "dop853", Tableau()) {}

Dop853::~Dop853() = default;

double Dop853::CombineErrors(std::span<const double> norms) const {
  const double r5 = norms[0] * norms[0];
  const double denominator = std::sqrt(r5 + 0.01 * norms[1] * norms[1]);
  return denominator > 0 ? r5 / denominator : 0.0;
}

void Dop853::BuildDenseOutput(double h) {
  // r₀, r₁, r₂ from the solution stages; r₃ … r₆ (which need the dense-output stages) zero until
  // CompleteDenseOutput.
  const std::array<double, tab::kDenseStages>& b = tab::kA[tab::kStages - 1];
  auto build = [&](const std::vector<Eigen::VectorXd>& k, std::array<Eigen::VectorXd, 7>& r) {
    r[0] = b[0] * k[0];
    for (int j = 1; j < tab::kStages; ++j) {
      if (b[j] != 0.0) r[0] += b[j] * k[j];
    }
    r[0] *= h;
    r[1] = h * k[0] - r[0];
    r[2] = r[0] - h * k[tab::kStages - 1] - r[1];
    for (int m = 3; m < 7; ++m) r[m].setZero(k[0].size());
  };
  build(K_, rq_);
  build(A_, rv_);
  h_dense_ = h;
}

void Dop853::CompleteDenseOutput() {
  // Stage 0 of the step: K_0 = V_0 = v_n, A_0 = v̇_n (the vectors K_[0], A_[0] already belong to
  // the next step).
  auto build = [&](const std::vector<Eigen::VectorXd>& k, const Eigen::VectorXd& k0,
                   std::array<Eigen::VectorXd, 7>& r) {
    for (int m = 0; m < 4; ++m) r[3 + m] = tab::kD[m][0] * k0;
    for (int j = 1; j < tab::kDenseStages; ++j) {
      for (int m = 0; m < 4; ++m) {
        if (tab::kD[m][j] != 0.0) r[3 + m] += tab::kD[m][j] * k[j];
      }
    }
    for (int m = 3; m < 7; ++m) r[m] *= h_dense_;
  };
  build(K_, v_prev_, rq_);
  build(A_, DenseStartAcceleration(), rv_);
}

void Dop853::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  if (InterpolateNearSingular(s, q, v)) return;
  // θ = 1 exactly at the step end ((t − t_prev)/h may be 1 − ulp when t = t_prev + h rounds).
  const double th = s == t_ ? 1.0 : (s - t_prev_) / h_dense_;
  const double th1 = 1.0 - th;
  // Inside the step the interpolant needs the dense-output stages; at θ = 0 and θ = 1 their
  // terms vanish (factors θ and θ₁), so the step's ends cost no solve (header).
  if (th > 0.0 && th < 1.0) EnsureDenseStages();
  // y(θ) − y_n of the header, from the innermost bracket out (coefficient-wise, so *out may
  // appear on both sides).
  const auto eval = [&](const std::array<Eigen::VectorXd, 7>& r, Eigen::VectorXd* out) {
    *out = r[5] + th * r[6];
    *out = r[4] + th1 * *out;
    *out = r[3] + th * *out;
    *out = r[2] + th1 * *out;
    *out = r[1] + th * *out;
    *out = r[0] + th1 * *out;
    *out *= th;
  };
  // *v holds the tangent increment of q first, then the velocity.
  eval(rq_, v);
  system_->IntegratePosition(q_prev_, *v, 1.0, q);
  eval(rv_, v);
  *v += v_prev_;
}

}  // namespace saltus::integrators
