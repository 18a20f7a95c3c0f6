// A mechanical system whose sliding contacts carry Coulomb friction: the view of a base system
// with the force directions of the sliding normal rows replaced (engine/mechanical_system.h,
// "Non-ideal constraint forces").
//
// Between two events the contact modes are frozen (ARCHITECTURE.md, "Contact modes and
// friction"). A sliding contact has its normal row active (an equality, λ_N free) and no active
// tangential row; Coulomb's law puts the force −μ λ_N d on its tangential directions, d the slip
// direction (issue 17 §2, issue 18 §2):
//
//   M v̇ = F + Hᵀ λ,   H_n = G_n − μ d·G_T,   d·G_T = Σ_k d_k G_{T,k}   (1 × nv),
//
// with G_T (k × nv, k = 1 in the plane, 2 in space) the Jacobian of the contact's tangential rows
// (ġ_T = G_T v + ∂g_T/∂t, the tangential slip velocity at the contact point). H = G for every
// other row. The slip direction is
//   kFixed     d = the given unit vector for the whole phase (the plane: d = s = ±1, the sign of
//              the slip velocity at the phase start);
//   kCurrent   d = ġ_T/‖ġ_T‖ with the CURRENT slip velocity ġ_T = G_T v + ∂g_T/∂t (in space the
//              direction turns during a slide), and the given unit fallback d₀ while ‖ġ_T‖ ≤
//              slip_speed_floor(). With the anchor gate on (set_anchor_gate, the event loop),
//              also d₀ when ġ_T has turned by π/2 or more from d₀ (ġ_T·d₀ ≤ 0): the event loop
//              renews the anchor to the current direction after every accepted step
//              (ReanchorSlipDirections), so a slide follows its turning direction exactly, and
//              one that stops inside a step goes on smoothly past the stop along d₀ (the
//              friction force does not flip within a step, which no error-controlled integrator
//              could step across) until the slip → stick witness, φ = d₀·ġ_T
//              (events/witness.h SlipWitness), locates the stop.
// Friction groups (issue 18 §2). A contact's rolling and spinning resistance (resistance rows,
// engine/constraint_block.h) slide like its tangential rows, with G_g, μ_g and d_g of the group g
// in place of G_T, μ and d: while the relative rolling velocity ġ_R = G_R v (the relative angular
// velocity along t1, t2) is not zero the rolling torque is −μ_R λ_N d_R, d_R its current
// direction, and the spinning torque is −μ_S λ_N d_S with d_S = ±1 the sign of ġ_S:
//
//   H_n = G_n − Σ_g μ_g d_g·G_g   over the groups g of the contact that slide.
//
// Each group has its own entry in the sliding set (SlidingContact::group); a contact may have one
// entry per group.
// H depends on v for kCurrent contacts. The tangent matrices (ConstraintForceJacobian, used in
// the iteration matrices of the implicit schemes) are the base system's ∂(Gᵀλ)/∂q: the
// derivatives of μ λ_N d·G_T with respect to q and v are left out of Newton matrices (a
// modified Newton iteration; it changes the rate of convergence, not the converged solution).
//
// The view adds the base's constraint blocks in their order, so every global row is the same row
// of the base; every other virtual is forwarded to the base (mass, forces, position update,
// differences, dexp⁻¹, energy, tangent matrices, block-sparse structure, names, AcceptStep), so a
// view with no sliding contact behaves exactly as its base (HasNonIdealForces() is false then).
// The base must outlive the view. The sliding set is set by the event loop at each phase start
// (SetSlidingContacts): the view is not thread-compatible and serves one simulation at a time.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "engine/mechanical_system.h"

