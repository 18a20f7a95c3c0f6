// woodpecker_siconos: the woodpecker toy's linearized model (Leine, Glocker & van Campen,
// Nonlinear Dynamics 31 (2003) 211–231) run by Siconos 4.4's Moreau–Jean time-stepping, as
// Siconos' example Mechanics/Woodpecker does (its Woodpecker.ref: θ = 1/2, h = 2e-5 s, 0.3 s).
// The Saltus side of the comparison is bench/woodpecker_saltus.cc; bench/compare_woodpecker.py
// runs both, interleaved.
//
// Model (written here with the kernel API, the same data as tests/events/woodpecker_model.h):
//   LagrangianLinearTIDS  q = (y, φ_M, φ_S), constant M, K = c_φ [0 0 0; 0 1 −1; 0 −1 1], C = 0,
//                         F_ext = −g (m_M + m_S, m_S l_M, m_S l_G)
//   three interactions    LagrangianLinearTIR (g_N, g_T) = H q + b (2 × 3), rows as in
//                         woodpecker_model.h, with NewtonImpactFrictionNSL(e_N, e_T = 0, μ = 0.3):
//                         beak e_N = 0.5, corners e_N = 0
//   simulation            TimeStepping + MoreauJeanOSI(θ) + FrictionContact(2) (Siconos' default
//                         2D solver, NSGS), step h
// The initial state is the published one (φ_M = −0.1036: the lower corner starts 8.8e-7 m inside
// the pole, which the reference keeps).
//
// Usage: woodpecker_siconos [--h H] [--theta θ] [--t-end T] [--trajectory FILE]
// stdout: key=value lines: engine, status, message, h, theta, t_end, steps, beak_impacts,
// contact_onsets, onsets.<contact>, beak_impact_times (the ends of the onset steps, ';'-joined),
// wall_seconds, cpu_seconds, final q and v.
// A contact onset is a step whose normal impulse is positive after a step where it was zero: the
// time-stepping counterpart of an impact or a contact closing. beak_impacts counts the beak's.
// --trajectory writes t,y,ydot,phi_M,phi_M_dot,phi_S,phi_S_dot (%.17g) every 1e-3 s (the steps
// whose time is nearest a multiple of 1e-3 s), recorded in memory during the run and written
// after it. The times cover building the model, initializing and the run, not the file.
// Exit codes: 0 finished; 2 bad command line; 3 Siconos threw.
#include <siconos/kernel/FrictionContact.hpp>
#include <siconos/kernel/Interaction.hpp>
#include <siconos/kernel/LagrangianLinearTIDS.hpp>
#include <siconos/kernel/LagrangianLinearTIR.hpp>
#include <siconos/kernel/MoreauJeanOSI.hpp>
#include <siconos/kernel/NewtonImpactFrictionNSL.hpp>
#include <siconos/kernel/NonSmoothDynamicalSystem.hpp>
#include <siconos/kernel/SiconosVector.hpp>
#include <siconos/kernel/SimpleMatrix.hpp>
#include <siconos/kernel/TimeDiscretisation.hpp>
#include <siconos/kernel/TimeStepping.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/driver_support.h"
#include "bench/siconos_support.h"

