#include "contact/complementarity.h"

#include "contact/monotone_lcp.h"
#include "contact/sparse_lcp.h"

#include <FrictionContactProblem.h>
#include <Friction_cst.h>
#include <LCP_Solvers.h>
#include <LinearComplementarityProblem.h>
#include <NonSmoothDrivers.h>
#include <NumericsMatrix.h>
#include <NumericsVerbose.h>
#include <RollingFrictionContactProblem.h>
#include <SolverOptions.h>
#include <lcp_cst.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "engine/disjoint_sets.h"

namespace saltus::contact {
namespace {

// The only table that maps our solvers to Siconos ids: nothing else is ever passed to Siconos,
// whose driver calls exit() on an unknown id.
struct SolverEntry {
  LcpSolver solver;
  std::string_view name;
  int siconos_id;
};
constexpr std::array<SolverEntry, 3> kSolvers = {{
    {LcpSolver::kLemke, "lemke", SICONOS_LCP_LEMKE},
    {LcpSolver::kPgs, "pgs", SICONOS_LCP_PGS},
    {LcpSolver::kEnumerative, "enum", SICONOS_LCP_ENUM},
}};

const SolverEntry* FindEntry(LcpSolver s) {
  for (const SolverEntry& e : kSolvers) {
    if (e.solver == s) return &e;
  }
  return nullptr;
}

// Siconos keeps global state (verbose flag; static buffers in some solvers): one call at a time.
std::mutex& SiconosMutex() {
  static std::mutex m;
  return m;
}

// Every SolverOptions struct below `o` (its internal solvers, recursively), `o` first.
void CollectOptions(SolverOptions* o, std::vector<SolverOptions*>* all) {
  all->push_back(o);
  for (std::size_t k = 0; k < o->numberOfInternalSolvers; ++k) {
    if (o->internalSolvers[k] != nullptr) CollectOptions(o->internalSolvers[k], all);
  }
}

struct OptionsDeleter {
  // solver_options_delete frees the members, also those of the internal solvers (NSGS has its
  // local solver's), but not the structs themselves.
  void operator()(SolverOptions* o) const {
    std::vector<SolverOptions*> all;
    CollectOptions(o, &all);
    solver_options_delete(o);
    for (SolverOptions* s : all) std::free(s);
  }
};
struct MatrixDeleter {
  void operator()(NumericsMatrix* m) const { NM_free(m); }
};

// w = W z + b and the natural-map residual, after clipping z to z ≥ 0.
void Finish(const Eigen::MatrixXd& W, const Eigen::VectorXd& b, LcpResult* r) {
  r->z = r->z.cwiseMax(0.0);
  r->w.noalias() = W * r->z;
  r->w += b;
  const double scale = std::max(1.0, b.size() > 0 ? b.lpNorm<Eigen::Infinity>() : 0.0);
  r->residual = r->z.size() > 0 ? r->w.cwiseMin(r->z).cwiseAbs().maxCoeff() / scale : 0.0;
}

std::string InfoMessage(LcpSolver s, int info) {
  std::string what;
  switch (s) {
    case LcpSolver::kLemke:
      what = info == 1 ? "no pivot possible or iteration limit reached (ray termination: the LCP "
                         "may be infeasible)"
                       : "solver error";
      break;
    case LcpSolver::kPgs:
      what = info == 1   ? "no convergence within the iteration limit"
             : info == 2 ? "vanishing diagonal term in W"
                         : "solver error";
      break;
    case LcpSolver::kEnumerative:
      what = "no complementary basis gives a feasible solution";
      break;
  }
  return "lcp " + std::string(ToString(s)) + ": " + what + " (Siconos info " +
         std::to_string(info) + ")";
}

// Symmetric to 1e-12 of the largest entry (the condition of the monotone stage).
bool IsSymmetric(const Eigen::MatrixXd& W) {
  const double max_abs = W.size() > 0 ? W.cwiseAbs().maxCoeff() : 0.0;
  return (W - W.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * max_abs;
}

}  // namespace

std::string_view ToString(LcpSolver s) {
  const SolverEntry* e = FindEntry(s);
  return e ? e->name : std::string_view("unknown");
}

std::optional<LcpSolver> ParseLcpSolver(std::string_view s) {
  for (const SolverEntry& e : kSolvers) {
    if (e.name == s) return e.solver;
  }
  return std::nullopt;
}

namespace {

LcpResult SolveWith(const Eigen::MatrixXd& W, const Eigen::VectorXd& b, const LcpOptions& options) {
  const Eigen::Index n = b.size();
  if (W.rows() != W.cols()) {
    throw std::invalid_argument("SolveLcp: W must be square, got " + std::to_string(W.rows()) +
                                " x " + std::to_string(W.cols()));
  }
  if (W.rows() != n) {
    throw std::invalid_argument("SolveLcp: W is " + std::to_string(W.rows()) + " x " +
                                std::to_string(W.cols()) + " but b has " + std::to_string(n) +
                                " entries");
  }
  if (!W.allFinite()) throw std::invalid_argument("SolveLcp: W has a non-finite entry");
  if (!b.allFinite()) throw std::invalid_argument("SolveLcp: b has a non-finite entry");
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance)) {
    throw std::invalid_argument("SolveLcp: tolerance must be finite and > 0, got " +
                                std::to_string(options.tolerance));
  }
  if (options.max_iterations <= 0) {
    throw std::invalid_argument("SolveLcp: max_iterations must be > 0, got " +
                                std::to_string(options.max_iterations));
  }
  const SolverEntry* entry = FindEntry(options.solver);
  if (entry == nullptr) {
    throw std::invalid_argument("SolveLcp: invalid solver value " +
                                std::to_string(static_cast<int>(options.solver)));
  }
  if (n > std::numeric_limits<int>::max() / 2) {
    throw std::invalid_argument("SolveLcp: problem too large (n = " + std::to_string(n) + ")");
  }

