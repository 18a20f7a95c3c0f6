// What the event loop does at a switching time t* (Haddouni et al. 2017, Fig. 2 and Section 2.3;
// steps 1-4 of events/simulation.h): the impact problem, the new contact modes from the
// acceleration-level problem, and the projection onto the constraint manifold.
//
//   I₁        = {α : g^α(t*) ≤ τ₀} ∪ (closed contacts) ∪ (contacts whose impact function fired)
//   impact    eq. (4) on the rows of I₁ with u⁻ ≤ τ₁, repeated while the impact leaves a row of
//             I₁ approaching (a cascade at the same instant, at most kMaxImpactStages stages)
//   modes     the acceleration-level LCP (eq. 12) on the rows of I₁ left with u⁺ ≤ max(τ₁, v_e)
//             decides which close (λ > τ₃ or g̈ ≤ W_αα τ₃); the others, and the contacts whose
//             take-off function fired, open
//   project   positions onto g_A = 0 (eq. 35), velocities onto G_A v + ∂g_A/∂t = 0 (eq. 36)
//
// Each step is a member function; the rules behind each are in events/simulation.h.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "events/contact_modes.h"
#include "events/event_context.h"
#include "events/witness.h"

namespace saltus::events {

// An impact cascade longer than this is taken as a cycle (a settling cascade in a dense pile
// converges geometrically: 47 stages for a factor 1000 in the fastest approach at a ratio of
// 0.86 per stage), and the run stops.
inline constexpr int kMaxImpactStages = 1000;

class SwitchHandler {
 public:
  explicit SwitchHandler(EventContext& ctx) : ctx_(ctx) {}

  // At (t, q, v⁻) with the fired witnesses: `forced_open` (take-off function ≤ 0) and
  // `impacting` (impact function located at t), ascending. On return v is v⁺, q and v are
  // projected, `modes` holds the new modes and `events` the impact and mode-change events.
  // Throws RunFailure (lcp_failure, projection_failure).
  void Handle(double t, Eigen::VectorXd& q, Eigen::VectorXd& v, ContactModes& modes,
              const std::vector<int>& forced_open, const std::vector<int>& impacting,
              std::vector<Event>* events);

  // The gaps of the unilateral candidates within τ₀ after the last Handle (GapWitness reuses
  // them at the phase start that follows).
  const GapSnapshot& snapshot() const { return snapshot_; }

 private:
  // I₁ (ascending), and u = ġ of its rows into u_.
  std::vector<int> ClosedInPosition(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                    const std::vector<int>& closed,
                                    const std::vector<int>& impacting);
  // Step 1: the impact cascade on I₁ (v and u_ updated); the impact event when any row approached.
  void ResolveImpacts(double t, const Eigen::VectorXd& q, Eigen::VectorXd& v,
                      const std::vector<int>& i1, double energy_before, std::vector<Event>* events);
  // Steps 2-3: the contacts of I₁ that stay closed.
  std::vector<int> DecideClosed(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                const std::vector<int>& i1, const std::vector<int>& forced_open);
  // Step 4: the projection; keeps the gaps of the candidates within τ₀ at the final q.
  void Project(double t, Eigen::VectorXd& q, Eigen::VectorXd& v, const std::vector<int>& i1,
               const std::vector<int>& new_closed);
  // The candidates within τ₀ at q and their gaps into near_, g_near_.
  void NearGaps(double t, const Eigen::VectorXd& q);
  // Smallest gap after projection and the snapshot, from near_ / g_near_ at (t, q).
  void RecordGaps(double t, const Eigen::VectorXd& q);

  EventContext& ctx_;
  Eigen::VectorXd u_;  // ġ of the rows of I₁
  std::vector<int> near_;
  Eigen::VectorXd g_near_;
  bool near_gaps_current_ = false;  // near_ / g_near_ hold the candidates' gaps at the final q
  GapSnapshot snapshot_;
};

}  // namespace saltus::events
