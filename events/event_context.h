// What the parts of the event loop share (events/simulation.h has the design): the system, the
// options, the statistics, the row sets of the system, and the helpers that several parts call —
// the unilateral candidate rows of a state, the energy and the Delassus diagonal from the mass
// blocks. Internal to saltus::events.
#pragma once

#include <Eigen/Dense>
#include <limits>
#include <string>
#include <vector>

#include "engine/block_sparse.h"
#include "engine/mechanical_system.h"
#include "events/simulation.h"

namespace saltus::events {

// Thrown inside the loop when a run cannot continue; AdvanceTo turns it into a RunResult.
struct RunFailure {
  RunStatus status;
  std::string message;
};

// Sorted union / difference of ascending index lists.
std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b);
// The same into *out (its storage reused); out must be neither a nor b.
void UnionInto(const std::vector<int>& a, const std::vector<int>& b, std::vector<int>* out);
std::vector<int> Difference(const std::vector<int>& a, const std::vector<int>& b);
bool Contains(const std::vector<int>& sorted, int row);

// The rows of a system by kind and the per-row data of the unilateral ones.
struct RowSets {
  RowSets(const engine::MechanicalSystem& system, double global_restitution);
  std::vector<int> bilateral, unilateral;  // ascending
  std::vector<char> is_unilateral;         // per global row
  std::vector<double> restitution;         // per global row (unilateral rows meaningful)
};

// The unilateral rows (ascending) that may be within `margin` of closing over `horizon` at speeds
// `speed` (MechanicalSystem::CandidateRows), leaving out `excluded` (ascending) when given; every
// unilateral row when `watch_all` (SimulationOptions::watch_all_rows).
class UnilateralCandidates {
 public:
  UnilateralCandidates(const engine::MechanicalSystem& system, const RowSets& rows, bool watch_all)
      : system_(system),
        rows_(rows),
        watch_all_(watch_all),
        use_speed_(!watch_all && system.CandidateRowsDependOnSpeed()) {}
  void Find(const Eigen::VectorXd& q, const Eigen::VectorXd& speed, double horizon, double margin,
            const std::vector<int>* excluded, std::vector<int>* out);
  // Whether Find reads `speed` (else any vector of nv entries will do, e.g. zeros).
  bool UseSpeed() const { return use_speed_; }

 private:
  const engine::MechanicalSystem& system_;
  const RowSets& rows_;
  bool watch_all_;
  bool use_speed_;
  std::vector<int> buffer_;
};

// The energy T + V and the diagonal of the Delassus matrix, W_αα = G_α M⁻¹ G_αᵀ, from the
// diagonal mass blocks when the system provides them (engine::MassBlocks: O(nv) for T, one
// Cholesky factor per body block for W_αα, made when a row first needs it and kept while M is
// constant), else from the dense M.
class MassBlockCache {
 public:
  explicit MassBlockCache(const engine::MechanicalSystem& system) : system_(system) {}
  // The last state's value is kept: a switch asks for it before and after the impact and after
  // the projection, which often leave the state as it was; and so is the last (t, q)'s potential
  // energy, which an impact (v changes, q does not) leaves as it was.
  double Energy(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);
  // w (rows.size()) ← W_αα of `rows` at (t, q).
  void DelassusDiagonal(double t, const Eigen::VectorXd& q, const std::vector<int>& rows,
                        Eigen::VectorXd* w);

 private:
  // ½ vᵀ M(q) v.
  double Kinetic(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  const engine::MechanicalSystem& system_;
  // Energy's last state, its potential energy (at memo_t_, memo_q_) and its energy.
  double memo_t_ = std::numeric_limits<double>::quiet_NaN();
  Eigen::VectorXd memo_q_, memo_v_;
  double memo_potential_ = 0, memo_energy_ = 0;
  engine::MassBlocks mass_blocks_;
  engine::BlockSparseRows G_sparse_;
  // mass_blocks_ hold the system's constant M (HasConstantMassMatrix): not evaluated again, and
  // the block factors stay valid.
  bool constant_mass_valid_ = false;
  bool dense_mass_valid_ = false;  // M_ holds the system's constant M (the dense path of Energy)
  std::vector<Eigen::LLT<Eigen::MatrixXd>> block_llt_;  // valid where stamped with llt_stamp_
  std::vector<long> block_llt_stamp_;
  long llt_stamp_ = 1;
  Eigen::VectorXd Mv_;
  Eigen::MatrixXd G_, M_, MinvGt_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
};

// The shared context of one simulation's loop: read-only system and options, the statistics and
// the helpers above.
struct EventContext {
  EventContext(const engine::MechanicalSystem& system, const SimulationOptions& options);
  const engine::MechanicalSystem& sys;
  const SimulationOptions& opt;
  RowSets rows;
  SimulationStats stats;
  UnilateralCandidates candidates;
  MassBlockCache mass;
  Eigen::VectorXd zero_speed;  // nv zeros: candidates of a state (horizon 0)
};

}  // namespace saltus::events
