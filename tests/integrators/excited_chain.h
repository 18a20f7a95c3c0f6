// Chain of N mathematical pendulums with a harmonically excited suspension point (Arnold, Fuchs &
// Führer, "Efficient corrector iteration for DAE time integration in multibody dynamics",
// Sec. 4.2.1): the system of tests/integrators/bdf_test.cc and bench/bdf_jacobians.cc.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <span>

#include "engine/constraint_block.h"
#include "engine/mechanical_system.h"

namespace saltus::integrators::testing {

// N unit point masses in the plane joined by massless rods of length 1, the first hanging from
// the suspension point s(t) = (0, A sin Ωt); gravity (0, −9.81); Cartesian coordinates
// q = (p₁, …, p_N) (2N), M = I. Rows g_i = (|d_i|² − 1)/2 with d_i = p_i − p_{i−1}, p₀ = s(t)
// (the same system as tests/integrators/sparse_jacobian_test.cc, here as a MechanicalSystem).
inline constexpr double kChainGravity = 9.81;

// Excitation s(t) = (0, A sin Ωt) and initial rod angles φ_i = phi · sin(i + 1).
struct ChainParams {
  double A = 0.1, omega = 5.0, phi = 0.5;
};

inline Eigen::Vector2d Suspension(const ChainParams& c, double t) {
  return {0.0, c.A * std::sin(c.omega * t)};
}
inline Eigen::Vector2d SuspensionRate(const ChainParams& c, double t) {
  return {0.0, c.A * c.omega * std::cos(c.omega * t)};
}
inline Eigen::Vector2d SuspensionAccel(const ChainParams& c, double t) {
  return {0.0, -c.A * c.omega * c.omega * std::sin(c.omega * t)};
}

class ChainRods final : public engine::ConstraintBlock {
 public:
  ChainRods(int n, const ChainParams& c) : n_(n), c_(c) { info_.name = "rod"; }
  int num_rows() const override { return n_; }
  const engine::ConstraintRowInfo& row_info(int /*local_row*/) const override { return info_; }
  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    for (std::size_t k = 0; k < rows.size(); ++k)
      g(static_cast<Eigen::Index>(k)) = 0.5 * (D(t, q, rows[k]).squaredNorm() - 1.0);
  }
  void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    G.setZero();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const int i = rows[k];
      const Eigen::Vector2d d = D(t, q, i);
      const auto r = static_cast<Eigen::Index>(k);
      G.block<1, 2>(r, 2 * i) = d.transpose();
      if (i > 0) G.block<1, 2>(r, 2 * (i - 1)) = -d.transpose();
    }
  }
  // ∂g₀/∂t = −d₀ · ṡ; the other rows are scleronomic.
  void TimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<Eigen::VectorXd> g_t) const override {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      g_t(static_cast<Eigen::Index>(k)) =
          rows[k] == 0 ? -D(t, q, 0).dot(SuspensionRate(c_, t)) : 0.0;
    }
  }
  // g̈_i = d_i · (v̇_i − v̇_{i−1}) + |v_i − v_{i−1}|², with v̇₀ = s̈ (a term of γ for row 0).
  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const int i = rows[k];
      const Eigen::Vector2d v_prev =
          i == 0 ? SuspensionRate(c_, t) : Eigen::Vector2d(v.segment<2>(2 * (i - 1)));
      double value = (Eigen::Vector2d(v.segment<2>(2 * i)) - v_prev).squaredNorm();
      if (i == 0) value -= D(t, q, 0).dot(SuspensionAccel(c_, t));
      gamma(static_cast<Eigen::Index>(k)) = value;
    }
  }

 private:
  Eigen::Vector2d D(double t, const Eigen::VectorXd& q, int i) const {
    const Eigen::Vector2d prev =
        i == 0 ? Suspension(c_, t) : Eigen::Vector2d(q.segment<2>(2 * (i - 1)));
    return Eigen::Vector2d(q.segment<2>(2 * i)) - prev;
  }
  int n_;
  ChainParams c_;
  engine::ConstraintRowInfo info_;
};

class ChainSystem final : public engine::MechanicalSystem {
 public:
  explicit ChainSystem(int n, const ChainParams& c = {}) : n_(n) {
    AddConstraintBlock(std::make_shared<ChainRods>(n, c));
  }
  int nq() const override { return 2 * n_; }
  int nv() const override { return 2 * n_; }
  void MassMatrix(const Eigen::VectorXd& /*q*/, Eigen::MatrixXd* M) const override {
    M->setIdentity(2 * n_, 2 * n_);
  }
  bool HasConstantMassMatrix() const override { return true; }
  void Forces(double /*t*/, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& /*v*/,
              Eigen::VectorXd* F) const override {
    F->setZero(2 * n_);
    for (int i = 0; i < n_; ++i) (*F)(2 * i + 1) = -kChainGravity;
  }

 private:
  int n_;
};

// Rod i at the angle φ_i = 0.5 sin(i + 1) from the vertical below s(0) = 0 (the chain swings and
// folds); every mass moves with the suspension's initial velocity (0, AΩ), so that
// d_i · (v_i − v_{i−1}) = 0 and G v + ∂g/∂t = 0 hold.
inline void ChainStart(int n, const ChainParams& c, Eigen::VectorXd* q, Eigen::VectorXd* v) {
  q->setZero(2 * n);
  v->setZero(2 * n);
  Eigen::Vector2d p = Suspension(c, 0.0);
  for (int i = 0; i < n; ++i) {
    const double phi = c.phi * std::sin(i + 1.0);
    p += Eigen::Vector2d(std::sin(phi), -std::cos(phi));
    q->segment<2>(2 * i) = p;
    (*v)(2 * i + 1) = c.A * c.omega;
  }
}

}  // namespace saltus::integrators::testing
