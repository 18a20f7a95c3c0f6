// The Newton stage of the frictional step chain (contact/fc3d_newton.h) on a set of captured
// component problems (contact/lcp_capture.h, version 2; SALTUS_LCP_CAPTURE=DIR on a
// `--integrator moreau_jean` run), the way SolveFrictionComponent (contact/sparse_friction_step.h)
// reaches it: Siconos NSGS from r = 0 for --nsgs sweeps, then our Newton from the NSGS iterate.
// Per file one line (contacts, NSGS residual and CPU; then side by side the Newton stage without
// its smoothing path (Fc3dNewtonOptions::smoothing = false) and with it: residual, LU steps,
// proximal iterations and CPU), then the counts solved / stalled at the chain's tolerance 1e-10
// (FrictionChainOptions::tolerance) and the CPU per stage. With --chain, where Newton stalls, the
// rest of the chain without the dense PROX stage (SolveFrictionComponent with
// proximal_max_contacts = 0 from Newton's best iterate: ADMM, NSGS polish, accepted bound τ₀/h =
// 1e-6) and the stage that ended it. Issue 18 §3 / 23 §1; figures in docs/time-stepping.md.
//
//   friction_bank [--nsgs N] [--chain] FILE.lcp...
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <string>
#include <vector>

#include "contact/complementarity.h"
#include "contact/fc3d_newton.h"
#include "contact/lcp_capture.h"
#include "contact/sparse_friction_step.h"

namespace {

double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

int main(int argc, char** argv) {
  using namespace saltus::contact;
  int nsgs_sweeps = 2000;
  bool chain = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--chain") {
      chain = true;
    } else if (a == "--nsgs" && i + 1 < argc) {
      nsgs_sweeps = std::atoi(argv[++i]);
    } else if (a == "--help" || a.starts_with("--")) {
      std::fprintf(stderr, "usage: friction_bank [--nsgs N] [--chain] FILE.lcp...\n");
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty() || nsgs_sweeps <= 0) {
    std::fprintf(stderr, "usage: friction_bank [--nsgs N>0] [--chain] FILE.lcp...\n");
    return 2;
  }
  constexpr double kTolerance = 1e-10;
  int solved_by_nsgs = 0, solved = 0, stalled = 0;
  double nsgs_cpu = 0.0, newton_cpu = 0.0, worst = 0.0, rest_cpu = 0.0;
  int plain_solved = 0, plain_stalled = 0, smoothed = 0;
  double plain_cpu = 0.0, plain_worst = 0.0;
  std::array<int, kFrictionStages> rest_stage{};
  for (const std::string& f : files) {
    CapturedLcp p;
    try {
      p = ReadCapturedLcpFile(f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
    if (p.mu.size() * 3 != p.b.size()) {
      std::fprintf(stderr, "%s: not a frictional problem (no mu line)\n", f.c_str());
      return 2;
    }
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(p.b.size());
    Fc3dOptions fo;
    fo.solver = Fc3dSolver::kNsgs;
    fo.fallback = false;
    fo.tolerance = kTolerance;
    fo.max_iterations = nsgs_sweeps;
    double t0 = CpuSeconds();
    const Fc3dResult ns = SolveFrictionContact3d(p.W, p.b, p.mu, fo, &zero);
    const double t_nsgs = CpuSeconds() - t0;
    nsgs_cpu += t_nsgs;
    const Eigen::VectorXd r0 = ns.r.allFinite() ? ns.r : zero;
    const double e_nsgs = Fc3dResidual(p.W, p.b, p.mu, r0);
    if (e_nsgs <= kTolerance) {
      ++solved_by_nsgs;
      std::printf("%s %lld nsgs %.3g %.3f s\n", f.c_str(), static_cast<long long>(p.mu.size()),
                  e_nsgs, t_nsgs);
      continue;
    }
    Fc3dNewtonOptions plain;
    plain.smoothing = false;
    t0 = CpuSeconds();
    const Fc3dNewtonResult pr = SolveFc3dNewton(p.W, p.b, p.mu, plain, r0);
    const double t_plain = CpuSeconds() - t0;
    plain_cpu += t_plain;
    (pr.ok ? plain_solved : plain_stalled) += 1;
    if (!pr.ok) plain_worst = std::max(plain_worst, pr.residual);
    t0 = CpuSeconds();
    const Fc3dNewtonResult nr = SolveFc3dNewton(p.W, p.b, p.mu, Fc3dNewtonOptions{}, r0);
    const double t_newton = CpuSeconds() - t0;
    newton_cpu += t_newton;
    (nr.ok ? solved : stalled) += 1;
    if (!nr.ok) worst = std::max(worst, nr.residual);
    if (nr.smoothed) ++smoothed;
    std::printf(
        "%s %lld nsgs %.3g %.3f s | unsmoothed %s %.3g steps %d outer %d %.3f s | newton %s%s "
        "%.3g steps %d outer %d %.3f s",
        f.c_str(), static_cast<long long>(p.mu.size()), e_nsgs, t_nsgs,
        pr.ok ? "solved" : "STALLED", pr.residual, pr.iterations, pr.outer, t_plain,
        nr.ok ? "solved" : "STALLED", nr.smoothed ? " (smoothed)" : "", nr.residual, nr.iterations,
        nr.outer, t_newton);
    if (chain && !nr.ok) {
      FrictionChainOptions co;
      co.newton_iterations = 0;  // done above
      co.proximal_max_contacts = 0;
      co.nsgs_sweeps = 1;  // the chain opens with NSGS: one sweep from Newton's best iterate
      co.accepted_residual = 1e-6;
      t0 = CpuSeconds();
      const FrictionChainResult cr = SolveFrictionComponent(p.W, p.b, p.mu, co, nr.r);
      const double t_chain = CpuSeconds() - t0;
      rest_cpu += t_chain;
      ++rest_stage[static_cast<std::size_t>(cr.stage)];
      std::printf(" then %s %.3g %.3f s", std::string(FrictionStageName(cr.stage)).c_str(),
                  cr.residual, t_chain);
    }
    std::printf("\n");
  }
  std::printf(
      "files %zu: nsgs %d; unsmoothed newton solved %d, stalled %d (worst %.3g), CPU %.2f s; "
      "newton solved %d (%d smoothed), stalled %d (worst %.3g), CPU %.2f s; CPU nsgs %.2f s\n",
      files.size(), solved_by_nsgs, plain_solved, plain_stalled, plain_worst, plain_cpu, solved,
      smoothed, stalled, worst, newton_cpu, nsgs_cpu);
  if (chain) {
    std::printf("after the stalls, without PROX (%.2f s):", rest_cpu);
    for (int k = 0; k < kFrictionStages; ++k) {
      std::printf(" %s %d", std::string(FrictionStageName(static_cast<FrictionStage>(k))).c_str(),
                  rest_stage[static_cast<std::size_t>(k)]);
    }
    std::printf("\n");
  }
  return 0;
}
