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
  // Tangent increments for q (k = K) and values for v (k = A); see the header.
  auto build = [&](const std::vector<Eigen::VectorXd>& k, std::array<Eigen::VectorXd, 4>& r) {
    r[0] = tab::kB[0] * k[0];
    r[3] = tab::kD[0] * k[0];
    for (int j = 1; j < tab::kStages; ++j) {
      r[0] += tab::kB[j] * k[j];
      r[3] += tab::kD[j] * k[j];
    }
    r[0] *= h;
    r[3] *= h;
    r[1] = h * k[0] - r[0];
    r[2] = r[0] - h * k[tab::kStages - 1] - r[1];
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