  LcpResult result;
  result.z = Eigen::VectorXd::Zero(n);
  result.w = b;

  if (n == 0) {
    result.ok = true;
    return result;
  }
  if (n == 1) {
    // Closed form (Siconos' driver does the same, without the infeasible case).
    if (b(0) >= 0.0) {
      result.z(0) = 0.0;
    } else if (W(0, 0) > 0.0) {
      result.z(0) = -b(0) / W(0, 0);
    } else {
      result.message = "lcp: infeasible 1 x 1 problem (W = " + std::to_string(W(0, 0)) +
                       " <= 0 and b = " + std::to_string(b(0)) + " < 0)";
      Finish(W, b, &result);
      return result;
    }
    Finish(W, b, &result);
    result.ok = result.residual <= options.tolerance;
    if (!result.ok)
      result.message = "lcp: residual " + std::to_string(result.residual) + " above tolerance";
    return result;
  }
  if (options.solver == LcpSolver::kEnumerative && n > kMaxEnumerativeSize) {
    result.message = "lcp enum: n = " + std::to_string(n) + " exceeds the enumeration limit " +
                     std::to_string(kMaxEnumerativeSize);
    return result;
  }

  const int size = static_cast<int>(n);
  // Copies handed to Siconos (it never owns our buffers; the problem struct lives on the stack
  // and freeLinearComplementarityProblem is never called).
  std::unique_ptr<NumericsMatrix, MatrixDeleter> M(NM_create(NM_DENSE, size, size));
  if (!M || M->matrix0 == nullptr) {
    result.message = "lcp: could not allocate the Siconos matrix";
    return result;
  }
  std::memcpy(M->matrix0, W.data(), sizeof(double) * static_cast<std::size_t>(n * n));
  Eigen::VectorXd q = b;
  LinearComplementarityProblem problem;
  problem.size = size;
  problem.M = M.get();
  problem.q = q.data();

  // Siconos' own stopping test is ‖min(w, z)‖₂ / ‖b‖₂ ≤ tol_s (no division when ‖b‖₂ ≤ eps).
  // With tol_s = tolerance · max(1, ‖b‖∞) / ‖b‖₂ it implies our r ≤ tolerance (‖·‖∞ ≤ ‖·‖₂).
  const double b_inf = b.lpNorm<Eigen::Infinity>();
  const double b_two = b.norm();
  const double scale = std::max(1.0, b_inf);
  const double siconos_tol = b_two > std::numeric_limits<double>::epsilon()
                                 ? options.tolerance * scale / b_two
                                 : options.tolerance;

