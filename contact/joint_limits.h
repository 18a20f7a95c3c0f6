// Joint limits of a spatial model as unilateral constraint rows ("stops"): for a revolute joint
// its angle θ, for a prismatic joint its displacement s, must stay in [lower, upper]. Each limit
// gives two rows of set U, closed and impacted like any contact (events/, Newton restitution):
//
//   g_lower = x − lower ≥ 0,   g_upper = upper − x ≥ 0,     x = θ or s,
//
// named "<limit>.lower" and "<limit>.upper". With the joint frames of engine::JointFrames
// (x̄_a, ȳ_a, z̄_a the columns of axes_a; x̄_b of axes_b; s̄_a, s̄_b the joint points) and the
// world vectors x_a = R_a x̄_a, …, ρ_a = R_a s̄_a, p_a = r_a + ρ_a:
//
//   revolute   θ = atan2(σ, κ),  σ = x_b·y_a, κ = x_b·x_a   (the angle of the engine's drivers and
//              torsional springs), θ̇ = (ω_b − ω_a)·n, n = (κ (x_b × y_a) − σ (x_b × x_a))/(κ²+σ²),
//              θ̈ = (κ σ̈ − σ κ̈)/r² − 2 θ̇ (κ κ̇ + σ σ̇)/r², r² = κ² + σ², where σ̈ and κ̈ are taken
//              at zero accelerations (ẍ = ω × (ω × x)) for γ;
//   prismatic  s = z_a·d, d = p_b − p_a,  ṡ = z_a·ḋ + ż_a·d,
//              s̈ = z_a·d̈ + 2 ż_a·ḋ + z̈_a·d   (γ: d̈ and z̈_a at zero accelerations),
//
// with ω the world angular velocities (v holds them in body axes: G's rotational entries are
// Rᵀ of the world gradient). θ is in (−π, π], so revolute limits must lie in [−π, π]. The rows
// are scleronomic (∂g/∂t = 0). A joint with a side at a node of a flexible body uses that node's
// section as the side's frame (engine::SpatialJointSide: the section's point and axes, angular
// velocity Ω = R(ω + E η̇), v̇-free angular acceleration α): the same formulas with ẍ_free =
// α × x + Ω × (Ω × x), and G gains the modal columns Bᵀ Rᵀ of the points and Eᵀ Rᵀ of the axes.
// Haddouni et al. 2017, eq. 1-5 (unilateral rows, Newton impacts).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "engine/constraint_block.h"
#include "engine/spatial_model.h"

namespace saltus::contact {

struct JointLimit {
  std::string name;             // rows "<name>.lower", "<name>.upper"
  int joint = 0;                // index into SpatialModel::joints(): a revolute or prismatic joint
  double lower = 0, upper = 0;  // rad or m, lower < upper
  double restitution = -1.0;    // Newton coefficient in [0, 1]; negative: the global one
};

class JointLimits : public engine::ConstraintBlock {
 public:
  // Validates every limit (unique non-empty name, joint index, joint type revolute or
  // prismatic, finite lower < upper, revolute limits within [−π, π], restitution) and throws
  // std::invalid_argument naming it.
  JointLimits(std::shared_ptr<const engine::SpatialModel> model, std::vector<JointLimit> limits);

  const std::vector<JointLimit>& limits() const { return limits_; }
  int num_rows() const override { return 2 * static_cast<int>(limits_.size()); }
  const engine::ConstraintRowInfo& row_info(int i) const override {
    return infos_[static_cast<std::size_t>(i)];
  }
  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override;
  void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override;
  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override;

 private:
  // The joint coordinate x (θ or s) of limit i at q, with v (may be null) its rate ẋ and its
  // v̇-free acceleration (γ of the lower row); `gradient` (may be null) gets ∂ẋ/∂v (nv).
  struct Coordinate {
    double x = 0, x_dot = 0, x_ddot_free = 0;
  };
  Coordinate Evaluate(const Eigen::VectorXd& q, const Eigen::VectorXd* v, int i,
                      Eigen::RowVectorXd* gradient) const;
  // Evaluate for a joint with a side at a node of a flexible body: the same coordinate between
  // the sections' frames (engine::SpatialJointSide), whose G rows hold the modal columns.
  Coordinate EvaluateAtNodes(const Eigen::VectorXd& q, const Eigen::VectorXd* v, int joint,
                             Eigen::RowVectorXd* gradient) const;
  void CheckSizes(const Eigen::VectorXd& q, const Eigen::VectorXd* v) const;

 private:
  std::shared_ptr<const engine::SpatialModel> model_;
  std::vector<JointLimit> limits_;
  std::vector<engine::ConstraintRowInfo> infos_;
};

}  // namespace saltus::contact
