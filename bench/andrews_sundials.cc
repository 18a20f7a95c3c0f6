// Andrews' squeezing mechanism (examples/sets/scenes/andrews.yaml, t = 0 … 0.03 s) with Saltus's
// integrators and with SUNDIALS 6 (issue 19 §3), all on the same model in one process:
//   saltus <integrator>  the event loop (events::Simulation) with the scene, rtol = atol = tol;
//   cvode_adams          CVODE, Adams–Moulton with fixed-point iteration, on the index-1 ODE
//                        q̇ = v, v̇ = a(q, v), a from Saltus's KKT solve (ConstrainedDynamics);
//   cvode_bdf            CVODE, BDF with Newton and a dense difference-quotient Jacobian, same ODE;
//   ida                  IDA on the index-1 DAE in y = (q, v, λ) (Hairer & Wanner II, VII.1):
//                          q̇ − v = 0,  M v̇ − F(q, v) − Gᵀλ = 0,  G v̇ + γ(q, v) = 0,
//                        λ excluded from the error test (IDASetSuppressAlg), dense Jacobian by
//                        difference quotients.
// The ODE and DAE rows are the scene's 20 revolute rows; M, F, G and γ are the planar model's.
// Neither SUNDIALS form projects, so its positions drift by the integration error; the drift
// max |g| at t = 0.03 is printed beside the error.
//
// Error: max over the seven relative angles (β, Θ, γ, Φ, δ, Ω, ε) of |angle − reference| at
// t = 0.03, the reference being the Test Set's PSIDE solution (rtol = atol = 1e-14, good to about
// 10 digits) stored in the scene's andrews_reference.csv (absolute body angles; the relative
// angles are θ1, θ2 − θ1, θ3, θ4 − θ5, θ5, θ6 − θ7, θ7 as in andrews.yaml's header).
// CPU time: process CPU time of one run from the initial state to 0.03 s, each solver's per-run
// set-up included (a new events::Simulation; SUNDIALS' Create, Init and linear solver), the
// minimum over --repeats interleaved repetitions.
//
// Output: CSV on stdout, one row per (solver, tol): solver,tol,error,cpu_ms,steps,rhs,max_g.
// bench/compare_sundials.py runs this and picks each solver's cheapest run at equal error.
//
// The event loop scans witness functions at `event_samples` interior points of every step
// (events/simulation.h), each an interpolation; the scene has no contact, so nothing watches
// them. `--saltus dop853@0` runs DOP853 with event_samples = 0: the loop then interpolates only at
// the step ends, which needs none of DOP853's three dense-output stages (explicit_runge_kutta.h,
// "Lazy dense-output stages"); the step sequence and the result are the same.
//
// Usage: andrews_sundials [--repeats N] [--tols 1e-4,1e-5,...] [--saltus
// dopri5,phem56,dop853@0,...]
//                         [--sundials cvode_adams,cvode_bdf,ida] [--projection-tol 1e-10]
//                         [--safety S]
// (--saltus none or --sundials none runs only the other side; --projection-tol sets Saltus's
// projection threshold, IntegratorOptions::projection_tol, default the library's 1e-4; --safety
// the step-size controller's safety factor of Saltus's integrators, default theirs.)
#include <cvode/cvode.h>
#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "events/simulation.h"
#include "integrators/integrator.h"
#include "tools/scene.h"

namespace saltus::bench {
namespace {

using Eigen::Map;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using Angles = std::array<double, 7>;

constexpr double kTEnd = 0.03;

std::string SceneDir() {
  const char* dir = std::getenv("SALTUS_SOURCE_DIR");
  return std::string(dir != nullptr ? dir : SALTUS_SOURCE_DIR) + "/examples/sets/scenes/";
}

// The seven relative angles from the absolute body angles θ1 … θ7.
Angles RelativeAngles(const std::array<double, 7>& th) {
  return {th[0], th[1] - th[0], th[2], th[3] - th[4], th[4], th[5] - th[6], th[6]};
}
Angles AnglesOf(const VectorXd& q) {
  std::array<double, 7> th;
  for (int b = 0; b < 7; ++b) th[b] = q(3 * b + 2);
  return RelativeAngles(th);
}

// The row t = 0.03 of andrews_reference.csv (columns t, then x, y, θ of b1 … b7).
Angles ReferenceAngles() {
  std::ifstream in(SceneDir() + "andrews_reference.csv");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<double> cols;
    std::stringstream ss(line);
    std::string cell;
    try {
      while (std::getline(ss, cell, ',')) cols.push_back(std::stod(cell));
    } catch (const std::invalid_argument&) {
      continue;  // the header
    }
    if (cols.size() == 22 && std::abs(cols[0] - kTEnd) < 1e-15) {
      std::array<double, 7> th;
      for (int b = 0; b < 7; ++b) th[b] = cols[1 + 3 * b + 2];  // θ of body b
      return RelativeAngles(th);
    }
  }
  throw std::runtime_error("andrews_reference.csv: no row at t = 0.03");
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Result {
  bool ok = false;
  VectorXd q;
  long steps = 0, rhs = 0;
};

// The model shared by every solver: the scene's system, its rows and initial state.
struct Model {
  tools::Scene scene = tools::LoadSceneFile(SceneDir() + "andrews.yaml");
  tools::SceneSystem built = tools::BuildSceneSystem(scene);
  const engine::MechanicalSystem& sys = *built.system;
  std::vector<int> rows = [this] {
    std::vector<int> r(static_cast<std::size_t>(sys.num_constraints()));
    std::iota(r.begin(), r.end(), 0);
    return r;
  }();
  int n = sys.nv();                           // 21 (planar: q̇ = v)
  int m = static_cast<int>(rows.size());      // 20
  engine::ConstrainedDynamics dynamics{sys};  // the KKT solve of the ODE's right-hand side
  VectorXd q, v, vdot, lambda, F, gamma;
  MatrixXd M, G;