  int info = -1;
  {
    std::lock_guard<std::mutex> lock(SiconosMutex());
    numerics_set_verbose(0);
    std::unique_ptr<SolverOptions, OptionsDeleter> so(solver_options_create(entry->siconos_id));
    if (!so) {
      result.message = "lcp: could not create Siconos solver options";
      return result;
    }
    so->iparam[SICONOS_IPARAM_MAX_ITER] = options.max_iterations;
    so->dparam[SICONOS_DPARAM_TOL] = siconos_tol;
    if (options.solver == LcpSolver::kEnumerative) {
      // lcp_enum's tol is the accepted negativity of a basic solution's entries.
      so->dparam[SICONOS_DPARAM_TOL] = 0.5 * options.tolerance * scale;
      so->iparam[SICONOS_LCP_IPARAM_ENUM_USE_DGELS] = 0;
      so->iparam[SICONOS_LCP_IPARAM_ENUM_SEED] = 0;
      so->iparam[SICONOS_LCP_IPARAM_ENUM_MULTIPLE_SOLUTIONS] = 0;
    }
    info = linearComplementarity_driver(&problem, result.z.data(), result.w.data(), so.get());
    result.iterations = options.solver == LcpSolver::kEnumerative
                            ? so->iparam[SICONOS_LCP_IPARAM_ENUM_CURRENT_ENUM] + 1
                            : so->iparam[SICONOS_IPARAM_ITER_DONE];
  }
  if (options.solver == LcpSolver::kEnumerative && info != 0) result.iterations = 1 << size;

  if (!result.z.allFinite()) {
    result.message = "lcp " + std::string(entry->name) + ": non-finite solution";
    if (info != 0) result.message += "; " + InfoMessage(options.solver, info);
    result.w = W * result.z + b;
    result.residual = std::numeric_limits<double>::infinity();
    return result;
  }
  Finish(W, b, &result);
  if (info != 0) {
    result.message =
        InfoMessage(options.solver, info) + ", residual " + std::to_string(result.residual);
    return result;
  }
  if (!(result.residual <= options.tolerance)) {
    result.message = "lcp " + std::string(entry->name) + ": residual " +
                     std::to_string(result.residual) + " above tolerance " +
                     std::to_string(options.tolerance);
    return result;
  }
  result.ok = true;
  return result;
}

}  // namespace

LcpResult SolveLcp(const Eigen::MatrixXd& W, const Eigen::VectorXd& b, const LcpOptions& options) {
  LcpResult result = SolveWith(W, b, options);
  if (result.ok || !options.fallback) return result;
  // Pivoting can stop on a degenerate problem that has a solution (Lemke's ray termination on
  // the rank-deficient Delassus matrix of two boxes stacked flat, or of a settling pile): try
  // enumeration where it is affordable, then the solver with a guarantee for symmetric
  // semidefinite W, then projected Gauss-Seidel. The message keeps the first failure.
  int failed = 1;
  const auto solved_by = [&](LcpResult second, std::string_view name) {
    second.message = result.message + "; solved by the fallback " + std::string(name);
    second.failed_stages = failed;
    return second;
  };
  for (const LcpSolver other : {LcpSolver::kEnumerative, LcpSolver::kPgs}) {
    if (other == LcpSolver::kPgs && options.monotone_stage && IsSymmetric(W)) {
      LcpResult second = SolveMonotoneLcp(Eigen::MatrixXd(W).sparseView(), b, options);
      if (second.ok) return solved_by(std::move(second), "interior point");
      ++failed;
    }
    if (other == options.solver) continue;
    if (other == LcpSolver::kEnumerative && b.size() > kMaxEnumerativeSize) continue;
    LcpOptions retry = options;
    retry.solver = other;
    LcpResult second = SolveWith(W, b, retry);
    if (second.ok) return solved_by(std::move(second), ToString(other));
    ++failed;
  }
  result.failed_stages = failed;
  return result;
}

namespace {

void ValidateOptions(const char* who, const LcpOptions& options) {
  const std::string w(who);
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance)) {
    throw std::invalid_argument(w + ": tolerance must be finite and > 0, got " +
                                std::to_string(options.tolerance));
  }
  if (options.max_iterations <= 0) {
    throw std::invalid_argument(w + ": max_iterations must be > 0, got " +
                                std::to_string(options.max_iterations));
  }
  if (FindEntry(options.solver) == nullptr) {
    throw std::invalid_argument(w + ": invalid solver value " +
                                std::to_string(static_cast<int>(options.solver)));
  }
  if (options.sparse_minimum_size < 1) {
    throw std::invalid_argument(w + ": sparse_minimum_size must be >= 1, got " +
                                std::to_string(options.sparse_minimum_size));
  }
}

}  // namespace

