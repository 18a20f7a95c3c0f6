// A block of constraint rows with one evaluation routine: the rows of all joints of a model, the
// unilateral contacts of a set of shapes, or user callbacks. engine::MechanicalSystem
// concatenates blocks and gives every row a global index; integrators see only rows.
//
// Conventions (Haddouni et al. 2017, Section 2.1): for a unilateral row g is the signed gap,
// positive when open; G is its Jacobian with respect to v (m × nv); a positive multiplier λ
// pushes along +∇g, i.e. a contact force is λ ≥ 0. γ is defined by g̈ = G v̇ + γ.
#pragma once

#include <Eigen/Dense>
#include <span>
#include <string>

namespace saltus::engine {

enum class ConstraintKind { kBilateral, kUnilateral };

struct ConstraintRowInfo {
  ConstraintKind kind = ConstraintKind::kBilateral;
  // Human-readable and unique within a system: "<joint>.<row>" or "<contact>".
  std::string name;
  // Newton restitution coefficient in [0, 1] for unilateral rows; negative: the simulation's
  // global coefficient applies.
  double restitution = -1.0;
};

class ConstraintBlock {
 public:
  virtual ~ConstraintBlock() = default;

  virtual int num_rows() const = 0;
  virtual const ConstraintRowInfo& row_info(int local_row) const = 0;

  // `rows` are local indices in [0, num_rows()), ascending, no duplicates. The outputs already
  // have rows.size() rows (G: rows.size() × nv) and must be filled completely.
  virtual void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<Eigen::VectorXd> g) const = 0;
  virtual void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                        Eigen::Ref<Eigen::MatrixXd> G) const = 0;
  virtual void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                     std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const = 0;
  // ∂g/∂t; zero for scleronomic blocks (the default).
  virtual void TimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                              Eigen::Ref<Eigen::VectorXd> g_t) const {
    (void)t;
    (void)q;
    (void)rows;
    g_t.setZero();
  }
};

}  // namespace saltus::engine
