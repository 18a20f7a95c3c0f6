// The split of the contact forces over redundant sticking contacts (issue 18 §3: "a box resting
// flat on four corners on an incline sticks or slides as a whole").
//
// In a phase with active rows A the index-1 solve fixes v̇ and the resultant H_Aᵀ λ, not λ itself
// when rows are redundant: any λ + N α with H_Aᵀ N = 0 gives the same motion (Pfeiffer & Glocker,
// "Multibody Dynamics with Unilateral Contacts", 1996, Sec. 7.3: indeterminate contact forces).
// The solve returns the minimum-norm λ, which spreads a box's tangential load evenly over its four
// corners while its normal load shifts downhill: with tan α < μ the uphill corners can leave their
// cones, ‖λ_T,i‖ > μ λ_N,i, although the box sticks. The stick → slip witnesses, the take-off
// witnesses and the reported contact forces must use a split that the contact law admits.
//
// At the start of a phase with sticking contacts whose minimum-norm split leaves a cone (or gives
// a closed contact λ_N < 0), the offset δλ = N α is chosen by two small linear programs
// (contact/small_lp.h) on the faceted inner cone (in space 16 facets, ‖λ_T‖ ≤ μ cos(π/16) λ_N on
// each facet; the plane's cone is exact):
//   1. maximize s  subject to  μ'_i (λ_N,i + δλ_N,i) − c_jᵀ(λ_T,i + δλ_T,i) ≥ s   (sticking i,
//      facet j),  λ_N,k + δλ_N,k ≥ 0 (closed k),  s ≤ s_cap = 0.1 max_i μ_i |λ_N,i|;
//   2. minimize ‖α‖₁ with s fixed at the optimum of 1 (the smallest redistribution: no internal
//      squeeze beyond what the margin needs).
// δλ stays fixed in the phase's multiplier space; the rows of a sticking body do not move, so
// H_Aᵀ δλ = 0 holds along the phase. When the load grows until no admissible split is left, the
// witness crosses zero and the switch decides stick or slip again (events/switch_handler.h);
// the next phase computes a new split. Without sticking contacts or when the minimum-norm split
// is admissible, δλ = 0 (frictionless runs are unchanged).
#pragma once

#include <Eigen/Dense>

#include "engine/mechanical_system.h"
#include "events/contact_modes.h"

namespace saltus::events {

class ForceSplit {
 public:
  // Forgets the offset (a phase without sticking contacts).
  void Clear() { offset_.resize(0); }
  // The offset for the phase starting at (t, q, v) with the active rows of `modes`, from the
  // minimum-norm multipliers `lambda` of those rows; `system` gives the force directions H.
  void Compute(const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
               const Eigen::VectorXd& v, const ContactModes& modes, const Eigen::VectorXd& lambda);
  // λ + δλ (λ in the order of modes.active()).
  void Apply(Eigen::VectorXd* lambda) const {
    if (offset_.size() > 0 && offset_.size() == lambda->size()) *lambda += offset_;
  }
  const Eigen::VectorXd& offset() const { return offset_; }

 private:
  Eigen::VectorXd offset_;
};

}  // namespace saltus::events
