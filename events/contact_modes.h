// The mode of every unilateral contact, from which the index sets and the active rows of the
// event loop are derived (Haddouni et al. 2017, eq. 5 and 13; events/simulation.h):
//
//   open      g > 0 or separating: not in I₂; its gap is watched for an impact;
//   closed    frictionless contact in I₂ (g = 0, ġ = 0): its normal row is an equality between
//             events and its force λ_N ≥ 0 is watched for a take-off;
//   stick     frictional contact in I₂ whose tangential velocity is zero: the normal row and its
//             tangential rows are equalities (Coulomb: ‖λ_T‖ ≤ μ λ_N);
//   slip      frictional contact in I₂ that slides: the normal row is an equality and the
//             friction force −μ λ_N d acts along the slip direction d (in the plane d = ±1:
//             slip_positive / slip_negative).
//
//   I₂ ∩ U = {contacts not open},  A = B ∪ (I₂ ∩ U) ∪ {tangential rows of sticking contacts}.
//
// I₁ (closed in position, g ≤ τ₀) is a property of a switching time only and is computed there
// (events/switch_handler.h). The lists are kept ascending and rebuilt on every change of mode.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/mechanical_system.h"
#include "events/event_context.h"

namespace saltus::events {

enum class ContactMode : std::uint8_t { kOpen, kClosed, kStick, kSlipPositive, kSlipNegative };
std::string_view ToString(ContactMode m);  // "open", "closed", "stick", "slip+", "slip-"

class ContactModes {
 public:
  // Every contact open; the active rows are the bilateral ones.
  ContactModes(const engine::MechanicalSystem& system, const RowSets& rows);

  ContactMode mode(int row) const { return mode_[static_cast<std::size_t>(row)]; }
  // I₂ ∩ U: the contacts that are not open, ascending.
  const std::vector<int>& closed() const { return closed_; }
  // A: the rows the integrator keeps as equalities between events, ascending.
  const std::vector<int>& active() const { return active_; }

  // Frictionless contacts: the contacts in `closed` (ascending, unilateral rows) become closed,
  // every other contact open.
  void SetClosed(const std::vector<int>& closed);

 private:
  void Derive();

  const engine::MechanicalSystem& system_;
  const RowSets& rows_;
  std::vector<ContactMode> mode_;  // per global row (unilateral rows meaningful)
  std::vector<int> closed_, active_;
};

}  // namespace saltus::events
