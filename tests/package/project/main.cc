// Uses the installed package: a ball dropped from 1 m (gap 0.9 m) onto the floor; prints the
// first impact time and exits 0 if it matches √(2·0.9/g) to 1e-9 s (exact free flight, see
// tests/saltus/saltus_test.cc).
#include <cmath>
#include <cstdio>

#include "saltus/saltus.h"

int main() {
  const saltus::Model model = saltus::Model::FromSceneText(
      "scene: ball\n"
      "bodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
      "contacts: [{name: floor, type: disk_line, body_a: ground, body_b: ball,"
      " normal_a: [0, 1], radius_b: 0.1, restitution: 0.9}]\n"
      "simulation: {t_end: 1, rtol: 1.0e-8, atol: 1.0e-10}\n");
  saltus::Simulation sim(model);
  const saltus::Trajectory traj = sim.Run(0.5);
  if (traj.events.empty()) return 1;
  const double expected = std::sqrt(2 * 0.9 / 9.81);
  std::printf("saltus %s: first impact at t = %.12f s (closed form %.12f s)\n",
              saltus::Version().c_str(), traj.events[0].t, expected);
  return std::abs(traj.events[0].t - expected) < 1e-9 ? 0 : 1;
}
