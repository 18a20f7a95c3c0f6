// A rank change that no step size resolves, shared by the half-explicit tests (HEM5, PHEM56).
//
// A particle in the plane (M = I, F = (0, −1)) with rows  flat: y = 0  and  curved: y + x² = 0.
// At x = 0 both Jacobians are (0, 1) (rank 1) and the start (x, y) = 0, v = (1, 0) satisfies both
// velocity constraints; at any x ≠ 0 they have rank 2 and together demand v_x = 0: no motion
// satisfies both. The rank drop at the restart is not structural, so the dropped row must not be
// silently lost: the run stops cleanly once it is violated, naming it.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/lagrangian_system.h"
#include "integrators/integrator.h"

namespace saltus::integrators::test_problems {

// Runs `integrator`, built with `options` (adaptive, index 2), on the particle above.
inline void ExpectRankDropAtTheRestartStopsNamingTheRow(Integrator& integrator,
                                                        const IntegratorOptions& options) {
  engine::LagrangianCallbacks lc;
  lc.n = 2;
  lc.forces = [](double, const Eigen::VectorXd&, const Eigen::VectorXd&, Eigen::VectorXd* F) {
    *F = Eigen::Vector2d(0.0, -1.0);
  };
  auto system = std::make_shared<engine::LagrangianSystem>(lc);
  engine::ConstraintCallbacks cc;
  cc.rows = {{engine::ConstraintKind::kBilateral, "flat", -1.0},
             {engine::ConstraintKind::kBilateral, "curved", -1.0}};
  cc.values = [](double, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
    *g = Eigen::Vector2d(q(1), q(1) + q(0) * q(0));
  };
  cc.jacobian = [](double, const Eigen::VectorXd& q, Eigen::MatrixXd* G) {
    G->resize(2, 2);
    *G << 0.0, 1.0, 2.0 * q(0), 1.0;
  };
  cc.gamma = [](double, const Eigen::VectorXd&, const Eigen::VectorXd& v, Eigen::VectorXd* gamma) {
    *gamma = Eigen::Vector2d(0.0, 2.0 * v(0) * v(0));
  };
  system->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cc, 2));

  const Eigen::Vector2d q0(0.0, 0.0), v0(1.0, 0.0);
  integrator.Reset(*system, {0, 1}, 0.0, q0, v0);
  // The rows are dependent at the restart (x = 0), so Reset keeps "flat" and watches "curved"
  // (Integrator::NeedsIndependentRows): the particle moves with x = t, "curved" is violated by
  // x², and the step after which x² exceeds kDroppedRowToleranceFactor × projection_tol is
  // undone with a linear-solve failure naming the row.
  EXPECT_EQ(integrator.active_rows(), std::vector<int>{0});
  StepStatus status = StepStatus::kAccepted;
  while (status == StepStatus::kAccepted && integrator.t() < 1.0) status = integrator.Step(1.0);
  EXPECT_EQ(status, StepStatus::kLinearSolveFailure);
  const double tol =
      kDroppedRowToleranceFactor * std::max(options.projection_tol, options.newton_tol);
  EXPECT_GT(integrator.t(), 0.0);
  EXPECT_LE(integrator.q()(0) * integrator.q()(0), tol);  // the state of the last accepted step
  const std::string msg = integrator.failure_detail();
  std::printf("  %s\n", msg.c_str());
  EXPECT_NE(msg.find("curved"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dependent"), std::string::npos) << msg;
}

}  // namespace saltus::integrators::test_problems
