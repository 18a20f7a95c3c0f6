#include "events/contact_modes.h"

namespace saltus::events {

std::string_view ToString(ContactMode m) {
  switch (m) {
    case ContactMode::kOpen:
      return "open";
    case ContactMode::kClosed:
      return "closed";
    case ContactMode::kStick:
      return "stick";
    case ContactMode::kSlipPositive:
      return "slip+";
    case ContactMode::kSlipNegative:
      return "slip-";
  }
  return "unknown";
}

ContactModes::ContactModes(const engine::MechanicalSystem& system, const RowSets& rows)
    : system_(system),
      rows_(rows),
      mode_(static_cast<std::size_t>(system.num_constraints()), ContactMode::kOpen),
      active_(rows.bilateral) {}

void ContactModes::SetClosed(const std::vector<int>& closed) {
  for (int r : closed_) mode_[static_cast<std::size_t>(r)] = ContactMode::kOpen;
  for (int r : closed) mode_[static_cast<std::size_t>(r)] = ContactMode::kClosed;
  closed_ = closed;
  Derive();
}

// O(|I₂|): never a pass over all unilateral rows (a pile of N spheres has O(N²) of them).
void ContactModes::Derive() {
  std::vector<int> tangential;
  for (int r : closed_) {
    if (mode_[static_cast<std::size_t>(r)] != ContactMode::kStick) continue;
    for (int t : system_.TangentRows(r)) tangential.push_back(t);
  }
  active_ = Union(rows_.bilateral, closed_);
  if (!tangential.empty()) active_ = Union(active_, tangential);
}

}  // namespace saltus::events