namespace saltus::engine {

enum class SlipDirection { kFixed, kCurrent };

// The rows whose velocity slides (header, "Friction groups"): MechanicalSystem::TangentRows,
// RollingRows or SpinningRows of the normal row.
enum class FrictionGroup { kTangential, kRolling, kSpinning };
inline constexpr int kNumFrictionGroups = 3;

// The rows of group `group` of normal row `normal_row` of `system`.
std::span<const int> GroupRows(const MechanicalSystem& system, int normal_row, FrictionGroup group);

struct SlidingContact {
  int normal_row =
      -1;           // global unilateral row with tangential rows (MechanicalSystem::TangentRows)
  double mu = 0.0;  // coefficient μ_g ≥ 0 of the slide (Coulomb μ, or μ_R, μ_S in m)
  SlipDirection mode = SlipDirection::kFixed;
  // Unit vector with one entry per row of the group: d itself (kFixed; the plane: (s), s = ±1),
  // or the fallback d₀ (kCurrent).
  Eigen::VectorXd direction;
  FrictionGroup group = FrictionGroup::kTangential;
};

class SlidingFrictionView final : public MechanicalSystem {
 public:
  // Default of slip_speed_floor(): below 1e-12 (in the units of ġ_T, m/s) the slip direction is
  // round-off of the velocities, far below the event loop's stick threshold τ₁.
  static constexpr double kDefaultSlipSpeedFloor = 1e-12;

  explicit SlidingFrictionView(const MechanicalSystem& base);

  const MechanicalSystem& base() const { return base_; }

  // Replaces the sliding set (empty: frictionless, the view behaves as its base). Throws
  // std::invalid_argument naming the contact, and leaves the set unchanged, when a normal row is
  // not a unilateral row with rows of the entry's group or is listed twice with one group, μ is
  // negative or not finite, or the direction does not have one entry per row of the group or is
  // not a unit vector (to 1e-9).
  void SetSlidingContacts(std::vector<SlidingContact> contacts);
  // The π/2 gate of kCurrent directions (header; off by default).
  void set_anchor_gate(bool on) { anchor_gate_ = on; }
  // kCurrent contacts: the anchor d₀ becomes the current slip direction at (t, q, v) where the
  // slip speed exceeds slip_speed_floor() (header). Between two steps: the force at (t, q, v)
  // is unchanged by it.
  void ReanchorSlipDirections(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);
  const std::vector<SlidingContact>& sliding_contacts() const { return sliding_; }
  // Slip speeds at or below this use the fallback direction (kCurrent). Throws
  // std::invalid_argument unless floor > 0 and finite.
  void set_slip_speed_floor(double floor);
  double slip_speed_floor() const { return slip_speed_floor_; }
  bool anchor_gate() const { return anchor_gate_; }

  // The slip direction d of sliding contact `index` (in sliding_contacts()) at (t, q, v).
  void SlipDirectionAt(std::size_t index, double t, const Eigen::VectorXd& q,
                       const Eigen::VectorXd& v, Eigen::VectorXd* d) const;

  // ---- MechanicalSystem ------------------------------------------------------------------
  bool HasNonIdealForces() const override { return !sliding_.empty(); }
  void ForceDirections(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                       std::span<const int> rows, Eigen::MatrixXd* H) const override;
  void ForceDirectionsFromJacobian(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                   std::span<const int> rows, const Eigen::MatrixXd& G,
                                   Eigen::MatrixXd* H) const override;