LcpResult SolveLcpByComponents(const std::vector<int>& component, int num_components,
                               const LcpBlockFunction& block, const Eigen::VectorXd& b,
                               const LcpOptions& options) {
  return SolveLcpByComponents(component, num_components, block, LcpSparseBlockFunction(), b,
                              options);
}

LcpResult SolveLcpByComponents(const std::vector<int>& component, int num_components,
                               const LcpBlockFunction& block,
                               const LcpSparseBlockFunction& sparse_block, const Eigen::VectorXd& b,
                               const LcpOptions& options) {
  const char* who = "SolveLcpByComponents";
  ValidateOptions(who, options);
  const Eigen::Index n = b.size();
  if (static_cast<Eigen::Index>(component.size()) != n) {
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(component.size()) +
                                " component labels for " + std::to_string(n) + " unknowns");
  }
  if (!b.allFinite()) throw std::invalid_argument(std::string(who) + ": b has a non-finite entry");
  if (num_components < 0) {
    throw std::invalid_argument(std::string(who) + ": negative number of components");
  }
  std::vector<std::vector<int>> unknowns(static_cast<std::size_t>(num_components));
  for (Eigen::Index i = 0; i < n; ++i) {
    const int c = component[static_cast<std::size_t>(i)];
    if (c < 0 || c >= num_components) {
      throw std::invalid_argument(std::string(who) + ": unknown " + std::to_string(i) +
                                  " has component " + std::to_string(c) + " outside [0, " +
                                  std::to_string(num_components) + ")");
    }
    unknowns[static_cast<std::size_t>(c)].push_back(static_cast<int>(i));
  }
  LcpWarmStart* warm = options.warm_start;
  if (warm != nullptr) {
    if (static_cast<Eigen::Index>(warm->ids.size()) != n) {
      throw std::invalid_argument(std::string(who) + ": warm start has " +
                                  std::to_string(warm->ids.size()) + " ids for " +
                                  std::to_string(n) + " unknowns");
    }
    for (int id : warm->ids) {
      if (id < 0) {
        throw std::invalid_argument(std::string(who) + ": warm start id " + std::to_string(id) +
                                    " is negative");
      }
    }
    ++warm->calls;
  }
  Eigen::VectorXd z_warm;
  LcpResult result;
  result.ok = true;
  result.z = Eigen::VectorXd::Zero(n);
  result.w = b;
  result.components = num_components;
  Eigen::MatrixXd W_c;
  Eigen::SparseMatrix<double> W_sparse;
  Eigen::VectorXd b_c;
  double worst = 0.0;  // largest |min(w, z)| over the unknowns
  for (int c = 0; c < num_components; ++c) {
    const std::vector<int>& idx = unknowns[static_cast<std::size_t>(c)];
    const auto m = static_cast<Eigen::Index>(idx.size());
    if (m == 0) continue;
    b_c.resize(m);
    for (Eigen::Index k = 0; k < m; ++k) b_c[k] = b[idx[static_cast<std::size_t>(k)]];
    if (b_c.minCoeff() >= 0.0) continue;  // z_c = 0, w_c = b_c
    LcpResult r;
    if (sparse_block && m >= options.sparse_minimum_size) {
      W_sparse.resize(m, m);
      sparse_block(c, idx, &W_sparse);
      if (W_sparse.rows() != m || W_sparse.cols() != m) {
        throw std::invalid_argument(std::string(who) + ": sparse block of component " +
                                    std::to_string(c) + " is " + std::to_string(W_sparse.rows()) +
                                    " x " + std::to_string(W_sparse.cols()) + ", expected " +
                                    std::to_string(m) + " x " + std::to_string(m));
      }
      // Warm start (LcpWarmStart): the z recorded for each id within the last max_age calls.
      const Eigen::VectorXd* z0 = nullptr;
      if (warm != nullptr) {
        z_warm.setZero(m);
        bool found = false;
        for (Eigen::Index k = 0; k < m; ++k) {
          const auto id = static_cast<std::size_t>(warm->ids[static_cast<std::size_t>(idx[k])]);
          if (id < warm->z_of_id.size() && warm->call_of_id[id] > 0 &&
              warm->call_of_id[id] >= warm->calls - warm->max_age) {
            z_warm[k] = warm->z_of_id[id];
            found = true;
          }
        }
        if (found) {
          z0 = &z_warm;
          ++warm->warm_groups;
        }
      }
      r = SolveLcpSparse(W_sparse, b_c, options, z0);
      ++result.components_sparse;
      if (warm != nullptr && r.ok && r.z.size() == m) {
        for (Eigen::Index k = 0; k < m; ++k) {
          const auto id = static_cast<std::size_t>(warm->ids[static_cast<std::size_t>(idx[k])]);
          if (id >= warm->z_of_id.size()) {
            const std::size_t size = std::max(id + 1, 2 * warm->z_of_id.size());
            warm->z_of_id.resize(size, 0.0);
            warm->call_of_id.resize(size, 0);
          }
          warm->z_of_id[id] = r.z[k];
          warm->call_of_id[id] = warm->calls;
        }
      }
    } else {
      W_c.resize(m, m);
      block(c, idx, &W_c);
      if (W_c.rows() != m || W_c.cols() != m) {
        throw std::invalid_argument(std::string(who) + ": block of component " + std::to_string(c) +
                                    " is " + std::to_string(W_c.rows()) + " x " +
                                    std::to_string(W_c.cols()) + ", expected " + std::to_string(m) +
                                    " x " + std::to_string(m));
      }
      r = SolveLcp(W_c, b_c, options);
    }
    ++result.components_solved;
    result.largest_component = std::max(result.largest_component, static_cast<int>(m));
    result.iterations += r.iterations;
    result.failed_stages += r.failed_stages;
    for (Eigen::Index k = 0; k < m; ++k) {
      const auto i = idx[static_cast<std::size_t>(k)];
      if (k < r.z.size()) result.z[i] = r.z[k];
      if (k < r.w.size()) result.w[i] = r.w[k];
    }
    if (r.z.size() == m && r.w.size() == m) {
      worst = std::max(worst, r.w.cwiseMin(r.z).cwiseAbs().maxCoeff());
    } else {
      worst = std::numeric_limits<double>::infinity();
    }
    if (!r.ok && result.ok) {
      result.ok = false;
      result.message = "component of " + std::to_string(m) + " unknowns (first unknown " +
                       std::to_string(idx.front()) + "): " + r.message;
    } else if (r.ok && !r.message.empty() && result.message.empty()) {
      result.message = r.message;  // e.g. solved by a fallback
    }
  }
  const double scale = std::max(1.0, n > 0 ? b.lpNorm<Eigen::Infinity>() : 0.0);
  result.residual = worst / scale;
  return result;
}

