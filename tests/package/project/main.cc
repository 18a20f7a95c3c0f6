// Uses the installed package: a ball dropped from 1 m (gap 0.9 m) onto the floor, once from a
// scene text and once built in code with saltus::SpatialBuilder (saltus/builder.h); prints the
// first impact times and exits 0 if both match √(2·0.9/g) to 1e-9 s (exact free flight, see
// tests/saltus/saltus_test.cc).
#include <cmath>
#include <cstdio>

#include "saltus/saltus.h"

namespace {

double FirstImpact(const saltus::Model& model, const saltus::SimulationOptions& options) {
  saltus::Simulation sim(model, options);
  const saltus::Trajectory traj = sim.Run(0.5);
  return traj.events.empty() ? -1.0 : traj.events[0].t;
}

saltus::Model BuiltInCode() {
  saltus::SpatialBuilder b;
  b.SetGravity({0, 0, -9.81});
  saltus::SpatialBody ball;
  ball.name = "ball";
  ball.inertia = 0.004 * Eigen::Matrix3d::Identity();
  ball.position = {0, 0, 1};
  b.AddBody(ball);
  b.AddShape({.name = "floor", .type = "plane"});
  b.AddShape({.name = "ball_shape", .type = "sphere", .body = "ball", .radius = 0.1});
  b.AddContactPair("floor", "ball_shape", 0.9);
  return b.Build();
}

int Run() {
  const saltus::Model scene = saltus::Model::FromSceneText(
      "scene: ball\n"
      "bodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
      "contacts: [{name: floor, type: disk_line, body_a: ground, body_b: ball,"
      " normal_a: [0, 1], radius_b: 0.1, restitution: 0.9}]\n"
      "simulation: {t_end: 1, rtol: 1.0e-8, atol: 1.0e-10}\n");
  const double expected = std::sqrt(2 * 0.9 / 9.81);
  const double from_scene = FirstImpact(scene, scene.default_options());
  const double built = FirstImpact(BuiltInCode(), scene.default_options());
  std::printf(
      "saltus %s: first impact at t = %.12f s (scene), %.12f s (SpatialBuilder), "
      "closed form %.12f s\n",
      saltus::Version().c_str(), from_scene, built, expected);
  return std::abs(from_scene - expected) < 1e-9 && std::abs(built - expected) < 1e-9 ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return Run();
  } catch (const saltus::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