namespace {

using saltus::bench::ExceptionMessage;

// Parameters: ../shared/FRICTION.md "Woodpecker toy" (Siconos' WoodPeckerConsts.h).
constexpr double r_O = 0.0025, r_M = 0.0031, h_M = 0.0058, l_M = 0.010, l_G = 0.015, h_S = 0.02,
                 l_S = 0.0201;
constexpr double m_M = 0.0003, m_S = 0.0045, J_M = 5.0e-9, J_S = 7.0e-7, c_phi = 0.0056, g = 9.81,
                 mu = 0.3;
constexpr const char* kContactNames[3] = {"beak", "corner_up", "corner_down"};

struct Options {
  double h = 2e-5, theta = 0.5, t_end = 1.0;
  std::string trajectory_file;
};

[[noreturn]] void Usage(const std::string& error) {
  std::cerr << "woodpecker_siconos: " << error << "\n"
            << "usage: woodpecker_siconos [--h H] [--theta THETA] [--t-end T] "
               "[--trajectory FILE]\n";
  std::exit(2);
}

double ParseNumber(const std::string& flag, const std::string& text, double lo, double hi) {
  const std::optional<double> x = saltus::bench::ParseInRange(text, lo, hi);
  if (!x) {
    Usage("option " + flag + ": expected a number in (" + std::to_string(lo) + ", " +
          std::to_string(hi) + "], got '" + text + "'");
  }
  return *x;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) Usage("option " + arg + ": missing value");
    const std::string value = argv[++i];
    if (arg == "--h") {
      o.h = ParseNumber(arg, value, 0.0, 1.0);
    } else if (arg == "--theta") {
      o.theta = ParseNumber(arg, value, 0.0, 1.0);
    } else if (arg == "--t-end") {
      o.t_end = ParseNumber(arg, value, 0.0, 100.0);
    } else if (arg == "--trajectory") {
      o.trajectory_file = value;
    } else {
      Usage("unknown option '" + arg + "'");
    }
  }
  return o;
}

std::shared_ptr<LagrangianLinearTIDS> BuildBody() {
  auto q0 = std::make_shared<SiconosVector>(3);
  (*q0)(0) = 0.0, (*q0)(1) = -0.1036, (*q0)(2) = -0.2788;
  auto v0 = std::make_shared<SiconosVector>(3);
  (*v0)(0) = -0.3411, (*v0)(1) = 0.0, (*v0)(2) = -7.4583;
  auto M = std::make_shared<SimpleMatrix>(3, 3);
  (*M)(0, 0) = m_S + m_M, (*M)(0, 1) = m_S * l_M, (*M)(0, 2) = m_S * l_G;
  (*M)(1, 0) = m_S * l_M, (*M)(1, 1) = J_M + m_S * l_M * l_M, (*M)(1, 2) = m_S * l_M * l_G;
  (*M)(2, 0) = m_S * l_G, (*M)(2, 1) = m_S * l_M * l_G, (*M)(2, 2) = J_S + m_S * l_G * l_G;
  auto K = std::make_shared<SimpleMatrix>(3, 3);
  K->zero();
  (*K)(1, 1) = c_phi, (*K)(1, 2) = -c_phi, (*K)(2, 1) = -c_phi, (*K)(2, 2) = c_phi;
  auto C = std::make_shared<SimpleMatrix>(3, 3);
  C->zero();
  auto body = std::make_shared<LagrangianLinearTIDS>(q0, v0, M, K, C);
  auto weight = std::make_shared<SiconosVector>(3);
  (*weight)(0) = -(m_S + m_M) * g, (*weight)(1) = -m_S * l_M * g, (*weight)(2) = -m_S * l_G * g;
  body->setFExtPtr(weight);
  return body;
}

// Rows (g_N, g_T) of contact k: H (2 × 3) and b.
std::shared_ptr<Interaction> BuildContact(int k) {
  const std::array<std::array<double, 6>, 3> H = {
      {{0, 0, -h_S, 1, l_M, l_G - l_S}, {0, h_M, 0, 1, r_M, 0}, {0, -h_M, 0, 1, r_M, 0}}};
  const std::array<double, 3> b = {l_M + l_G - l_S - r_O, r_M - r_O, r_M - r_O};
  auto Hk = std::make_shared<SimpleMatrix>(2, 3);
  for (int j = 0; j < 6; ++j) (*Hk)(j / 3, j % 3) = H[k][j];
  auto bk = std::make_shared<SiconosVector>(2);
  (*bk)(0) = b[k], (*bk)(1) = 0.0;
  auto law = std::make_shared<NewtonImpactFrictionNSL>(k == 0 ? 0.5 : 0.0, 0.0, mu, 2);
  return std::make_shared<Interaction>(law, std::make_shared<LagrangianLinearTIR>(Hk, bk));
}