LcpResult SolveLcpByComponents(const Eigen::MatrixXd& W, const Eigen::VectorXd& b,
                               const LcpOptions& options) {
  const char* who = "SolveLcpByComponents";
  const Eigen::Index n = b.size();
  if (W.rows() != n || W.cols() != n) {
    throw std::invalid_argument(std::string(who) + ": W is " + std::to_string(W.rows()) + " x " +
                                std::to_string(W.cols()) + " but b has " + std::to_string(n) +
                                " entries");
  }
  if (!W.allFinite()) throw std::invalid_argument(std::string(who) + ": W has a non-finite entry");
  // Connected components of the exact non-zero pattern.
  engine::DisjointSets sets(static_cast<int>(n));
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < j; ++i) {
      if (W(i, j) != 0.0 || W(j, i) != 0.0) sets.Unite(static_cast<int>(i), static_cast<int>(j));
    }
  }
  std::vector<int> label(static_cast<std::size_t>(n), -1), component(static_cast<std::size_t>(n));
  int count = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto root = static_cast<std::size_t>(sets.Find(static_cast<int>(i)));
    if (label[root] < 0) label[root] = count++;
    component[static_cast<std::size_t>(i)] = label[root];
  }
  return SolveLcpByComponents(
      component, count,
      [&W](int, const std::vector<int>& idx, Eigen::MatrixXd* W_c) {
        const auto m = static_cast<Eigen::Index>(idx.size());
        for (Eigen::Index j = 0; j < m; ++j) {
          for (Eigen::Index i = 0; i < m; ++i) {
            (*W_c)(i, j) = W(idx[static_cast<std::size_t>(i)], idx[static_cast<std::size_t>(j)]);
          }
        }
      },
      [&W](int, const std::vector<int>& idx, Eigen::SparseMatrix<double>* W_c) {
        const auto m = static_cast<Eigen::Index>(idx.size());
        std::vector<Eigen::Triplet<double>> entries;
        for (Eigen::Index j = 0; j < m; ++j) {
          for (Eigen::Index i = 0; i < m; ++i) {
            const double v = W(idx[static_cast<std::size_t>(i)], idx[static_cast<std::size_t>(j)]);
            if (v != 0.0) entries.emplace_back(i, j, v);
          }
        }
        W_c->setFromTriplets(entries.begin(), entries.end());
      },
      b, options);
}