  int nq() const override { return base_.nq(); }
  int nv() const override { return base_.nv(); }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override {
    base_.MassMatrix(q, M);
  }
  bool HasConstantMassMatrix() const override { return base_.HasConstantMassMatrix(); }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override {
    base_.Forces(t, q, v, F);
  }
  void IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double h,
                         Eigen::VectorXd* q_next) const override {
    base_.IntegratePosition(q, v, h, q_next);
  }
  bool PositionDifference(const Eigen::VectorXd& q, const Eigen::VectorXd& q_base,
                          Eigen::VectorXd* theta) const override {
    return base_.PositionDifference(q, q_base, theta);
  }
  void DexpInv(const Eigen::VectorXd& theta, const Eigen::VectorXd& v,
               Eigen::VectorXd* theta_dot) const override {
    base_.DexpInv(theta, v, theta_dot);
  }
  double PotentialEnergy(double t, const Eigen::VectorXd& q) const override {
    return base_.PotentialEnergy(t, q);
  }
  void ForceJacobians(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                      Eigen::MatrixXd* K, Eigen::MatrixXd* C) const override {
    base_.ForceJacobians(t, q, v, K, C);
  }
  void MassMatrixProductJacobian(const Eigen::VectorXd& q, const Eigen::VectorXd& a,
                                 Eigen::MatrixXd* K_M) const override {
    base_.MassMatrixProductJacobian(q, a, K_M);
  }
  void ConstraintForceJacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                               const Eigen::VectorXd& lambda, Eigen::MatrixXd* K_G) const override {
    base_.ConstraintForceJacobian(t, q, rows, lambda, K_G);
  }
  void ConstraintVelocityJacobian(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                  std::span<const int> rows, Eigen::MatrixXd* Z) const override {
    base_.ConstraintVelocityJacobian(t, q, v, rows, Z);
  }
  bool BlockSparseMatrices(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                           MassBlocks* M, BlockSparseRows* G) const override {
    return base_.BlockSparseMatrices(t, q, rows, M, G);
  }
  std::string PositionName(int i) const override { return base_.PositionName(i); }
  std::string VelocityName(int i) const override { return base_.VelocityName(i); }
  bool UsesAcceptedSteps() const override { return base_.UsesAcceptedSteps(); }
  void AcceptStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                  std::span<const int> rows, const Eigen::VectorXd& lambda) const override {
    base_.AcceptStep(t, q, v, rows, lambda);
  }

 private:
  // Checks one entry of a new sliding set against the rows of the system (see the setter).
  void Validate(const SlidingContact& c,
                const std::vector<std::array<int, kNumFrictionGroups>>& index) const;
  // The slip direction d of entry c given its group's slip velocity ġ_g (kCurrent; ignored for
  // kFixed): a reference to c.direction or to the workspace d_, valid until the next call.
  Eigen::Ref<const Eigen::VectorXd> Direction(const SlidingContact& c,
                                              Eigen::Ref<const Eigen::VectorXd> slip) const;
  // H ← H − Σ_g μ_g d_g·G_g on the rows of sliding entries with μ_g > 0 (H = G on entry), with
  // the group Jacobians of all of them evaluated in one ConstraintJacobian call, which also gives
  // the slip velocities ġ_g = G_g v + ∂g_g/∂t of the kCurrent entries.
  void SubtractFrictionTerms(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                             std::span<const int> rows, Eigen::MatrixXd* H) const;
  // Makes terms_ and group_rows_ the sliding entries of `rows`, unless they already are: within
  // a phase every evaluation asks for the same rows, so the plan is made once per phase.
  void PlanFrictionTerms(std::span<const int> rows) const;

  // One sliding entry with μ_g > 0 among the rows of a ForceDirections call.
  struct FrictionTerm {
    Eigen::Index row;    // its row in H
    std::size_t entry;   // its index in sliding_
    Eigen::Index first;  // its first row in G_g_
    Eigen::Index size;   // its number of group rows
  };

  const MechanicalSystem& base_;
  std::vector<SlidingContact> sliding_;
  // Per global row and group: its entry in sliding_, else −1.
  std::vector<std::array<int, kNumFrictionGroups>> sliding_index_;
  double slip_speed_floor_ = kDefaultSlipSpeedFloor;
  bool anchor_gate_ = false;
  // Workspace of ForceDirections (mutable: see the header on thread compatibility).
  mutable Eigen::MatrixXd G_g_;  // group Jacobians of the sliding entries, stacked
  mutable Eigen::VectorXd slip_, d_;
  // The plan of the last `rows` (PlanFrictionTerms); plan_valid_ is cleared with a new set.
  mutable bool plan_valid_ = false;
  mutable std::vector<int> plan_rows_;
  mutable std::vector<FrictionTerm> terms_;
  mutable std::vector<int> group_rows_;  // rows of G_g_: the group rows of terms_, in order
  mutable bool plan_current_ = false;    // some entry of terms_ is kCurrent
};

}  // namespace saltus::engine
