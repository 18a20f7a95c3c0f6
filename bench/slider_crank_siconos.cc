// slider_crank_siconos: the slider-crank with a translational clearance joint (Flores, Leine &
// Glocker, Multibody Syst. Dyn. 23 (2010) 165–190) as Siconos' example
// Mechanics/SliderCrank/SliderCrankMoreauJeanCombinedProjectionOSI models it, rebuilt with the
// Siconos 4.4 kernel API, so that bench/compare_slider_crank.py can compare Saltus with it over
// the whole run (the example's reference file is 1.5 MB; its first rows check this driver).
//
// Model (minimal coordinates q = (θ₁, θ₂, θ₃): crank, rod and slider angles; the slider's centre
// is the wrist pin, x = l₁ cos θ₁ + l₂ cos θ₂, y = l₁ sin θ₁ + l₂ sin θ₂; the crank is free):
//   M = [J₁ + (m₁/4 + m₂ + m₃) l₁², (m₂/2 + m₃) l₁ l₂ cos(θ₂ − θ₁), 0; sym, J₂ + (m₂/4 + m₃) l₂²,
//   0;
//        0, 0, J₃]
//   F_gyr = (m₂/2 + m₃) l₁ l₂ sin(θ₁ − θ₂) (θ̇₂², −θ̇₁², 0), F_int = g ((m₁/2 + m₂ + m₃) l₁ cos θ₁,
//   (m₂/2 + m₃) l₂ cos θ₂, 0) (Siconos: M q̈ + F_gyr + F_int = Hᵀλ)
//   corners k = 1..4 at (∓a, ±b) in the slider frame (1 upper left, 2 upper right, 3 lower left,
//   4 lower right), guide walls y = ±(b + c): gaps
//     g₁,₂ = b + c − (y ∓ a sin θ₃ + b cos θ₃),  g₃,₄ = b + c + (y ∓ a sin θ₃ − b cos θ₃),
//   tangential rows the corners' x; NewtonImpactFrictionNSL(e_N, 0, μ).
//   Data: l₁ = 0.153, l₂ = 0.306, a = 0.05, b = 0.025, c = 0.001 (m); m₁ = m₂ = 0.038,
//   m₃ = 0.076 (kg); J₁ = 7.4e-5, J₂ = 5.9e-4, J₃ = 2.7e-6 (kg m²); e_N = 0.4, μ = 0.01;
//   q(0) = 0, q̇(0) = (150, −75, 0).
// Simulation as in the example: MoreauJeanCombinedProjectionOSI(θ = 1/2), h = 1e-4, T = 0.2,
// FrictionContact(2, 2D enumeration, tolerance 1e-8, 100 iterations) at velocity level,
// MLCPProjectOnConstraints at position level, TimeSteppingCombinedProjection with 500
// projection iterations and constraint tolerances 1e-10.
//
// Usage: slider_crank_siconos [--h H] [--t-end T] [--trajectory FILE]
// stdout: key=value lines (status, message, steps, wall_seconds, cpu_seconds).
// --trajectory writes one row per step: t, θ₁, θ₂, θ₃, θ̇₁, θ̇₂, θ̇₃, g₁..g₄, p₁..p₄ (the normal
// impulses of the step) in %.17g.
// Exit codes: 0 finished; 2 bad command line; 3 Siconos threw.
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/kernel/BlockVector.hpp>
#include <siconos/kernel/FrictionContact.hpp>
#include <siconos/kernel/Interaction.hpp>
#include <siconos/kernel/LagrangianDS.hpp>
#include <siconos/kernel/LagrangianScleronomousR.hpp>
#include <siconos/kernel/MLCPProjectOnConstraints.hpp>
#include <siconos/kernel/MoreauJeanCombinedProjectionOSI.hpp>
#include <siconos/kernel/NewtonImpactFrictionNSL.hpp>
#include <siconos/kernel/NonSmoothDynamicalSystem.hpp>
#include <siconos/kernel/SiconosVector.hpp>
#include <siconos/kernel/SimpleMatrix.hpp>
#include <siconos/kernel/TimeDiscretisation.hpp>
#include <siconos/kernel/TimeSteppingCombinedProjection.hpp>

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

// Flores, Leine & Glocker (2010) Table 1, as Siconos' SliderCrankPlugin.cpp writes them.
constexpr double l1 = 0.1530, l2 = 0.3060, a = 0.05, b = 0.025, c = 0.001;
constexpr double m1 = 0.038, m2 = 0.038, m3 = 0.076, J1 = 7.4e-5, J2 = 5.9e-4, J3 = 2.7e-6;
constexpr double gravity = 9.81, e_N = 0.4, mu = 0.01;
constexpr double kRod = 0.5 * m2 + m3;  // (m₂/2 + m₃)