namespace {

using NumericsPtr = std::unique_ptr<NumericsMatrix, MatrixDeleter>;

// M as a Siconos matrix (NM_DENSE, column-major copy); null when Siconos cannot allocate it.
NumericsPtr ToNumerics(const Eigen::MatrixXd& M) {
  const auto n = static_cast<int>(M.rows());
  NumericsPtr W(NM_create(NM_DENSE, n, n));
  if (!W || W->matrix0 == nullptr) return nullptr;
  std::memcpy(W->matrix0, M.data(), sizeof(double) * static_cast<std::size_t>(n) * n);
  return W;
}

// M as a Siconos NM_SPARSE matrix (triplets; Siconos compresses it when a solver needs it).
NumericsPtr ToNumerics(const Eigen::SparseMatrix<double>& M) {
  const auto n = static_cast<int>(M.rows());
  NumericsPtr W(NM_create(NM_SPARSE, n, n));
  if (!W) return nullptr;
  NM_triplet_alloc(W.get(), std::max<Eigen::Index>(M.nonZeros(), 1));
  for (int j = 0; j < M.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(M, j); it; ++it) {
      NM_entry(W.get(), static_cast<int>(it.row()), j, it.value());
    }
  }
  return W;
}

bool AllFinite(const Eigen::MatrixXd& M) { return M.allFinite(); }
bool AllFinite(const Eigen::SparseMatrix<double>& M) {
  return Eigen::Map<const Eigen::VectorXd>(M.valuePtr(), M.nonZeros()).allFinite();
}

struct Fc3dSolverName {
  int id;
  const char* name;
};

Fc3dSolverName Fc3dSolverOf(Fc3dSolver solver) {
  switch (solver) {
    case Fc3dSolver::kAlartCurnierNewton:
      return {SICONOS_FRICTION_3D_NSN_AC, "fc3d nsn_ac"};
    case Fc3dSolver::kAdmm:
      return {SICONOS_FRICTION_3D_ADMM, "fc3d admm"};
    case Fc3dSolver::kProximal:
      return {SICONOS_FRICTION_3D_PROX, "fc3d prox"};
    case Fc3dSolver::kNsgs:
      break;
  }
  return {SICONOS_FRICTION_3D_NSGS, "fc3d nsgs"};
}

template <class Matrix>
Fc3dResult SolveFc3dWith(const Matrix& M, const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                         const Fc3dOptions& options, const Eigen::VectorXd& r0) {
  const auto n = static_cast<int>(q.size());
  Fc3dResult result;
  result.r = r0;
  result.u = M * r0 + q;
  const NumericsPtr W = ToNumerics(M);
  if (!W) {
    result.message = "fc3d: could not allocate the Siconos matrix";
    return result;
  }
  Eigen::VectorXd q_copy = q, mu_copy = mu;
  FrictionContactProblem problem;
  problem.dimension = 3;
  problem.numberOfContacts = n / 3;
  problem.M = W.get();
  problem.q = q_copy.data();
  problem.mu = mu_copy.data();
  // Siconos' error is relative to ‖q‖₂ (when not tiny): scale the tolerance as for the LCP.
  const double q_two = q.norm();
  const double scale = std::max(1.0, q.lpNorm<Eigen::Infinity>());
  const double siconos_tol = q_two > std::numeric_limits<double>::epsilon()
                                 ? options.tolerance * scale / q_two
                                 : options.tolerance;
  const Fc3dSolverName solver = Fc3dSolverOf(options.solver);
  const int id = solver.id;
  int info = -1;
  {
    std::lock_guard<std::mutex> lock(SiconosMutex());
    numerics_set_verbose(0);
    std::unique_ptr<SolverOptions, OptionsDeleter> so(solver_options_create(id));
    if (!so) {
      result.message = "fc3d: could not create Siconos solver options";
      return result;
    }
    so->iparam[SICONOS_IPARAM_MAX_ITER] = options.max_iterations;
    so->dparam[SICONOS_DPARAM_TOL] = siconos_tol;
    info = fc3d_driver(&problem, result.r.data(), result.u.data(), so.get());
    result.iterations = so->iparam[SICONOS_IPARAM_ITER_DONE];
    result.error = so->dparam[SICONOS_DPARAM_RESIDU];
  }
  const char* name = solver.name;
  if (!result.r.allFinite() || !result.u.allFinite()) {
    result.message =
        std::string(name) + ": non-finite solution (Siconos info " + std::to_string(info) + ")";
    return result;
  }
  result.ok = info == 0;
  char tail[96];
  std::snprintf(tail, sizeof tail, " (Siconos info %d, %d iterations, error %.3g)", info,
                result.iterations, result.error);
  result.message = std::string(name) + (result.ok ? ": converged" : ": no convergence") + tail;
  return result;
}

}  // namespace