using Row = std::array<double, 7>;  // t, y, ẏ, φ_M, φ̇_M, φ_S, φ̇_S
constexpr const char* kHeader = "t,y,ydot,phi_M,phi_M_dot,phi_S,phi_S_dot";

Row Sample(double t, const LagrangianLinearTIDS& body) {
  const SiconosVector& q = *body.q();
  const SiconosVector& v = *body.velocity();
  return {t, q(0), v(0), q(1), v(1), q(2), v(2)};
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
  const long n_steps = std::lround(o.t_end / o.h);
  const long sample_every = std::max(1L, std::lround(1e-3 / o.h));
  std::vector<Row> rows;
  rows.reserve(static_cast<std::size_t>(n_steps / sample_every + 2));
  std::array<long, 3> onsets = {0, 0, 0};
  std::vector<double> beak_times;  // ends of the steps of the beak's onsets
  std::string status = "finished", message;
  long steps = 0;
  std::shared_ptr<LagrangianLinearTIDS> body;

  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  try {
    auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, o.t_end);
    body = BuildBody();
    nsds->insertDynamicalSystem(body);
    std::array<std::shared_ptr<Interaction>, 3> contacts;
    for (int k = 0; k < 3; ++k) {
      contacts[k] = BuildContact(k);
      nsds->link(contacts[k], body);
    }
    auto simulation = std::make_shared<TimeStepping>(
        nsds, std::make_shared<TimeDiscretisation>(0.0, o.h),
        std::make_shared<MoreauJeanOSI>(o.theta), std::make_shared<FrictionContact>(2));
    simulation->initialize();
    rows.push_back(Sample(0.0, *body));
    std::array<bool, 3> was_active = {false, false, false};
    while (steps < n_steps) {
      simulation->computeOneStep();
      ++steps;
      for (int k = 0; k < 3; ++k) {
        const bool active = (*contacts[k]->lambda(1))(0) > 0.0;
        if (active && !was_active[k]) {
          ++onsets[k];
          if (k == 0) beak_times.push_back(simulation->nextTime());
        }
        was_active[k] = active;
      }
      if (steps % sample_every == 0) rows.push_back(Sample(simulation->nextTime(), *body));
      simulation->nextStep();
    }
  } catch (const std::exception& e) {
    status = "error";
    message = ExceptionMessage(e);
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;

  if (!o.trajectory_file.empty()) {
    try {
      saltus::bench::WriteCsvRows(o.trajectory_file, kHeader, rows);
    } catch (const std::exception& e) {
      std::cerr << "woodpecker_siconos: " << e.what() << "\n";
      return 2;
    }
  }
  std::printf("engine=siconos\nstatus=%s\nmessage=%s\nh=%.17g\ntheta=%.17g\nt_end=%.17g\n",
              status.c_str(), message.c_str(), o.h, o.theta, o.t_end);
  std::printf("steps=%ld\nbeak_impacts=%ld\ncontact_onsets=%ld\n", steps, onsets[0],
              onsets[0] + onsets[1] + onsets[2]);
  for (int k = 0; k < 3; ++k) std::printf("onsets.%s=%ld\n", kContactNames[k], onsets[k]);
  std::printf("beak_impact_times=");
  for (std::size_t i = 0; i < beak_times.size(); ++i) {
    std::printf(i ? ";%.17g" : "%.17g", beak_times[i]);
  }
  std::printf("\n");
  std::printf("wall_seconds=%.9g\ncpu_seconds=%.9g\n", wall, cpu);
  if (body) {
    const Row last = Sample(o.t_end, *body);
    std::printf("final_y=%.17g\nfinal_phi_M=%.17g\nfinal_phi_S=%.17g\n", last[1], last[3], last[5]);
  }
  return status == "finished" ? 0 : 3;
}
