// Validation helpers shared by the model builders (planar_model.cc, spatial_model.cc): every
// failure throws std::invalid_argument whose message starts with the item ("body 'crank': …").
// Internal to saltus::engine; not part of the public API.
#pragma once

#include <Eigen/Core>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace saltus::engine::validation {

// Shortest text that reads back to the same double ("-1", "0.1", "nan", "inf").
inline std::string Num(double x) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), x);
  return std::string(buffer, result.ptr);
}
// "(x, y[, z])". Built by appending: GCC 12 warns falsely (-Wrestrict, bug 105329) on
// "literal" + std::string temporaries.
template <class V>
std::string Vec(const V& x) {
  std::string text(1, '(');
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (i > 0) text.append(", ");
    text.append(Num(x(i)));
  }
  text.push_back(')');
  return text;
}
inline std::string Label(const char* kind, const std::string& name) {
  return std::string(kind) + " '" + name + "'";
}
[[noreturn]] inline void Fail(const std::string& label, const std::string& what) {
  throw std::invalid_argument(label + ": " + what);
}
inline void RequireName(const char* kind, const std::string& name, std::size_t index) {
  if (name.empty()) {
    throw std::invalid_argument(std::string(kind) + " #" + std::to_string(index) +
                                ": name must not be empty");
  }
}
template <class Item>
void RequireUniqueName(const std::string& label, const std::string& name,
                       const std::vector<Item>& items) {
  for (const Item& item : items) {
    if (item.name == name) Fail(label, "duplicate name");
  }
}
inline void RequireFinite(const std::string& label, const char* field, double x) {
  if (!std::isfinite(x)) Fail(label, std::string(field) + " must be finite, got " + Num(x));
}
template <class V>
void RequireFiniteVec(const std::string& label, const char* field, const V& x) {
  if (!x.allFinite()) Fail(label, std::string(field) + " must be finite, got " + Vec(x));
}
inline void RequirePositive(const std::string& label, const char* field, double x) {
  RequireFinite(label, field, x);
  if (!(x > 0.0)) Fail(label, std::string(field) + " must be > 0, got " + Num(x));
}
inline void RequireNonNegative(const std::string& label, const char* field, double x) {
  RequireFinite(label, field, x);
  if (!(x >= 0.0)) Fail(label, std::string(field) + " must be >= 0, got " + Num(x));
}
// Body index in [ground, num_bodies) (or [0, num_bodies) when the ground is not allowed).
inline void RequireBody(const std::string& label, const char* field, int index, int num_bodies,
                        bool ground_allowed, int ground = -1 /* kGround */) {
  const int first = ground_allowed ? ground : 0;
  if (index < first || index >= num_bodies) {
    Fail(label, std::string(field) + ": unknown body index " + std::to_string(index) +
                    ", expected one in [" + std::to_string(first) + ", " +
                    std::to_string(num_bodies) + ")" +
                    (ground_allowed ? " (" + std::to_string(ground) + " is the ground)" : ""));
  }
}
// The checks every item between two bodies (or a body and the ground) shares: a unique
// non-empty name among `existing`, valid body indices, two different bodies. Returns its label.
template <class Item>
std::string RequireTwoBodyItem(const char* kind, const Item& item,
                               const std::vector<Item>& existing, int num_bodies) {
  RequireName(kind, item.name, existing.size());
  std::string label = Label(kind, item.name);
  RequireUniqueName(label, item.name, existing);
  RequireBody(label, "body_a", item.body_a, num_bodies, true);
  RequireBody(label, "body_b", item.body_b, num_bodies, true);
  if (item.body_a == item.body_b) {
    Fail(label, "body_a and body_b are the same body (" + std::to_string(item.body_a) + ")");
  }
  return label;
}

// A translational spring-damper (planar or spatial): the two-body checks, finite attachment
// points, stiffness, damping and rest length ≥ 0. Returns the item's label.
template <class Spring>
std::string RequireSpringDamper(const Spring& spring, const std::vector<Spring>& existing,
                                int num_bodies) {
  const std::string label = RequireTwoBodyItem("spring", spring, existing, num_bodies);
  RequireFiniteVec(label, "point_a", spring.point_a);
  RequireFiniteVec(label, "point_b", spring.point_b);
  RequireNonNegative(label, "stiffness", spring.stiffness);
  RequireNonNegative(label, "damping", spring.damping);
  RequireNonNegative(label, "rest_length", spring.rest_length);
  return label;
}
inline void CheckSize(const Eigen::VectorXd& x, int expected, const char* what, const char* where) {
  if (x.size() != expected) {
    throw std::invalid_argument(std::string(where) + ": " + what + " has size " +
                                std::to_string(x.size()) + ", expected " +
                                std::to_string(expected));
  }
}

}  // namespace saltus::engine::validation
