// Small mechanical systems with closed-form event times for the tests of the event loop.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>

#include "engine/lagrangian_system.h"

namespace saltus::events {

inline constexpr double kG = 9.81;

// A point mass m moving vertically (q = height of a ball's centre), gravity, and a unilateral
// floor contact g = q − r with restitution e, given through the embedding callbacks. An upward
// force f(t) can be added.
inline std::shared_ptr<engine::MechanicalSystem> VerticalBall(
    double m, double r, double e, std::function<double(double)> f = {}) {
  engine::LagrangianCallbacks cb;
  cb.n = 1;
  cb.mass = [m](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    *M = Eigen::MatrixXd::Constant(1, 1, m);
  };
  cb.forces = [m, f](double t, const Eigen::VectorXd&, const Eigen::VectorXd&, Eigen::VectorXd* F) {
    *F = Eigen::VectorXd::Constant(1, -m * kG + (f ? f(t) : 0.0));
  };
  cb.potential = [m](double, const Eigen::VectorXd& q) { return m * kG * q[0]; };
  cb.coordinate_names = {"ball.y"};
  auto sys = std::make_shared<engine::LagrangianSystem>(cb);
  engine::ConstraintCallbacks cc;
  cc.rows = {{engine::ConstraintKind::kUnilateral, "floor", e}};
  cc.values = [r](double, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
    *g = Eigen::VectorXd::Constant(1, q[0] - r);
  };
  cc.jacobian = [](double, const Eigen::VectorXd&, Eigen::MatrixXd* G) {
    *G = Eigen::MatrixXd::Ones(1, 1);
  };
  sys->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cc, 1));
  return sys;
}

}  // namespace saltus::events
