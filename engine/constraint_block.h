// A block of constraint rows with one evaluation routine: the rows of all joints of a model, the
// unilateral contacts of a set of shapes, or user callbacks. engine::MechanicalSystem
// concatenates blocks and gives every row a global index; integrators see only rows.
//
// Conventions (Haddouni et al. 2017, Section 2.1): for a unilateral row g is the signed gap,
// positive when open; G is its Jacobian with respect to v (m × nv); a positive multiplier λ
// pushes along +∇g, i.e. a contact force is λ ≥ 0. γ is defined by g̈ = G v̇ + γ.
#pragma once

#include <Eigen/Dense>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace saltus::engine {

struct BlockSparseRows;  // engine/block_sparse.h

// Bilateral rows: joints and drivers (set B). Unilateral rows: the normal gap of a contact
// (set U). Tangential rows: the tangential relative velocity of a frictional contact at its
// contact point (one row in the plane, two in space), ġ_T = G_T v, with g̈_T = G_T v̇ + γ_T; they
// belong to a unilateral row (ConstraintRowInfo::normal_row) and are active only while that
// contact sticks. Their force is the tangential contact force λ_T (Coulomb: ‖λ_T‖ ≤ μ λ_N).
// Resistance rows (issue 18 §1, docs/friction.md "Rolling and spinning resistance"): the relative
// angular velocity of a contact's two bodies along a tangent t_k (rolling rows, two in space) or
// along the normal n (the spinning row), velocity level like the tangential rows and belonging
// to a unilateral row; their forces are the rolling torque τ_R (‖τ_R‖ ≤ μ_R λ_N) and the
// spinning torque τ_S (|τ_S| ≤ μ_S λ_N), μ_R and μ_S lengths (Siconos Numerics'
// RollingFrictionContactProblem for τ_R).
enum class ConstraintKind { kBilateral, kUnilateral, kTangential, kResistance };

// Position-level rows have a constraint function g(q, t) (joints, gaps). Velocity-level rows
// (nonholonomic: the tangential rows of a sticking contact, whose "position" has no meaning
// once the contact point rolls) have only the velocity constraint ġ = G v + ∂g/∂t = 0 and its
// derivative G v̇ + γ = 0; Values() of such a row is 0 by convention and is never used as a
// constraint: formulations that enforce g = 0 (index 3, GGL, position projection) enforce such
// rows at velocity level instead.
enum class ConstraintLevel { kPosition, kVelocity };

struct ConstraintRowInfo {
  ConstraintKind kind = ConstraintKind::kBilateral;
  // Human-readable and unique within a system: "<joint>.<row>" or "<contact>" (tangential rows:
  // "<contact>.t", in space "<contact>.t1", "<contact>.t2").
  std::string name;
  // Newton restitution coefficient in [0, 1] for unilateral rows; negative: the simulation's
  // global coefficient applies.
  double restitution = -1.0;
  // Coulomb friction coefficient μ ≥ 0 of a unilateral row. μ > 0 requires tangential rows whose
  // normal_row is this row (checked by MechanicalSystem::AddConstraintBlock); 0: frictionless.
  double friction = 0.0;
  ConstraintLevel level = ConstraintLevel::kPosition;
  // Rolling and spinning resistance of a unilateral row (lengths μ_R, μ_S ≥ 0, in m; 0: none).
  // μ_R > 0 requires two resistance rows with spinning = false, μ_S > 0 one with spinning = true,
  // whose normal_row is this row (checked by MechanicalSystem::AddConstraintBlock).
  double rolling_friction = 0.0;
  double spinning_friction = 0.0;
  // Tangential and resistance rows: the local index (in the same block) of the unilateral row
  // they belong to.
  int normal_row = -1;
  // Resistance rows: true for the spinning row (about n), false for a rolling row (about t_k).
  bool spinning = false;
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
  // G and γ of `rows` at one (t, q, v), as Jacobian and Gamma give them (the same numbers): the
  // KKT solve of engine::ConstrainedDynamics needs both at every evaluation. The default calls
  // the two; a block whose rows share work between them (the planar joints' frame points, one
  // sin/cos each) overrides it to do that work once.
  virtual void JacobianAndGamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                std::span<const int> rows, Eigen::Ref<Eigen::MatrixXd> G,
                                Eigen::Ref<Eigen::VectorXd> gamma) const {
    Jacobian(t, q, rows, G);
    Gamma(t, q, v, rows, gamma);
  }
  // Rows that may reach a value ≤ margin at some time of [t, t + horizon] while every velocity
  // coordinate keeps |v_j| ≤ speed_bound[j] (nv entries ≥ 0) over that time, from q = q(t):
  // local indices, ascending. Conservative: a row left out stays > margin over the horizon.
  // The default lists every row; blocks with many rows (the contacts of many bodies,
  // contact::SpatialContacts) override it with a broadphase so that the event loop watches only
  // nearby pairs (events/simulation.h, "Watched rows").
  virtual void CandidateRows(const Eigen::VectorXd& q, const Eigen::VectorXd& speed_bound,
                             double horizon, double margin, std::vector<int>* rows) const {
    (void)q, (void)speed_bound, (void)horizon, (void)margin;
    rows->resize(static_cast<std::size_t>(num_rows()));
    std::iota(rows->begin(), rows->end(), 0);
  }
  // Whether CandidateRows reads speed_bound. A block that overrides CandidateRows with a test
  // that uses the speeds returns true: the event loop then bounds the speeds over every step from
  // all its samples of the dense output, and otherwise interpolates only the samples its scan
  // reaches (events/witness.h, StepSamples).
  virtual bool CandidateRowsDependOnSpeed() const { return false; }
  // Appends row `local_row` of G to *G as block-sparse row (one block of G->block_size
  // velocities per body, ascending body order, closed with EndRow) in O(bodies of the row)
  // instead of the O(nv) of a dense row, and returns true; returns false and appends nothing when
  // the block does not provide it (the default; the system then uses Jacobian on a dense row).
  virtual bool AppendJacobianBlocks(double t, const Eigen::VectorXd& q, int local_row,
                                    BlockSparseRows* G) const {
    (void)t, (void)q, (void)local_row, (void)G;
    return false;
  }
  // g and the rate ġ = G v + ∂g/∂t of `rows` at the same (t, q, v) in one pass (the event loop
  // samples both at every watched row), into outputs of rows.size() entries, and true. The
  // default returns false and writes nothing: engine::MechanicalSystem::ConstraintValuesAndRates
  // then uses Values and the rate through the Jacobian (engine::ConstraintRate), as separately.
  // An override must give the numbers of that path (blocks with many rows, e.g.
  // contact::SpatialContacts, evaluate each row's geometry once instead of twice).
  virtual bool ValuesAndRates(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                              std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> g,
                              Eigen::Ref<Eigen::VectorXd> g_dot) const {
    (void)t, (void)q, (void)v, (void)rows, (void)g, (void)g_dot;
    return false;
  }
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