  double MaxG(const VectorXd& q_end) {
    VectorXd g;
    sys.ConstraintValues(kTEnd, q_end, rows, &g);
    return g.cwiseAbs().maxCoeff();
  }
};

// `event_samples` < 0 keeps the scene's (the library default, 4); `safety` ≤ 0 the integrator's.
Result RunSaltus(Model& model, const std::string& integrator, double tol, double projection_tol,
                 int event_samples, double safety) {
  tools::Scene scene = model.scene;
  if (safety > 0) scene.options.integrator_options.safety = safety;
  scene.options.output_step = 0.0;
  if (event_samples >= 0) scene.options.event_samples = event_samples;
  scene.options.integrator = integrator;
  // The first formulation the integrator table lists: index1 for dopri5 and dop853, index2 for
  // hem5 and phem56.
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    if (e.name == integrator) scene.options.integrator_options.formulation = e.formulations.front();
  }
  scene.options.integrator_options.rtol = tol;
  scene.options.integrator_options.atol = tol;
  scene.options.integrator_options.projection_tol = projection_tol;
  events::Simulation sim(model.built.system, scene.options);
  sim.SetState(0.0, model.built.q0, model.built.v0);
  Result r;
  r.ok = sim.AdvanceTo(kTEnd).status == events::RunStatus::kFinished;
  r.q = sim.q();
  r.steps = sim.stats().integrator.accepted_steps;
  r.rhs = sim.stats().integrator.rhs_evaluations;
  return r;
}

// ---- CVODE on the index-1 ODE ------------------------------------------------------------------

int OdeRhs(sunrealtype t, N_Vector y, N_Vector ydot, void* data) {
  Model& model = *static_cast<Model*>(data);
  const int n = model.n;
  const Map<const VectorXd> all(N_VGetArrayPointer(y), 2 * n);
  model.q = all.head(n);  // copied into the model's vectors: no allocation per evaluation
  model.v = all.tail(n);
  const engine::DynamicsStatus s =
      model.dynamics.Solve(t, model.q, model.v, model.rows, &model.vdot, &model.lambda);
  Map<VectorXd> out(N_VGetArrayPointer(ydot), 2 * n);
  out.head(n) = model.v;
  out.tail(n) = model.vdot;
  return s.ok ? 0 : 1;  // 1: recoverable, CVODE retries with a smaller step
}

// y0 = (q0, v0) in a new serial vector.
N_Vector InitialState(Model& model, int size, SUNContext ctx) {
  N_Vector y = N_VNew_Serial(size, ctx);
  Map<VectorXd> all(N_VGetArrayPointer(y), size);
  all.setZero();
  all.head(model.n) = model.built.q0;
  all.segment(model.n, model.n) = model.built.v0;
  return y;
}

void Check(int flag, const char* what) {
  if (flag < 0) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(flag));
}

