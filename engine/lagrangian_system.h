// A mechanical system given by user callbacks, for embedding arbitrary Lagrangian systems
// (Saltus's equivalent of Siconos's LagrangianDS): q and v have the same size n (T = I),
//
//   M(q) v̇ = F(q, v, t) + Gᵀ λ,
//
// with constraint rows supplied by CallbackConstraints (g, G, γ and optionally ∂g/∂t as
// functions of the whole row set). Example: a 1-DOF oscillator with a stop, g(q) = q − q_stop,
// unilateral.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "engine/mechanical_system.h"

namespace saltus::engine {

struct LagrangianCallbacks {
  int n = 0;
  // M(q), n × n symmetric positive definite. If empty, M = I.
  std::function<void(const Eigen::VectorXd& q, Eigen::MatrixXd* M)> mass;
  // Set when M does not depend on q, so that solvers factorize it once.
  bool constant_mass = false;
  // F(q, v, t), n. If empty, F = 0.
  std::function<void(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                     Eigen::VectorXd* F)>
      forces;
  // Optional potential energy (for energy reports).
  std::function<double(double t, const Eigen::VectorXd& q)> potential;
  std::vector<std::string> coordinate_names;  // empty or size n
};

class LagrangianSystem : public MechanicalSystem {
 public:
  // Throws std::invalid_argument if n ≤ 0, or the names have the wrong size, are empty or
  // repeat. Evaluation throws std::invalid_argument when a callback returns the wrong size.
  // VelocityName inserts "v" before the last component of the position name ("x" → "vx",
  // "cart.x" → "cart.vx"); without names they are "q<i>" and "v<i>".
  explicit LagrangianSystem(LagrangianCallbacks callbacks);
  int nq() const override { return callbacks_.n; }
  int nv() const override { return callbacks_.n; }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override;
  bool HasConstantMassMatrix() const override {
    return !callbacks_.mass || callbacks_.constant_mass;
  }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override;
  double PotentialEnergy(double t, const Eigen::VectorXd& q) const override;
  std::string PositionName(int i) const override;
  std::string VelocityName(int i) const override;

 private:
  LagrangianCallbacks callbacks_;
};

// Constraint rows from callbacks evaluating all rows at once (m = rows.size() of the block).
struct ConstraintCallbacks {
  std::vector<ConstraintRowInfo> rows;
  std::function<void(double t, const Eigen::VectorXd& q, Eigen::VectorXd* g)> values;
  std::function<void(double t, const Eigen::VectorXd& q, Eigen::MatrixXd* G)> jacobian;
  std::function<void(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                     Eigen::VectorXd* gamma)>
      gamma;  // if empty, γ = 0 (constraints linear in q and t)
  std::function<void(double t, const Eigen::VectorXd& q, Eigen::VectorXd* g_t)>
      time_derivative;  // if empty, ∂g/∂t = 0
};

class CallbackConstraints : public ConstraintBlock {
 public:
  // Throws std::invalid_argument if nv ≤ 0, values or jacobian is missing, a row name is empty
  // or repeated, a restitution is NaN, or a restitution is above 1 on a unilateral row (negative
  // means "global" and is allowed). The callbacks fill all rows of the block (g: m, G: m × nv);
  // evaluation throws std::invalid_argument when they return another size.
  CallbackConstraints(ConstraintCallbacks callbacks, int nv);
  int num_rows() const override { return static_cast<int>(callbacks_.rows.size()); }
  const ConstraintRowInfo& row_info(int i) const override { return callbacks_.rows[i]; }
  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override;
  void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override;
  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override;
  void TimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<Eigen::VectorXd> g_t) const override;

 private:
  ConstraintCallbacks callbacks_;
  int nv_;
};

}  // namespace saltus::engine