// Siconos plugin signatures (PluginTypes.hpp): FPtr7 mass, FPtr5 gyroscopic, FPtr6 internal.
// Matrices are column-major.
void Mass(unsigned int, double* q, double* M, unsigned int, double*) {
  const double m12 = kRod * l1 * l2 * std::cos(q[1] - q[0]);
  M[0] = J1 + (0.25 * m1 + m2 + m3) * l1 * l1, M[1] = m12, M[2] = 0;
  M[3] = m12, M[4] = J2 + (0.25 * m2 + m3) * l2 * l2, M[5] = 0;
  M[6] = 0, M[7] = 0, M[8] = J3;
}

void FGyr(unsigned int, double* q, double* v, double* f, unsigned int, double*) {
  const double s = kRod * l1 * l2 * std::sin(q[0] - q[1]);
  f[0] = s * v[1] * v[1], f[1] = -s * v[0] * v[0], f[2] = 0;
}

void JacobianFGyrq(unsigned int, double* q, double* v, double* J, unsigned int, double*) {
  const double k = kRod * l1 * l2 * std::cos(q[0] - q[1]);
  J[0] = k * v[1] * v[1], J[1] = -k * v[0] * v[0], J[2] = 0;
  J[3] = -k * v[1] * v[1], J[4] = k * v[0] * v[0], J[5] = 0;
  J[6] = 0, J[7] = 0, J[8] = 0;
}

void JacobianFGyrqDot(unsigned int, double* q, double* v, double* J, unsigned int, double*) {
  const double s = kRod * l1 * l2 * std::sin(q[0] - q[1]);
  J[0] = 0, J[1] = -2 * s * v[0], J[2] = 0;
  J[3] = 2 * s * v[1], J[4] = 0, J[5] = 0;
  J[6] = 0, J[7] = 0, J[8] = 0;
}

void FInt(double, unsigned int, double* q, double*, double* f, unsigned int, double*) {
  f[0] = (0.5 * m1 + m2 + m3) * gravity * l1 * std::cos(q[0]);
  f[1] = kRod * gravity * l2 * std::cos(q[1]);
  f[2] = 0;
}

void JacobianFIntq(double, unsigned int, double* q, double*, double* J, unsigned int, double*) {
  for (int i = 0; i < 9; ++i) J[i] = 0;
  J[0] = -(0.5 * m1 + m2 + m3) * gravity * l1 * std::sin(q[0]);
  J[4] = -kRod * gravity * l2 * std::sin(q[1]);
}

void JacobianFIntqDot(double, unsigned int, double*, double*, double* J, unsigned int, double*) {
  for (int i = 0; i < 9; ++i) J[i] = 0;
}

// Corner k (0..3): slider-frame point (sx a, sy b), wall on the side sy (normal −sy ŷ).
class CornerRelation : public LagrangianScleronomousR {
 public:
  explicit CornerRelation(int k) : sx_(k % 2 == 0 ? -1.0 : 1.0), sy_(k < 2 ? 1.0 : -1.0) {}

  void computeh(const BlockVector& q, BlockVector&, SiconosVector& y) override {
    const double t1 = q.getValue(0), t2 = q.getValue(1), t3 = q.getValue(2);
    const double py =
        l1 * std::sin(t1) + l2 * std::sin(t2) + sx_ * a * std::sin(t3) + sy_ * b * std::cos(t3);
    const double px =
        l1 * std::cos(t1) + l2 * std::cos(t2) + sx_ * a * std::cos(t3) - sy_ * b * std::sin(t3);
    y(0) = b + c - sy_ * py;
    if (y.size() > 1) y(1) = px;
  }

  void computeJachq(const BlockVector& q, BlockVector&) override {
    const double t1 = q.getValue(0), t2 = q.getValue(1), t3 = q.getValue(2);
    // ∂p_y/∂q and ∂p_x/∂q.
    const double dy[3] = {l1 * std::cos(t1), l2 * std::cos(t2),
                          sx_ * a * std::cos(t3) - sy_ * b * std::sin(t3)};
    const double dx[3] = {-l1 * std::sin(t1), -l2 * std::sin(t2),
                          -sx_ * a * std::sin(t3) - sy_ * b * std::cos(t3)};
    for (unsigned int j = 0; j < 3; ++j) {
      (*_jachq)(0, j) = -sy_ * dy[j];
      if (_jachq->size(0) > 1) (*_jachq)(1, j) = dx[j];
    }
  }

 private:
  double sx_, sy_;
};

struct Options {
  double h = 1e-4, t_end = 0.2;
  std::string trajectory_file;
};

