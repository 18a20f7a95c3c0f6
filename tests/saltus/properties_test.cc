// Randomized property tests (issue 20 §7): seeded scenes of planar balls, rocking blocks,
// slider-cranks against a stop and small piles, each run through the public facade, checking
//   energy        at every impact T + V after ≤ before (to round-off) when all rows of the
//                 impact share one restitution coefficient, and = before to 1e-12 relative to T
//                 when that coefficient is 1; impacts of rows with different coefficients may
//                 gain energy (Newton's law is not energetically consistent there: Glocker 2013,
//                 contact/impact_problem.h) and are counted and printed, not hidden;
//   gaps          every unilateral gap ≥ −τ₀ at every accepted step and after every event;
//   determinism   a second run of the same scene gives bit-identical events and final state;
//   no stall      the run finishes (status finished) within its step budget.
// Seeds are fixed, so a failure reproduces; the printed scene text reproduces it in the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "saltus/saltus.h"

namespace saltus {
namespace {

using Eigen::VectorXd;
using Rng = std::mt19937_64;

double Uniform(Rng& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

std::string Num(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// A scene with the restitution coefficient of each contact by name.
struct RandomScene {
  std::string yaml;
  std::map<std::string, double> restitution;
};

std::string SimulationSection(double t_end) {
  return "simulation:\n  t_end: " + Num(t_end) +
         "\n  rtol: 1.0e-8\n  atol: 1.0e-10\n  output_step: 0.01\n";
}

// Floor y = 0 and walls x = ±w as disk_line contacts of every ball.
void AddBoxContacts(const std::string& ball, double r, double w, double e, RandomScene* s,
                    std::ostringstream& c) {
  const struct {
    const char* name;
    double px, nx, ny;
  } sides[] = {{"floor", 0, 0, 1}, {"left", -w, 1, 0}, {"right", w, -1, 0}};
  for (const auto& side : sides) {
    const std::string name = ball + "_" + side.name;
    c << "  - {name: " << name << ", type: disk_line, body_a: ground, body_b: " << ball
      << ", point_a: [" << Num(side.px) << ", 0], normal_a: [" << Num(side.nx) << ", "
      << Num(side.ny) << "], radius_b: " << Num(r) << ", restitution: " << Num(e) << "}\n";
    s->restitution[name] = e;
  }
}

// n balls in a box of half-width w, random radii, masses, positions (no overlap) and velocities;
// e: one coefficient for all contacts, or (e < 0) a random one per contact.
RandomScene Balls(Rng& rng, int n, double e, double gravity) {
  RandomScene s;
  const double w = 1.0;
  std::ostringstream bodies, contacts;
  std::vector<double> x, y, r;
  for (int i = 0; i < n; ++i) {
    for (int attempt = 0; attempt < 1000; ++attempt) {
      const double ri = Uniform(rng, 0.05, 0.15);
      const double xi = Uniform(rng, -w + ri + 0.01, w - ri - 0.01);
      const double yi = Uniform(rng, ri + 0.01, 1.5);
      bool free = true;
      for (int j = 0; j < i; ++j) {
        free &= std::hypot(xi - x[j], yi - y[j]) > ri + r[j] + 0.01;
      }
      if (free) {
        x.push_back(xi), y.push_back(yi), r.push_back(ri);
        break;
      }
    }
  }
  for (std::size_t i = 0; i < r.size(); ++i) {
    const double m = Uniform(rng, 0.2, 2.0);
    const std::string name = "b" + std::to_string(i);
    bodies << "  - {name: " << name << ", mass: " << Num(m)
           << ", inertia: " << Num(0.4 * m * r[i] * r[i]) << ", position: [" << Num(x[i]) << ", "
           << Num(y[i]) << ", 0], velocity: [" << Num(Uniform(rng, -2, 2)) << ", "
           << Num(Uniform(rng, -2, 2)) << ", 0]}\n";
    AddBoxContacts(name, r[i], w, e >= 0 ? e : Uniform(rng, 0, 1), &s, contacts);
    for (std::size_t j = 0; j < i; ++j) {
      const std::string pair = "b" + std::to_string(j) + "_" + name;
      const double eij = e >= 0 ? e : Uniform(rng, 0, 1);
      contacts << "  - {name: " << pair << ", type: disk_disk, body_a: b" << j
               << ", body_b: " << name << ", radius_a: " << Num(r[j]) << ", radius_b: " << Num(r[i])
               << ", restitution: " << Num(eij) << "}\n";
      s.restitution[pair] = eij;
    }
  }
  s.yaml = "scene: balls\ngravity: [0, " + Num(-gravity) + "]\nbodies:\n" + bodies.str() +
           "contacts:\n" + contacts.str() + SimulationSection(1.0);
  return s;
}

// A w × h block released tilted above the floor, falling on its corners.
RandomScene Block(Rng& rng, double e) {
  RandomScene s;
  const double w = Uniform(rng, 0.1, 0.6), h = Uniform(rng, 0.1, 0.6), m = Uniform(rng, 0.5, 3);
  const double theta = Uniform(rng, -0.4, 0.4);
  const double reach = 0.5 * (w * std::abs(std::sin(theta)) + h * std::cos(theta));
  std::ostringstream c;
  c << "scene: block\ngravity: [0, -9.81]\nbodies:\n  - {name: block, mass: " << Num(m)
    << ", inertia: " << Num(m * (w * w + h * h) / 12) << ", position: [0, "
    << Num(reach + Uniform(rng, 0.01, 0.2)) << ", " << Num(theta) << "], velocity: [0, 0, "
    << Num(Uniform(rng, -1, 1)) << "]}\ncontacts:\n";
  for (const auto& [name, sx] : {std::pair{"left_corner", -1.0}, std::pair{"right_corner", 1.0}}) {
    c << "  - {name: " << name << ", type: point_line, body_a: ground, body_b: block, "
      << "normal_a: [0, 1], point_b: [" << Num(sx * w / 2) << ", " << Num(-h / 2)
      << "], restitution: " << Num(e) << "}\n";
    s.restitution[name] = e;
  }
  s.yaml = c.str() + SimulationSection(1.0);
  return s;
}

// The slider-crank of examples/slider_crank_stop.yaml (crank 0.2 m, rod 0.6 m) with a random
// crank speed, stop position and restitution; the initial state is assembled by the loader.
RandomScene SliderCrank(Rng& rng, double e) {
  RandomScene s;
  const double omega = -Uniform(rng, 5, 15);  // clockwise: the slider moves right
  const double stop = Uniform(rng, 0.66, 0.78);
  const double xs = std::sqrt(0.6 * 0.6 - 0.2 * 0.2);
  std::ostringstream c;
  c << "scene: slider_crank\ngravity: [0, -9.81]\nbodies:\n"
    << "  - {name: crank, mass: 1, inertia: 0.0033333333333333333, position: [0, 0.1, "
    << Num(M_PI / 2) << "], velocity: [" << Num(-0.1 * omega) << ", 0, " << Num(omega) << "]}\n"
    << "  - {name: rod, mass: 2, inertia: 0.06, position: [" << Num(xs / 2) << ", 0.1, "
    << Num(std::atan2(-0.2, xs)) << "], velocity: [" << Num(-0.2 * omega) << ", 0, 0]}\n"
    << "  - {name: slider, mass: 0.5, inertia: 0.001, position: [" << Num(xs)
    << ", 0, 0], velocity: [" << Num(-0.2 * omega) << ", 0, 0]}\n"
    << "joints:\n"
    << "  - {name: crank_pivot, type: revolute, body_a: ground, body_b: crank, point_a: [0, 0], "
       "point_b: [-0.1, 0]}\n"
    << "  - {name: crank_pin, type: revolute, body_a: crank, body_b: rod, point_a: [0.1, 0], "
       "point_b: [-0.3, 0]}\n"
    << "  - {name: wrist_pin, type: revolute, body_a: rod, body_b: slider, point_a: [0.3, 0], "
       "point_b: [0, 0]}\n"
    << "  - {name: slide, type: prismatic, body_a: ground, body_b: slider, point_a: [0, 0], "
       "point_b: [0, 0], axis_a: [1, 0], angle0: 0}\n"
    << "contacts:\n  - {name: stop, type: point_line, body_a: ground, body_b: slider, "
    << "point_a: [" << Num(stop + 0.05) << ", 0], normal_a: [-1, 0], point_b: [0.05, 0], "
    << "restitution: " << Num(e) << "}\n";
  s.restitution["stop"] = e;
  // A looser tolerance than the others: the drift of the joints at velocity level is then
  // larger (≈ 1e-7 m/s), which is what the impact has to remove without doing work.
  s.yaml = c.str() +
           "simulation:\n  t_end: 1\n  rtol: 1.0e-6\n  atol: 1.0e-8\n"
           "  output_step: 0.01\n";
  return s;
}

// A small pile: n balls of equal radius dropped in a narrow box, jittered.
RandomScene Pile(Rng& rng, int n, double e) {
  RandomScene s;
  const double r = 0.05, w = 0.16;
  std::ostringstream bodies, contacts;
  for (int i = 0; i < n; ++i) {
    const std::string name = "b" + std::to_string(i);
    bodies << "  - {name: " << name << ", mass: 1, inertia: " << Num(0.4 * r * r) << ", position: ["
           << Num(Uniform(rng, -0.08, 0.08)) << ", " << Num(r + 0.005 + i * (2 * r + 0.01))
           << ", 0]}\n";
    AddBoxContacts(name, r, w, e, &s, contacts);
    for (int j = 0; j < i; ++j) {
      const std::string pair = "b" + std::to_string(j) + "_" + name;
      contacts << "  - {name: " << pair << ", type: disk_disk, body_a: b" << j
               << ", body_b: " << name << ", radius_a: " << Num(r) << ", radius_b: " << Num(r)
               << ", restitution: " << Num(e) << "}\n";
      s.restitution[pair] = e;
    }
  }
  s.yaml = "scene: pile\ngravity: [0, -9.81]\nbodies:\n" + bodies.str() + "contacts:\n" +
           contacts.str() + SimulationSection(1.0) + "  restitution_threshold: 0.01\n";
  return s;
}

// What one run showed.
struct Findings {
  RunResult result;
  std::vector<Event> events;
  VectorXd q, v;
  double min_gap = 1e300;
  long impacts = 0;
  long mixed_gains = 0;           // impacts of rows with different e that gained energy
  double worst_e1 = 0;            // largest |ΔE|/T over impacts whose rows all have e = 1
  double worst_gain_uniform = 0;  // largest ΔE/E over impacts whose rows share e < 1
};

Findings Run(const RandomScene& scene) {
  const Model model = Model::FromSceneText(scene.yaml, "random.yaml");
  Simulation sim(model);
  const std::vector<std::string> names = model.ConstraintNames();
  const std::vector<int> unilateral = model.UnilateralRows();
  const double tau0 = sim.options().thresholds.tau0;
  Findings f;
  const auto gaps = [&](double t, const VectorXd& q) {
    if (unilateral.empty()) return;
    VectorXd g;
    model.system().ConstraintValues(t, q, unilateral, &g);
    f.min_gap = std::min(f.min_gap, g.minCoeff());
  };
  sim.AddStepObserver([&](double t, const VectorXd& q, const VectorXd&) { gaps(t, q); });
  sim.AddEventObserver([&](const Event& e, const VectorXd& q, const VectorXd& vm, const VectorXd&) {
    gaps(e.t, q);
    f.events.push_back(e);
    if (e.kind != EventKind::kImpact) return;
    ++f.impacts;
    double e_min = 1, e_max = 0;
    for (int row : e.rows) {
      const double c = scene.restitution.at(names[static_cast<std::size_t>(row)]);
      e_min = std::min(e_min, c), e_max = std::max(e_max, c);
    }
    const double gain = e.energy_after - e.energy_before;
    const double T = model.system().KineticEnergy(q, vm);
    if (e_min < e_max) {
      f.mixed_gains += gain > 1e-12 * std::abs(e.energy_before);
    } else if (e_min == 1.0) {
      f.worst_e1 = std::max(f.worst_e1, std::abs(gain) / T);
    } else {
      f.worst_gain_uniform = std::max(f.worst_gain_uniform, gain / std::max(T, 1e-300));
    }
  });
  f.result = sim.AdvanceTo(model.default_t_end());
  f.q = sim.q();
  f.v = sim.v();
  EXPECT_GE(sim.stats().min_gap_after_projection, -tau0);
  EXPECT_GE(f.min_gap, -tau0);
  return f;
}

// Number of seeds of a test: `n` in the suite (fast), or SALTUS_PROPERTY_SEEDS for a longer sweep
// (e.g. SALTUS_PROPERTY_SEEDS=60 saltus_properties_test: 10x the scenes).
std::uint64_t Seeds(std::uint64_t n) {
  const char* env = std::getenv("SALTUS_PROPERTY_SEEDS");
  return env != nullptr ? std::max<std::uint64_t>(1, std::strtoull(env, nullptr, 10)) : n;
}

// Runs a scene twice and checks every property; returns the findings of the first run.
Findings CheckProperties(const RandomScene& scene) {
  SCOPED_TRACE("scene:\n" + scene.yaml);
  const Findings a = Run(scene);
  EXPECT_EQ(a.result.status, RunStatus::kFinished) << a.result.message;
  // e = 1: T conserved to round-off; the impact is one LCP with entries O(1), solved to
  // ~1e-15, and the removed joint drift costs ½ δᵀ M δ ≈ 1e-14 relative (impact_problem.h).
  EXPECT_LE(a.worst_e1, 1e-12);
  // One coefficient e < 1 for all rows of an impact: dissipative up to round-off.
  EXPECT_LE(a.worst_gain_uniform, 1e-12);
  const Findings b = Run(scene);
  EXPECT_EQ(a.q, b.q);  // exact determinism check
  EXPECT_EQ(a.v, b.v);
  EXPECT_EQ(a.events.size(), b.events.size());
  for (std::size_t k = 0; k < std::min(a.events.size(), b.events.size()); ++k) {
    EXPECT_EQ(a.events[k].t, b.events[k].t);
    EXPECT_EQ(a.events[k].rows, b.events[k].rows);
  }
  return a;
}

TEST(PropertiesTest, PlanarBallsElasticConserveEnergyAtEveryImpact) {
  long impacts = 0;
  double worst = 0;
  for (std::uint64_t seed = 1000; seed < 1000 + Seeds(6); ++seed) {
    Rng rng(seed);
    const Findings f = CheckProperties(Balls(rng, 3, 1.0, seed % 2 ? 9.81 : 0.0));
    impacts += f.impacts;
    worst = std::max(worst, f.worst_e1);
  }
  std::printf("e = 1 balls: %ld impacts, largest |dE|/T %.3g\n", impacts, worst);
  EXPECT_GT(impacts, 20);  // the property was exercised
}

TEST(PropertiesTest, PlanarBallsWithOneCoefficientDissipate) {
  for (std::uint64_t seed = 11000; seed < 11000 + Seeds(5); ++seed) {
    Rng rng(seed);
    CheckProperties(Balls(rng, 3, Uniform(rng, 0.2, 0.95), 9.81));
  }
}

TEST(PropertiesTest, MixedCoefficientsAreReportedNotHidden) {
  long mixed = 0, impacts = 0;
  for (std::uint64_t seed = 21000; seed < 21000 + Seeds(5); ++seed) {
    Rng rng(seed);
    const Findings f = CheckProperties(Balls(rng, 4, -1.0, 9.81));
    mixed += f.mixed_gains;
    impacts += f.impacts;
  }
  std::printf("mixed restitution: %ld of %ld impacts gained energy (Glocker 2013)\n", mixed,
              impacts);
}

TEST(PropertiesTest, RockingBlocks) {
  for (std::uint64_t seed = 31000; seed < 31000 + Seeds(6); ++seed) {
    Rng rng(seed);
    CheckProperties(Block(rng, seed % 3 == 0 ? 1.0 : Uniform(rng, 0, 0.9)));
  }
}

TEST(PropertiesTest, SliderCranksAgainstAStopElastic) {
  long impacts = 0;
  double worst = 0;
  for (std::uint64_t seed = 41000; seed < 41000 + Seeds(6); ++seed) {
    Rng rng(seed);
    const Findings f = CheckProperties(SliderCrank(rng, seed % 2 ? 1.0 : Uniform(rng, 0.3, 0.9)));
    impacts += f.impacts;
    worst = std::max(worst, f.worst_e1);
  }
  std::printf("slider-cranks: %ld impacts, largest |dE|/T at e = 1 %.3g\n", impacts, worst);
  EXPECT_GT(impacts, 6);
}

TEST(PropertiesTest, SmallPilesSettle) {
  for (std::uint64_t seed = 51000; seed < 51000 + Seeds(3); ++seed) {
    Rng rng(seed);
    CheckProperties(Pile(rng, 4, 0.5));
  }
}

}  // namespace
}  // namespace saltus