namespace {

template <class Matrix>
Fc3dResult SolveFc3d(const Matrix& M, const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                     const Fc3dOptions& options, const Eigen::VectorXd* r0) {
  const char* who = "SolveFrictionContact3d";
  const Eigen::Index n = q.size();
  if (n % 3 != 0 || M.rows() != n || M.cols() != n || mu.size() != n / 3) {
    throw std::invalid_argument(std::string(who) + ": M is " + std::to_string(M.rows()) + " x " +
                                std::to_string(M.cols()) + ", q has " + std::to_string(n) +
                                " entries and mu " + std::to_string(mu.size()) +
                                " (need 3 n_c square, 3 n_c, n_c)");
  }
  if (r0 != nullptr && r0->size() != n) {
    throw std::invalid_argument(std::string(who) + ": r0 has " + std::to_string(r0->size()) +
                                " entries, expected " + std::to_string(n));
  }
  if (!AllFinite(M) || !q.allFinite() || !mu.allFinite() || (r0 != nullptr && !r0->allFinite())) {
    throw std::invalid_argument(std::string(who) + ": non-finite entry in M, q, mu or r0");
  }
  if (n > 0 && mu.minCoeff() < 0.0) {
    throw std::invalid_argument(std::string(who) + ": negative friction coefficient");
  }
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance) ||
      options.max_iterations <= 0 ||
      (options.solver != Fc3dSolver::kAlartCurnierNewton && options.solver != Fc3dSolver::kNsgs &&
       options.solver != Fc3dSolver::kAdmm && options.solver != Fc3dSolver::kProximal)) {
    throw std::invalid_argument(std::string(who) + ": bad options (tolerance " +
                                std::to_string(options.tolerance) + ", max_iterations " +
                                std::to_string(options.max_iterations) + ")");
  }
  if (n == 0) {
    Fc3dResult empty;
    empty.ok = true;
    return empty;
  }
  const Eigen::VectorXd start = r0 != nullptr ? *r0 : Eigen::VectorXd::Zero(n);
  Fc3dOptions retry = options;
  retry.solver = Fc3dSolver::kNsgs;
  retry.max_iterations = std::max(options.max_iterations, 1000);
  // Siconos' Newton solver factorizes its Jacobian with LAPACK and, on an exactly singular one,
  // prints "NM_LU_factorize: ... DGETRF failed" to stderr (an fprintf that numerics_set_verbose
  // does not govern) before it fails. A rank-deficient M (redundant contacts: a box's four
  // corners on a plane give 12 rows of rank 6) makes that Jacobian singular when the contacts
  // stick, so with `fallback` such a problem goes to NSGS at once: its local 3 x 3 problems have
  // the regular diagonal blocks of M.
  const bool newton = options.solver == Fc3dSolver::kAlartCurnierNewton;
  if (newton && options.fallback && Eigen::FullPivLU<Eigen::MatrixXd>(M).rank() < n) {
    return SolveFc3dWith(M, q, mu, retry, start);
  }
  Fc3dResult result = SolveFc3dWith(M, q, mu, options, start);
  if (result.ok || !options.fallback || !newton) return result;
  Fc3dResult second = SolveFc3dWith(M, q, mu, retry, result.r);
  second.message = result.message + "; " + second.message;
  return second;
}

}  // namespace

Fc3dResult SolveFrictionContact3d(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& mu, const Fc3dOptions& options,
                                  const Eigen::VectorXd* r0) {
  return SolveFc3d(M, q, mu, options, r0);
}

