// The mode of every unilateral contact, from which the index sets and the active rows of the
// event loop are derived (Haddouni et al. 2017, eq. 5 and 13; events/simulation.h):
//
//   open      g > 0 or separating: not in I₂; its gap is watched for an impact;
//   closed    frictionless contact in I₂ (g = 0, ġ = 0): its normal row is an equality between
//             events and its force λ_N ≥ 0 is watched for a take-off;
//   stick     frictional contact in I₂ whose tangential velocity is zero: the normal row and its
//             tangential rows are equalities (Coulomb: ‖λ_T‖ ≤ μ λ_N, watched);
//   slip      frictional contact in I₂ that slides in the direction d of its tangential velocity
//             (plane: d = ±1, "slip+" / "slip-"): the normal row is an equality and the friction
//             force −μ λ_N d acts along the tangent (engine::SlidingFrictionView); the slip
//             velocity is watched for a stop.
//
//   I₂ ∩ U = {contacts not open},  A = B ∪ (I₂ ∩ U) ∪ {tangential rows of sticking contacts}.
//
// I₁ (closed in position, g ≤ τ₀) is a property of a switching time only and is computed there
// (events/switch_handler.h). The lists are kept ascending and rebuilt on every change of mode, in
// O(|I₂|): never a pass over all unilateral rows (a pile of N spheres has O(N²) of them).
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "engine/mechanical_system.h"
#include "engine/sliding_friction.h"
#include "events/event_context.h"

namespace saltus::events {

// ContactState (the state of a contact in I₂) is declared in events/simulation.h.

class ContactModes {
 public:
  // Every contact open; the active rows are the bilateral ones.
  ContactModes(const engine::MechanicalSystem& system, const RowSets& rows);

  // The mode of a unilateral row (kOpen when it is not in I₂), and its state (null when open).
  ContactMode mode(int row) const;
  const ContactState* state(int row) const;
  // I₂ ∩ U: the contacts that are not open, ascending, and their states in the same order.
  const std::vector<int>& closed() const { return closed_; }
  const std::vector<ContactState>& states() const { return states_; }
  // A: the rows the integrator keeps as equalities between events, ascending.
  const std::vector<int>& active() const { return active_; }
  // The sticking and the sliding contacts, ascending.
  const std::vector<int>& sticking() const { return sticking_; }
  const std::vector<int>& sliding() const { return sliding_; }

  // Frictionless contacts: the contacts in `closed` (ascending, unilateral rows) become closed,
  // every other contact open.
  void SetClosed(const std::vector<int>& closed);
  // The states of I₂ (any order; one per row), every other contact open.
  void SetStates(std::vector<ContactState> states);

  // The sliding contacts as engine::SlidingFrictionView takes them: in the plane the slip
  // direction is fixed for the phase (d = ±1); in space it is the current one (d₀ the fallback).
  std::vector<engine::SlidingContact> SlidingContacts() const;

 private:
  void Derive();

  const engine::MechanicalSystem& system_;
  const RowSets& rows_;
  std::vector<int> closed_, active_, sticking_, sliding_;
  std::vector<ContactState> states_;
};

}  // namespace saltus::events
