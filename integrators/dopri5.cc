#include "integrators/dopri5.h"

#include <vector>

namespace saltus::integrators {

namespace tab = dopri5_tableau;

namespace {

constexpr auto kAFlat = FlattenTableau(tab::kA);

const ExplicitRkTableau& Tableau() {
  static const ExplicitRkTableau tableau{tab::kStages, tab::kStages,       tab::kC, kAFlat,
                                         tab::kB,      {tab::kBHat},
                                         /*order=*/5,  tab::kEmbeddedOrder};
  return tableau;
}

}  // namespace

Dopri5::Dopri5(const IntegratorOptions& options)
    : ExplicitRungeKutta(options, "dopri5", Tableau()) {}

Dopri5::~Dopri5() = default;

void Dopri5::BuildDenseOutput(double h) {
  // Tangent increments for q (k = K) and values for v (k = A); see the header. One entry at a
  // time, each r in the order of the vector expressions r₁ = b₀k₀ + b₁k₁ + … (zero weights
  // included), r₁ ← h r₁, …: the same numbers without a pass per term for small nv.
  auto build = [&](const std::vector<Eigen::VectorXd>& k, std::array<Eigen::VectorXd, 4>& r) {
    const Eigen::Index n = k[0].size();
    for (Eigen::VectorXd& r_i : r) r_i.resize(n);
    for (Eigen::Index e = 0; e < n; ++e) {
      double r0 = tab::kB[0] * k[0][e], r3 = tab::kD[0] * k[0][e];
      for (std::size_t j = 1; j < tab::kStages; ++j) {
        r0 += tab::kB[j] * k[j][e];
        r3 += tab::kD[j] * k[j][e];
      }
      r0 *= h;
      r3 *= h;
      const double r1 = h * k[0][e] - r0;
      r[0][e] = r0;
      r[1][e] = r1;
      r[2][e] = r0 - h * k[tab::kStages - 1][e] - r1;
      r[3][e] = r3;
    }
  };
  build(K_, rq_);
  build(A_, rv_);
  h_dense_ = h;
}

void Dopri5::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  const double theta = (s - t_prev_) / h_dense_;
  const double theta1 = 1.0 - theta;
  // *v holds the tangent increment of q first, then the velocity.
  *v = theta * (rq_[0] + theta1 * (rq_[1] + theta * (rq_[2] + theta1 * rq_[3])));
  system_->IntegratePosition(q_prev_, *v, 1.0, q);
  *v = v_prev_ + theta * (rv_[0] + theta1 * (rv_[1] + theta * (rv_[2] + theta1 * rv_[3])));
}

}  // namespace saltus::integrators