Fc3dResult SolveFrictionContact3d(const Eigen::SparseMatrix<double>& M, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& mu, const Fc3dOptions& options,
                                  const Eigen::VectorXd* r0) {
  return SolveFc3d(M, q, mu, options, r0);
}

Fc3dResult SolveRollingFrictionContact3d(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                                         const Eigen::VectorXd& mu, const Eigen::VectorXd& mu_r,
                                         const RollingFc3dOptions& options,
                                         const Eigen::VectorXd* r0) {
  const std::string who = "SolveRollingFrictionContact3d";
  const Eigen::Index n = q.size();
  if (n % 5 != 0 || M.rows() != n || M.cols() != n || mu.size() != n / 5 || mu_r.size() != n / 5 ||
      (r0 != nullptr && r0->size() != n)) {
    throw std::invalid_argument(
        who + ": M is " + std::to_string(M.rows()) + " x " + std::to_string(M.cols()) + ", q has " +
        std::to_string(n) + " entries, mu " + std::to_string(mu.size()) + " and mu_r " +
        std::to_string(mu_r.size()) + " (need 5 n_c square, 5 n_c, n_c, n_c; r0 5 n_c)");
  }
  if (!M.allFinite() || !q.allFinite() || !mu.allFinite() || !mu_r.allFinite() ||
      (r0 != nullptr && !r0->allFinite())) {
    throw std::invalid_argument(who + ": non-finite entry in M, q, mu, mu_r or r0");
  }
  if (n > 0 && (mu.minCoeff() < 0.0 || mu_r.minCoeff() < 0.0)) {
    throw std::invalid_argument(who + ": negative friction coefficient");
  }
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance) ||
      options.max_iterations <= 0) {
    throw std::invalid_argument(who + ": bad options (tolerance " +
                                std::to_string(options.tolerance) + ", max_iterations " +
                                std::to_string(options.max_iterations) + ")");
  }
  Fc3dResult result;
  result.r = r0 != nullptr ? *r0 : Eigen::VectorXd::Zero(n);
  result.u = M * result.r + q;
  if (n == 0) {
    result.ok = true;
    return result;
  }
  const NumericsPtr W = ToNumerics(M);
  if (!W) {
    result.message = "rolling_fc3d: could not allocate the Siconos matrix";
    return result;
  }
  Eigen::VectorXd q_copy = q, mu_copy = mu, mu_r_copy = mu_r;
  RollingFrictionContactProblem problem;
  problem.dimension = 5;
  problem.numberOfContacts = static_cast<int>(n / 5);
  problem.M = W.get();
  problem.q = q_copy.data();
  problem.mu = mu_copy.data();
  problem.mu_r = mu_r_copy.data();
  // Siconos' error is relative to ‖q‖₂ (when not tiny): the same scaling as fc3d.
  const double q_two = q.norm();
  const double scale = std::max(1.0, q.lpNorm<Eigen::Infinity>());
  const double siconos_tol = q_two > std::numeric_limits<double>::epsilon()
                                 ? options.tolerance * scale / q_two
                                 : options.tolerance;
  int info = -1;
  {
    std::lock_guard<std::mutex> lock(SiconosMutex());
    numerics_set_verbose(0);
    std::unique_ptr<SolverOptions, OptionsDeleter> so(
        solver_options_create(SICONOS_ROLLING_FRICTION_3D_NSGS));
    if (!so) {
      result.message = "rolling_fc3d: could not create Siconos solver options";
      return result;
    }
    so->iparam[SICONOS_IPARAM_MAX_ITER] = options.max_iterations;
    so->dparam[SICONOS_DPARAM_TOL] = siconos_tol;
    info = rolling_fc3d_driver(&problem, result.r.data(), result.u.data(), so.get());
    result.iterations = so->iparam[SICONOS_IPARAM_ITER_DONE];
    result.error = so->dparam[SICONOS_DPARAM_RESIDU];
  }
  if (!result.r.allFinite() || !result.u.allFinite()) {
    result.message =
        "rolling_fc3d nsgs: non-finite solution (Siconos info " + std::to_string(info) + ")";
    return result;
  }
  result.ok = info == 0;
  result.message = std::string("rolling_fc3d nsgs") +
                   (result.ok ? ": converged" : ": no convergence") + " (Siconos info " +
                   std::to_string(info) + ", error " + std::to_string(result.error) + ")";
  return result;
}

}  // namespace saltus::contact