Result RunCvode(Model& model, bool bdf, double tol) {
  SUNContext ctx;
  Check(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
  const int size = 2 * model.n;
  N_Vector y = InitialState(model, size, ctx);
  void* mem = CVodeCreate(bdf ? CV_BDF : CV_ADAMS, ctx);
  SUNMatrix A = nullptr;
  SUNLinearSolver LS = nullptr;
  SUNNonlinearSolver NLS = nullptr;
  Check(CVodeInit(mem, OdeRhs, 0.0, y), "CVodeInit");
  Check(CVodeSStolerances(mem, tol, tol), "CVodeSStolerances");
  Check(CVodeSetUserData(mem, &model), "CVodeSetUserData");
  Check(CVodeSetMaxNumSteps(mem, 1000000), "CVodeSetMaxNumSteps");
  if (bdf) {
    A = SUNDenseMatrix(size, size, ctx);
    LS = SUNLinSol_Dense(y, A, ctx);
    Check(CVodeSetLinearSolver(mem, LS, A), "CVodeSetLinearSolver");
  } else {
    NLS = SUNNonlinSol_FixedPoint(y, 0, ctx);
    Check(CVodeSetNonlinearSolver(mem, NLS), "CVodeSetNonlinearSolver");
  }
  sunrealtype t = 0;
  Result r;
  r.ok = CVode(mem, kTEnd, y, &t, CV_NORMAL) >= 0;
  r.q = Map<VectorXd>(N_VGetArrayPointer(y), size).head(model.n);
  long steps = 0, rhs = 0;
  CVodeGetNumSteps(mem, &steps);
  CVodeGetNumRhsEvals(mem, &rhs);
  long lin_rhs = 0;
  if (bdf) CVodeGetNumLinRhsEvals(mem, &lin_rhs);
  r.steps = steps;
  r.rhs = rhs + lin_rhs;
  CVodeFree(&mem);
  if (NLS != nullptr) SUNNonlinSolFree(NLS);
  if (LS != nullptr) SUNLinSolFree(LS);
  if (A != nullptr) SUNMatDestroy(A);
  N_VDestroy(y);
  SUNContext_Free(&ctx);
  return r;
}

// ---- IDA on the index-1 DAE --------------------------------------------------------------------

int DaeResidual(sunrealtype t, N_Vector yy, N_Vector yp, N_Vector res, void* data) {
  Model& model = *static_cast<Model*>(data);
  const int n = model.n, m = model.m;
  const Map<const VectorXd> y(N_VGetArrayPointer(yy), 2 * n + m);
  const Map<const VectorXd> dy(N_VGetArrayPointer(yp), 2 * n + m);
  model.q = y.head(n);
  model.v = y.segment(n, n);
  const VectorXd& q = model.q;
  const VectorXd& v = model.v;
  model.sys.MassMatrix(q, &model.M);
  model.sys.Forces(t, q, v, &model.F);
  model.sys.ConstraintJacobian(t, q, model.rows, &model.G);
  model.sys.ConstraintGamma(t, q, v, model.rows, &model.gamma);
  Map<VectorXd> r(N_VGetArrayPointer(res), 2 * n + m);
  r.head(n) = dy.head(n) - v;
  r.segment(n, n) = model.M * dy.segment(n, n) - model.F - model.G.transpose() * y.tail(m);
  r.tail(m) = model.G * dy.segment(n, n) + model.gamma;
  return 0;
}

Result RunIda(Model& model, double tol) {
  SUNContext ctx;
  Check(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
  const int n = model.n, m = model.m, size = 2 * n + m;
  // Consistent initial values: (q0, v0, λ0) and (v0, v̇0, 0) from the KKT solve.
  N_Vector yy = InitialState(model, size, ctx);
  N_Vector yp = N_VNew_Serial(size, ctx);
  N_Vector id = N_VNew_Serial(size, ctx);
  model.dynamics.Solve(0.0, model.built.q0, model.built.v0, model.rows, &model.vdot, &model.lambda);
  Map<VectorXd>(N_VGetArrayPointer(yy), size).tail(m) = model.lambda;
  Map<VectorXd> dy(N_VGetArrayPointer(yp), size);
  dy << model.built.v0, model.vdot, VectorXd::Zero(m);
  Map<VectorXd> ids(N_VGetArrayPointer(id), size);
  ids.head(2 * n).setOnes();  // differential
  ids.tail(m).setZero();      // algebraic: λ
  void* mem = IDACreate(ctx);
  Check(IDAInit(mem, DaeResidual, 0.0, yy, yp), "IDAInit");
  Check(IDASStolerances(mem, tol, tol), "IDASStolerances");
  Check(IDASetUserData(mem, &model), "IDASetUserData");
  Check(IDASetId(mem, id), "IDASetId");
  Check(IDASetSuppressAlg(mem, SUNTRUE), "IDASetSuppressAlg");
  Check(IDASetMaxNumSteps(mem, 1000000), "IDASetMaxNumSteps");
  SUNMatrix A = SUNDenseMatrix(size, size, ctx);
  SUNLinearSolver LS = SUNLinSol_Dense(yy, A, ctx);
  Check(IDASetLinearSolver(mem, LS, A), "IDASetLinearSolver");
  sunrealtype t = 0;
  Result r;
  r.ok = IDASolve(mem, kTEnd, &t, yy, yp, IDA_NORMAL) >= 0;
  r.q = Map<VectorXd>(N_VGetArrayPointer(yy), size).head(n);
  long steps = 0, res = 0, lin_res = 0;
  IDAGetNumSteps(mem, &steps);
  IDAGetNumResEvals(mem, &res);
  IDAGetNumLinResEvals(mem, &lin_res);
  r.steps = steps;
  r.rhs = res + lin_res;
  IDAFree(&mem);
  SUNLinSolFree(LS);
  SUNMatDestroy(A);
  N_VDestroy(yy);
  N_VDestroy(yp);
  N_VDestroy(id);
  SUNContext_Free(&ctx);
  return r;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

struct Config {
  std::string solver;
  double tol;
  std::function<Result()> run;
  std::vector<double> cpu = {};  // CPU seconds of each repetition
  Result last = {};
};

int Main(int argc, char** argv) {
  int repeats = 5;
  std::vector<std::string> tols = Split("1e-3,1e-4,1e-5,1e-6,1e-7,1e-8,1e-9,1e-10,1e-11,1e-12");
  std::vector<std::string> saltus = Split("dopri5,dop853,hem5,phem56");
  std::vector<std::string> sundials = Split("cvode_adams,cvode_bdf,ida");
  double projection_tol = integrators::IntegratorOptions{}.projection_tol;
  double safety = 0;  // the integrators' own (IntegratorOptions::safety)
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--repeats") {
      repeats = std::stoi(value);
    } else if (key == "--tols") {
      tols = Split(value);
    } else if (key == "--saltus") {
      saltus = value == "none" ? std::vector<std::string>{} : Split(value);
    } else if (key == "--sundials") {
      sundials = value == "none" ? std::vector<std::string>{} : Split(value);
    } else if (key == "--projection-tol") {
      projection_tol = std::stod(value);
    } else if (key == "--safety") {
      safety = std::stod(value);
    } else {
      std::fprintf(stderr, "andrews_sundials: unknown option '%s'\n", key.c_str());
      return 2;
    }
  }
  Model model;
  const Angles reference = ReferenceAngles();
  std::vector<Config> configs;
  for (const std::string& text : tols) {
    const double tol = std::stod(text);
    for (const std::string& entry : saltus) {
      // name@N: the event loop with event_samples = N.
      const std::size_t at = entry.find('@');
      const std::string name = entry.substr(0, at);
      const int samples = at == std::string::npos ? -1 : std::stoi(entry.substr(at + 1));
      configs.push_back({"saltus_" + entry, tol, [&, name, tol, samples] {
                           return RunSaltus(model, name, tol, projection_tol, samples, safety);
                         }});
    }
    for (const std::string& name : sundials) {
      std::function<Result()> run;
      if (name == "cvode_adams") {
        run = [&, tol] { return RunCvode(model, false, tol); };
      } else if (name == "cvode_bdf") {
        run = [&, tol] { return RunCvode(model, true, tol); };
      } else if (name == "ida") {
        run = [&, tol] { return RunIda(model, tol); };
      } else {
        std::fprintf(stderr, "andrews_sundials: unknown SUNDIALS solver '%s'\n", name.c_str());
        return 2;
      }
      configs.push_back({name, tol, run});
    }
  }
  for (int rep = 0; rep < repeats; ++rep) {  // interleaved: each repetition runs every config
    for (Config& c : configs) {
      const double start = CpuSeconds();
      c.last = c.run();
      c.cpu.push_back(CpuSeconds() - start);
    }
  }
  std::printf("solver,tol,ok,error,cpu_ms,median_ms,steps,rhs,max_g\n");
  for (const Config& c : configs) {
    const Angles got = AnglesOf(c.last.q);
    double error = 0;
    for (int k = 0; k < 7; ++k) error = std::max(error, std::abs(got[k] - reference[k]));
    std::vector<double> cpu = c.cpu;
    std::sort(cpu.begin(), cpu.end());
    const std::size_t k = cpu.size() / 2;
    const double median = cpu.size() % 2 == 1 ? cpu[k] : 0.5 * (cpu[k - 1] + cpu[k]);
    std::printf("%s,%.0e,%d,%.3e,%.4f,%.4f,%ld,%ld,%.3e\n", c.solver.c_str(), c.tol,
                c.last.ok ? 1 : 0, error, 1e3 * cpu.front(), 1e3 * median, c.last.steps, c.last.rhs,
                model.MaxG(c.last.q));
  }
  return 0;
}

}  // namespace
}  // namespace saltus::bench

int main(int argc, char** argv) {
  try {
    return saltus::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "andrews_sundials: %s\n", e.what());
    return 1;
  }
}
