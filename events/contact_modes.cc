#include "events/contact_modes.h"

#include <algorithm>

namespace saltus::events {

std::string ContactModeName(ContactMode mode, const Eigen::Vector2d& slip_direction,
                            int num_tangent_rows) {
  if (mode == ContactMode::kSlip && num_tangent_rows == 1) {
    return slip_direction[0] > 0 ? "slip+" : "slip-";
  }
  return std::string(contact::ToString(mode));
}

ContactModes::ContactModes(const engine::MechanicalSystem& system, const RowSets& rows)
    : system_(system), rows_(rows), active_(rows.bilateral) {}

const ContactState* ContactModes::state(int row) const {
  const auto it = std::lower_bound(closed_.begin(), closed_.end(), row);
  if (it == closed_.end() || *it != row) return nullptr;
  return &states_[static_cast<std::size_t>(it - closed_.begin())];
}

ContactMode ContactModes::mode(int row) const {
  const ContactState* s = state(row);
  return s != nullptr ? s->mode : ContactMode::kOpen;
}

void ContactModes::SetClosed(const std::vector<int>& closed) {
  states_.resize(closed.size());
  for (std::size_t k = 0; k < closed.size(); ++k) states_[k] = ContactState{closed[k]};
  closed_ = closed;
  Derive();
}

void ContactModes::SetStates(std::vector<ContactState> states) {
  std::sort(states.begin(), states.end(),
            [](const ContactState& a, const ContactState& b) { return a.row < b.row; });
  states_ = std::move(states);
  closed_.resize(states_.size());
  for (std::size_t k = 0; k < states_.size(); ++k) closed_[k] = states_[k].row;
  Derive();
}

void ContactModes::Derive() {
  sticking_.clear();
  sliding_.clear();
  std::vector<int> tangential;
  for (const ContactState& s : states_) {
    if (s.mode == ContactMode::kStick) {
      sticking_.push_back(s.row);
      for (int t : system_.TangentRows(s.row)) tangential.push_back(t);
    } else if (s.mode == ContactMode::kSlip) {
      sliding_.push_back(s.row);
    }
  }
  active_ = Union(rows_.bilateral, closed_);
  if (!tangential.empty()) {
    std::sort(tangential.begin(), tangential.end());
    active_ = Union(active_, tangential);
  }
}

std::vector<engine::SlidingContact> ContactModes::SlidingContacts() const {
  std::vector<engine::SlidingContact> out;
  for (int row : sliding_) {
    const ContactState& s = *state(row);
    const auto k = static_cast<Eigen::Index>(system_.TangentRows(row).size());
    engine::SlidingContact c;
    c.normal_row = row;
    c.mu = system_.constraint_info(row).friction;
    c.mode = k == 1 ? engine::SlipDirection::kFixed : engine::SlipDirection::kCurrent;
    c.direction = s.slip_direction.head(k);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace saltus::events