[[noreturn]] void Usage(const std::string& error) {
  std::cerr << "slider_crank_siconos: " << error << "\n"
            << "usage: slider_crank_siconos [--h H] [--t-end T] [--trajectory FILE]\n";
  std::exit(2);
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) Usage("option " + arg + ": missing value");
    const std::string value = argv[++i];
    if (arg == "--trajectory") {
      o.trajectory_file = value;
      continue;
    }
    const std::optional<double> x = saltus::bench::ParseInRange(value);
    if (!x) Usage("option " + arg + ": expected a positive number, got '" + value + "'");
    if (arg == "--h") {
      o.h = *x;
    } else if (arg == "--t-end") {
      o.t_end = *x;
    } else {
      Usage("unknown option '" + arg + "'");
    }
  }
  return o;
}

std::shared_ptr<LagrangianDS> BuildSlider() {
  auto q0 = std::make_shared<SiconosVector>(3);
  q0->zero();
  auto v0 = std::make_shared<SiconosVector>(3);
  v0->zero();
  (*v0)(0) = 150.0, (*v0)(1) = -75.0;
  auto ds = std::make_shared<LagrangianDS>(q0, v0);
  ds->setComputeMassFunction(&Mass);
  ds->setComputeFGyrFunction(&FGyr);
  ds->setComputeJacobianFGyrqFunction(&JacobianFGyrq);
  ds->setComputeJacobianFGyrqDotFunction(&JacobianFGyrqDot);
  ds->setComputeFIntFunction(&FInt);
  ds->setComputeJacobianFIntqFunction(&JacobianFIntq);
  ds->setComputeJacobianFIntqDotFunction(&JacobianFIntqDot);
  return ds;
}

using Row = std::array<double, 15>;

Row Sample(double t, const LagrangianDS& ds,
           const std::array<std::shared_ptr<Interaction>, 4>& corners) {
  Row r{};
  r[0] = t;
  for (int i = 0; i < 3; ++i) r[1 + i] = (*ds.q())(i), r[4 + i] = (*ds.velocity())(i);
  for (int k = 0; k < 4; ++k) {
    r[7 + k] = (*corners[k]->y(0))(0);
    r[11 + k] = (*corners[k]->lambda(1))(0);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
  std::vector<Row> rows;
  std::string status = "finished", message;
  long steps = 0;
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  try {
    auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, o.t_end);
    auto slider = BuildSlider();
    nsds->insertDynamicalSystem(slider);
    std::array<std::shared_ptr<Interaction>, 4> corners;
    for (int k = 0; k < 4; ++k) {
      corners[k] =
          std::make_shared<Interaction>(std::make_shared<NewtonImpactFrictionNSL>(e_N, 0.0, mu, 2),
                                        std::make_shared<CornerRelation>(k));
      nsds->link(corners[k], slider);
    }
    auto impact = std::make_shared<FrictionContact>(2, SICONOS_FRICTION_2D_ENUM);
    impact->numericsSolverOptions()->dparam[SICONOS_DPARAM_TOL] = 1e-8;
    impact->numericsSolverOptions()->iparam[SICONOS_IPARAM_MAX_ITER] = 100;
    auto simulation = std::make_shared<TimeSteppingCombinedProjection>(
        nsds, std::make_shared<TimeDiscretisation>(0.0, o.h),
        std::make_shared<MoreauJeanCombinedProjectionOSI>(0.5), impact,
        std::make_shared<MLCPProjectOnConstraints>(), 2);
    simulation->setProjectionMaxIteration(500);
    simulation->setConstraintTolUnilateral(1e-10);
    simulation->setConstraintTol(1e-10);
    simulation->initialize();
    rows.push_back(Sample(0.0, *slider, corners));
    while (simulation->hasNextEvent()) {
      simulation->advanceToEvent();
      ++steps;
      rows.push_back(Sample(simulation->nextTime(), *slider, corners));
      simulation->processEvents();
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
      saltus::bench::WriteCsvRows(
          o.trajectory_file, "t,theta1,theta2,theta3,omega1,omega2,omega3,g1,g2,g3,g4,p1,p2,p3,p4",
          rows);
    } catch (const std::exception& e) {
      std::cerr << "slider_crank_siconos: " << e.what() << "\n";
      return 2;
    }
  }
  std::printf("engine=siconos\nstatus=%s\nmessage=%s\nh=%.17g\nt_end=%.17g\nsteps=%ld\n",
              status.c_str(), message.c_str(), o.h, o.t_end, steps);
  std::printf("wall_seconds=%.9g\ncpu_seconds=%.9g\n", wall, cpu);
  return status == "finished" ? 0 : 3;
}
