#include "contact/friction_cone.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "contact/small_lp.h"

namespace saltus::contact {

std::string_view ToString(ContactMode mode) {
  switch (mode) {
    case ContactMode::kOpen:
      return "open";
    case ContactMode::kClosed:
      return "closed";
    case ContactMode::kStick:
      return "stick";
    case ContactMode::kSlip:
      return "slip";
  }
  return "unknown";
}

std::string_view ToString(Solvability s) {
  switch (s) {
    case Solvability::kUnique:
      return "unique";
    case Solvability::kSolved:
      return "solved (uniqueness not examined)";
    case Solvability::kIndeterminate:
      return "indeterminate";
    case Solvability::kInconsistent:
      return "inconsistent";
    case Solvability::kNoSolutionFound:
      return "no solution found";
  }
  return "unknown";
}

namespace {

// Tangential part of a contact's rows of v (num_tangents entries, the rest 0).
Eigen::Vector2d Tangential(const LocalContact& c, const Eigen::VectorXd& v) {
  Eigen::Vector2d t = Eigen::Vector2d::Zero();
  for (int k = 0; k < c.num_tangents; ++k) t[k] = v[c.tangents[static_cast<std::size_t>(k)]];
  return t;
}

// Projection onto K_μ = {‖x_T‖ ≤ μ x_N} (x_T in R¹ or R², unused entries 0).
void ProjectOntoCone(double mu, double* x_n, Eigen::Vector2d* x_t) {
  const double nt = x_t->norm();
  if (nt <= mu * *x_n) return;
  if (mu * nt <= -*x_n) {
    *x_n = 0.0;
    x_t->setZero();
    return;
  }
  const double alpha = (*x_n + mu * nt) / (1.0 + mu * mu);
  *x_n = alpha;
  *x_t *= mu * alpha / nt;
}

void ValidateProblem(const LocalProblem& p) {
  const Eigen::Index m = p.b.size();
  if (p.W.rows() != m || p.W.cols() != m) {
    throw std::invalid_argument("local friction problem: W is " + std::to_string(p.W.rows()) +
                                " x " + std::to_string(p.W.cols()) + ", b has " +
                                std::to_string(m) + " entries");
  }
  if (!p.W.allFinite() || !p.b.allFinite()) {
    throw std::invalid_argument("local friction problem: non-finite entry in W or b");
  }
  for (const LocalContact& c : p.contacts) {
    bool bad = c.normal < 0 || c.normal >= m || c.num_tangents < 0 || c.num_tangents > 2 ||
               !(c.mu >= 0.0) || !std::isfinite(c.mu);
    for (int k = 0; k < c.num_tangents && !bad; ++k) {
      const int t = c.tangents[static_cast<std::size_t>(k)];
      bad = t < 0 || t >= m;
    }
    if (bad) throw std::invalid_argument("local friction problem: bad contact rows or mu");
  }
}

}  // namespace

double CoulombResidual(const LocalProblem& p, const Eigen::VectorXd& z, const Eigen::VectorXd& w) {
  double worst = 0.0;
  for (const LocalContact& c : p.contacts) {
    const double zn = z[c.normal], wn = w[c.normal];
    if (!c.stick_candidate()) {
      worst = std::max(worst, std::abs(std::min(zn, wn)));
      continue;
    }
    const Eigen::Vector2d zt = Tangential(c, z), wt = Tangential(c, w);
    // z − P_K(z − û), û = w + μ‖w_T‖ e_N.
    double x_n = zn - (wn + c.mu * wt.norm());
    Eigen::Vector2d x_t = zt - wt;
    ProjectOntoCone(c.mu, &x_n, &x_t);
    worst = std::max(worst, std::hypot(zn - x_n, (zt - x_t).norm()));
  }
  const double scale = std::max(1.0, p.b.size() > 0 ? p.b.lpNorm<Eigen::Infinity>() : 0.0);
  return worst / scale;
}

FacetedLcp BuildFacetedLcp(const LocalProblem& p, int facets) {
  ValidateProblem(p);
  FacetedLcp lcp;
  int n = 0;
  for (const LocalContact& c : p.contacts) {
    const int N = !c.stick_candidate() ? 0 : (c.num_tangents == 1 ? 2 : facets);
    if (c.stick_candidate() && c.num_tangents == 2 && facets < 3) {
      throw std::invalid_argument("BuildFacetedLcp: facets must be >= 3");
    }
    lcp.first.push_back(n);
    lcp.facets.push_back(N);
    n += 1 + (N > 0 ? N + 1 : 0);
  }
  const Eigen::Index m = p.b.size();
  lcp.S.setZero(m, n);
  Eigen::MatrixXd P = Eigen::MatrixXd::Zero(n, m);  // picks w_N and D_kᵀ w_T
  for (std::size_t i = 0; i < p.contacts.size(); ++i) {
    const LocalContact& c = p.contacts[i];
    const int f = lcp.first[i], N = lcp.facets[i];
    lcp.S(c.normal, f) = 1.0;
    P(f, c.normal) = 1.0;
    if (c.sliding && c.frictional()) {
      for (int k = 0; k < c.num_tangents; ++k) {
        lcp.S(c.tangents[static_cast<std::size_t>(k)], f) = -c.mu * c.direction[k];
      }
    }
    for (int k = 0; k < N; ++k) {
      const double angle = 2.0 * std::numbers::pi * k / N;
      const Eigen::Vector2d d = c.num_tangents == 1
                                    ? Eigen::Vector2d(k == 0 ? 1.0 : -1.0, 0.0)
                                    : Eigen::Vector2d(std::cos(angle), std::sin(angle));
      for (int j = 0; j < c.num_tangents; ++j) {
        lcp.S(c.tangents[static_cast<std::size_t>(j)], f + 1 + k) = d[j];
        P(f + 1 + k, c.tangents[static_cast<std::size_t>(j)]) = d[j];
      }
    }
  }
  lcp.M = P * p.W * lcp.S;
  lcp.q = P * p.b;
  for (std::size_t i = 0; i < p.contacts.size(); ++i) {
    const int f = lcp.first[i], N = lcp.facets[i];
    if (N == 0) continue;
    const int sigma = f + N + 1;
    for (int k = 0; k < N; ++k) {
      lcp.M(f + 1 + k, sigma) = 1.0;
      lcp.M(sigma, f + 1 + k) = -1.0;
    }
    lcp.M(sigma, f) = p.contacts[i].mu;
  }
  return lcp;
}

namespace {

// Basic unknowns (offsets from the contact's first unknown) of each pattern of a contact
// (friction_cone.h, "Enumeration").
std::vector<std::vector<int>> Patterns(int N) {
  if (N == 0) return {{0}, {}};
  std::vector<std::vector<int>> out;
  out.push_back({N + 1});  // open
  std::vector<int> stick{0};
  for (int k = 0; k < N; ++k) stick.push_back(1 + k);
  out.push_back(stick);
  for (int k = 0; k < N; ++k) out.push_back({0, 1 + k, N + 1});  // slip on vertex k
  if (N >= 3) {
    for (int k = 0; k < N; ++k) {  // slip on edge (k, k+1)
      std::vector<int> edge{0, 1 + k, 1 + (k + 1) % N, N + 1};
      std::sort(edge.begin(), edge.end());
      out.push_back(edge);
    }
  }
  return out;
}

// W = Rᵀ R (rows of R for the positive eigenvalues).
Eigen::MatrixXd SquareRootFactor(const Eigen::MatrixXd& W, double* lambda_max) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(W);
  const Eigen::VectorXd& l = eig.eigenvalues();
  *lambda_max = l.size() > 0 ? std::max(0.0, l.maxCoeff()) : 0.0;
  std::vector<Eigen::Index> keep;
  for (Eigen::Index i = 0; i < l.size(); ++i) {
    if (l[i] > 1e-14 * *lambda_max) keep.push_back(i);
  }
  Eigen::MatrixXd R(static_cast<Eigen::Index>(keep.size()), W.rows());
  for (std::size_t r = 0; r < keep.size(); ++r) {
    R.row(static_cast<Eigen::Index>(r)) =
        std::sqrt(l[keep[r]]) * eig.eigenvectors().col(keep[r]).transpose();
  }
  return R;
}

}  // namespace

namespace {

// T⁺ − T₀ = cᵀz + ½ zᵀWz at z = S x (friction_cone.h, "Choice among solutions").
double EnergyOf(const LocalProblem& p, const FacetedLcp& lcp, const Eigen::VectorXd& x) {
  const Eigen::VectorXd z = lcp.S * x;
  return p.energy_rate.dot(z) + 0.5 * z.dot(p.W * z);
}

// Frank–Wolfe on the polyhedron of the pattern `alpha` (the feasible LP `lp`, whose first
// alpha.size() unknowns are x_α), from its current vertex: the LP of the gradient gives the
// vertex s, the exact line search on the convex quadratic the step. `to_x` maps the LP's
// unknowns to x. Returns the last iterate, its energy in *f.
template <class ToX>
Eigen::VectorXd LeastEnergyOnPolyhedron(const LocalProblem& p, const FacetedLcp& lcp,
                                        const std::vector<int>& alpha, SmallLp* lp, const ToX& to_x,
                                        double* f) {
  constexpr int kMaxIterations = 200;
  Eigen::VectorXd x = to_x(lp->x());
  *f = EnergyOf(p, lcp, x);
  const auto n = static_cast<Eigen::Index>(lp->x().size());
  Eigen::VectorXd c = Eigen::VectorXd::Zero(n);
  for (int it = 0; it < kMaxIterations; ++it) {
    const Eigen::VectorXd gradient = lcp.S.transpose() * (p.W * (lcp.S * x) + p.energy_rate);
    for (std::size_t j = 0; j < alpha.size(); ++j) {
      c[static_cast<Eigen::Index>(j)] = gradient[alpha[j]];
    }
    if (lp->Minimize(c) != LpStatus::kOptimal) break;  // unbounded only along constant velocity
    const Eigen::VectorXd d = to_x(lp->x()) - x;
    const double slope = gradient.dot(d);  // −(duality gap)
    if (-slope <= kEnergyTieTolerance * std::max(std::abs(*f), 1e-300)) break;
    const Eigen::VectorXd Sd = lcp.S * d;
    const double curvature = Sd.dot(p.W * Sd);
    const double step = curvature > 0.0 ? std::min(1.0, -slope / curvature) : 1.0;
    x += step * d;
    *f = EnergyOf(p, lcp, x);
  }
  return x;
}

}  // namespace

long CountCombinations(const FacetedLcp& lcp, long max_combinations) {
  long count = 1;
  for (int N : lcp.facets) {
    count *= static_cast<long>(Patterns(N).size());
    if (count > max_combinations) return max_combinations + 1;
  }
  return count;
}

LocalEnumeration EnumerateSolutions(const LocalProblem& p, const FacetedLcp& lcp, double tolerance,
                                    bool find_most_impulsive) {
  LocalEnumeration out;
  out.complete = true;
  const auto n = static_cast<int>(lcp.q.size());
  const std::size_t nc = p.contacts.size();
  std::vector<std::vector<std::vector<int>>> patterns(nc);
  for (std::size_t i = 0; i < nc; ++i) patterns[i] = Patterns(lcp.facets[i]);
  double lambda_max = 0.0;
  const Eigen::MatrixXd RS = SquareRootFactor(p.W, &lambda_max) * lcp.S;  // r × n
  const double b_scale = p.b.size() > 0 ? p.b.lpNorm<Eigen::Infinity>() : 0.0;
  double v_scale = lambda_max > 0.0 ? b_scale / std::sqrt(lambda_max) : 0.0;
  std::vector<Eigen::VectorXd> velocities;  // R z of each stored solution
  const bool has_energy = p.energy_rate.size() == p.b.size() && p.b.size() > 0;
  // Two velocities are told apart above 1e-6 of their scale and above what the feasibility
  // tolerance resolves: ‖W Δz‖ ≤ √λ_max ‖R Δz‖, so ‖R Δz‖ ≤ tolerance/√λ_max is a difference of
  // w within the tolerance (round-off-sized problems, b ~ 1e-15, are not indeterminate).
  const double floor = lambda_max > 0.0 ? tolerance / std::sqrt(lambda_max) : 0.0;
  const auto Resolution = [floor](double scale) { return std::max(1e-6 * scale, floor); };
  double best_impulse = -1.0;

  std::vector<std::size_t> choice(nc, 0);
  std::vector<int> alpha;
  std::vector<char> basic(static_cast<std::size_t>(n));
  for (bool more = true; more;) {
    ++out.combinations;
    alpha.clear();
    std::fill(basic.begin(), basic.end(), 0);
    for (std::size_t i = 0; i < nc; ++i) {
      for (int off : patterns[i][choice[i]]) {
        alpha.push_back(lcp.first[i] + off);
        basic[static_cast<std::size_t>(lcp.first[i] + off)] = 1;
      }
    }
    // Unknowns ξ = (x_α, slacks of the other rows): [M_·α  −I_·ᾱ] ξ = −q, ξ ≥ 0.
    const auto na = static_cast<Eigen::Index>(alpha.size());
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
    for (Eigen::Index j = 0; j < na; ++j) A.col(j) = lcp.M.col(alpha[static_cast<std::size_t>(j)]);
    Eigen::Index col = na;
    for (int i = 0; i < n; ++i) {
      if (!basic[static_cast<std::size_t>(i)]) A(i, col++) = -1.0;
    }
    SmallLp lp(A, -lcp.q, tolerance);
    if (lp.phase1_status() == LpStatus::kIterationLimit) out.complete = false;
    if (lp.feasible()) {
      const auto to_x = [&](const Eigen::VectorXd& xi) {
        Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
        for (Eigen::Index j = 0; j < na; ++j) x[alpha[static_cast<std::size_t>(j)]] = xi[j];
        return x;
      };
      const Eigen::VectorXd x = to_x(lp.x());
      const Eigen::VectorXd v = RS * x;
      v_scale = std::max(v_scale, v.norm());
      bool distinct = true;
      for (const Eigen::VectorXd& u : velocities) {
        if ((u - v).norm() <= Resolution(v_scale)) distinct = false;
      }
      if (distinct) {
        velocities.push_back(v);
        out.solutions.push_back(x);
      }
      // The velocity inside this polyhedron: every row of R S bounded and constant?
      Eigen::VectorXd c = Eigen::VectorXd::Zero(n);
      bool varies = false;
      for (Eigen::Index r = 0; r < RS.rows() && !varies; ++r) {
        for (Eigen::Index j = 0; j < na; ++j) c[j] = RS(r, alpha[static_cast<std::size_t>(j)]);
        const LpStatus lo_status = lp.Minimize(c);
        const double lo = c.dot(lp.x());
        const LpStatus hi_status = lp.Minimize(-c);
        const double hi = c.dot(lp.x());
        if (lo_status == LpStatus::kIterationLimit || hi_status == LpStatus::kIterationLimit) {
          out.complete = false;
        } else if (lo_status == LpStatus::kUnbounded || hi_status == LpStatus::kUnbounded ||
                   hi - lo > Resolution(v_scale)) {
          varies = true;
        }
      }
      out.continuum = out.continuum || varies;
      if (has_energy) {
        // The least T⁺ − T₀ over this polyhedron (friction_cone.h, "Choice among solutions"):
        // the vertex found first when the velocity is constant on it, else Frank–Wolfe.
        double f = EnergyOf(p, lcp, x);
        const Eigen::VectorXd x_min =
            varies ? LeastEnergyOnPolyhedron(p, lcp, alpha, &lp, to_x, &f) : x;
        const double scale = std::max(std::abs(f), std::abs(out.least_energy_value));
        if (out.least_energy.size() == 0 ||
            f < out.least_energy_value - kEnergyTieTolerance * scale) {
          out.least_energy = x_min;
          out.least_energy_value = f;
        }
      }
      if (find_most_impulsive) {
        c.setZero();
        for (Eigen::Index j = 0; j < na; ++j) {
          const int u = alpha[static_cast<std::size_t>(j)];
          for (std::size_t i = 0; i < nc; ++i) {
            if (lcp.first[i] == u) c[j] = -1.0;  // maximize Σ z_N
          }
        }
        if (lp.Minimize(c) == LpStatus::kOptimal) {
          const Eigen::VectorXd xi = lp.x();
          if (-c.dot(xi) > best_impulse) {
            best_impulse = -c.dot(xi);
            out.most_impulsive = to_x(xi);
          }
        }
      }
    }
    // Next combination (odometer).
    more = false;
    for (std::size_t i = 0; i < nc; ++i) {
      if (++choice[i] < patterns[i].size()) {
        more = true;
        break;
      }
      choice[i] = 0;
    }
  }
  return out;
}

namespace {

// Siconos fc3d on 3 unknowns per contact (friction_cone.h, "Exact cone"): z = S3 r.
LocalResult SolveExactCone(const LocalProblem& p, const LocalOptions& options) {
  const Eigen::Index m = p.b.size();
  const auto nc = static_cast<Eigen::Index>(p.contacts.size());
  Eigen::MatrixXd S3 = Eigen::MatrixXd::Zero(m, 3 * nc);
  Eigen::MatrixXd P3 = Eigen::MatrixXd::Zero(3 * nc, m);
  Eigen::VectorXd mu = Eigen::VectorXd::Zero(nc);
  for (Eigen::Index i = 0; i < nc; ++i) {
    const LocalContact& c = p.contacts[static_cast<std::size_t>(i)];
    S3(c.normal, 3 * i) = 1.0;
    P3(3 * i, c.normal) = 1.0;
    if (c.stick_candidate()) {
      mu[i] = c.mu;
      for (int k = 0; k < c.num_tangents; ++k) {
        S3(c.tangents[static_cast<std::size_t>(k)], 3 * i + 1 + k) = 1.0;
        P3(3 * i + 1 + k, c.tangents[static_cast<std::size_t>(k)]) = 1.0;
      }
    } else if (c.sliding && c.frictional()) {
      for (int k = 0; k < c.num_tangents; ++k) {
        S3(c.tangents[static_cast<std::size_t>(k)], 3 * i) = -c.mu * c.direction[k];
      }
    }
  }
  Eigen::MatrixXd M = P3 * p.W * S3;
  const Eigen::VectorXd q = P3 * p.b;
  // Inert unknowns (no row): a unit-scaled diagonal keeps M regular; with q = 0 they stay 0.
  const double diag = m > 0 && p.W.diagonal().maxCoeff() > 0.0 ? p.W.diagonal().mean() : 1.0;
  for (Eigen::Index j = 0; j < 3 * nc; ++j) {
    if (S3.col(j).cwiseAbs().maxCoeff() == 0.0) M(j, j) = diag > 0.0 ? diag : 1.0;
  }
  Eigen::VectorXd r0 = Eigen::VectorXd::Zero(3 * nc);
  if (options.warm_start != nullptr && options.warm_start->size() == m) {
    r0 = P3 * *options.warm_start;  // normal and frictional tangential entries
  }
  // Siconos' own error measure may accept an answer whose natural-map residual (ours) is above
  // the tolerance: tighten its tolerance and continue from its answer, at most twice.
  Fc3dOptions fo;
  fo.tolerance = options.tolerance;
  fo.max_iterations = std::min(options.max_iterations, 200);
  LocalResult out;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const Fc3dResult fr = SolveFrictionContact3d(M, q, mu, fo, &r0);
    out.z = S3 * fr.r;
    out.w = p.W * out.z + p.b;
    out.iterations += fr.iterations;
    out.message += (out.message.empty() ? "" : "; ") + fr.message;
    if (!fr.r.allFinite() || CoulombResidual(p, out.z, out.w) <= options.tolerance) break;
    r0 = fr.r;
    fo.tolerance *= 1e-2;
  }
  return out;
}

// Lemke's method on the faceted LCP: the lexicographic implementation of contact/small_lp.h
// (finite on these problems, friction_cone.h "Faceted LCP"), then Siconos' Lemke with its
// fallbacks if that stops on a ray.
LocalResult SolveFacetedByLemke(const LocalProblem& p, const FacetedLcp& lcp,
                                const LocalOptions& options) {
  LocalResult out;
  const LemkeResult own = SolveLcpByLemke(lcp.M, lcp.q, options.max_iterations);
  out.x = own.z;
  out.iterations = own.pivots;
  out.message = own.ok ? "lemke" : (own.ray ? "lemke: secondary ray" : "lemke: pivot limit");
  const Eigen::VectorXd w = lcp.M * own.z + lcp.q;
  const double scale = std::max(1.0, lcp.q.size() > 0 ? lcp.q.lpNorm<Eigen::Infinity>() : 0.0);
  const bool own_ok = own.ok && (own.z.size() == 0 || own.z.cwiseMin(w).cwiseAbs().maxCoeff() <=
                                                          options.tolerance * scale);
  if (!own_ok) {
    LcpOptions lo;
    lo.tolerance = options.tolerance;
    lo.max_iterations = options.max_iterations;
    const LcpResult r = SolveLcp(lcp.M, lcp.q, lo);
    out.message += "; siconos " + (r.ok ? std::string("solved") : r.message);
    if (r.ok) {
      out.x = r.z;
      out.iterations += r.iterations;
    }
  }
  out.z = lcp.S * out.x;
  out.w = p.W * out.z + p.b;
  return out;
}

// Modes from z and w (friction_cone.h, ContactMode), with w-tolerance tol_w.
void DecideModes(const LocalProblem& p, double tol_w, LocalResult* r) {
  r->modes.assign(p.contacts.size(), ContactMode::kOpen);
  r->directions.assign(p.contacts.size(), Eigen::Vector2d::Zero());
  for (std::size_t i = 0; i < p.contacts.size(); ++i) {
    const LocalContact& c = p.contacts[i];
    const double force_as_rate = r->z[c.normal] * std::max(p.W(c.normal, c.normal), 0.0);
    if (force_as_rate <= tol_w && r->w[c.normal] > tol_w) continue;  // open
    if (!c.frictional()) {
      r->modes[i] = ContactMode::kClosed;
    } else if (c.sliding) {
      r->modes[i] = ContactMode::kSlip;
      r->directions[i] = c.direction;
    } else {
      const Eigen::Vector2d wt = Tangential(c, r->w);
      if (wt.norm() <= tol_w) {
        r->modes[i] = ContactMode::kStick;
      } else {
        r->modes[i] = ContactMode::kSlip;
        r->directions[i] = wt.normalized();
      }
    }
  }
}

bool NeedsExactCone(const LocalProblem& p, const LocalOptions& options) {
  if (options.cone != FrictionCone::kExact) return false;
  return std::any_of(p.contacts.begin(), p.contacts.end(), [](const LocalContact& c) {
    return c.stick_candidate() && c.num_tangents == 2;
  });
}

bool Monotone(const LocalProblem& p) {
  return std::none_of(p.contacts.begin(), p.contacts.end(),
                      [](const LocalContact& c) { return c.frictional(); });
}

// The residual of the law solved (friction_cone.h, "Residual"): the faceted LCP's own natural map
// when a contact has a polygonal cone and the LCP unknowns are known, else CoulombResidual.
double LawResidual(const LocalProblem& p, const FacetedLcp& lcp, bool polygonal,
                   const LocalResult& r) {
  if (!r.z.allFinite() || !r.w.allFinite()) return std::numeric_limits<double>::infinity();
  if (!polygonal || r.x.size() == 0) return CoulombResidual(p, r.z, r.w);
  const Eigen::VectorXd w = lcp.M * r.x + lcp.q;
  const double scale = std::max(1.0, lcp.q.lpNorm<Eigen::Infinity>());
  return r.x.cwiseMin(w).cwiseAbs().maxCoeff() / scale;
}

// An enumerated vertex solves its pattern's LP to the LP's feasibility tolerance (tol_w, ten
// times the residual tolerance), so at noise scale (impulses of 1e-10) its residual can exceed
// the tolerance. One least-squares correction on its support S (the positive unknowns) makes
// their rows exactly complementary: M_SS δ = −(M x + q)_S with the minimum-norm δ (M_SS may be
// singular: identical rows of W, redundant contacts, give identical rows of M). Returns x + δ
// when it stays ≥ 0, else x.
Eigen::VectorXd PolishOnSupport(const FacetedLcp& lcp, const Eigen::VectorXd& x) {
  std::vector<Eigen::Index> support;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (x[i] > 0.0) support.push_back(i);
  }
  if (support.empty()) return x;
  const Eigen::VectorXd w = lcp.M * x + lcp.q;
  const auto ns = static_cast<Eigen::Index>(support.size());
  Eigen::MatrixXd A(ns, ns);
  Eigen::VectorXd rhs(ns);
  for (Eigen::Index a = 0; a < ns; ++a) {
    const Eigen::Index i = support[static_cast<std::size_t>(a)];
    rhs[a] = -w[i];
    for (Eigen::Index b = 0; b < ns; ++b) A(a, b) = lcp.M(i, support[static_cast<std::size_t>(b)]);
  }
  const Eigen::VectorXd delta = A.completeOrthogonalDecomposition().solve(rhs);
  Eigen::VectorXd polished = x;
  for (Eigen::Index a = 0; a < ns; ++a) polished[support[static_cast<std::size_t>(a)]] += delta[a];
  return polished.allFinite() && polished.minCoeff() >= 0.0 ? polished : x;
}

// Classification from the enumeration, folding in the primary solution when it is one.
void Classify(const LocalProblem& p, const FacetedLcp& lcp, const LocalOptions& options,
              bool polygonal, double tol_w, LocalResult* r) {
  const LocalEnumeration e = EnumerateSolutions(p, lcp, tol_w, options.prefer_impulsive);
  r->combinations = e.combinations;
  r->solutions = static_cast<int>(e.solutions.size());
  if (!e.complete) {
    r->status = r->ok ? Solvability::kSolved : Solvability::kNoSolutionFound;
    r->message += "; enumeration incomplete (LP iteration limit)";
    return;
  }
  const auto set = [&](const Eigen::VectorXd& x) {
    r->x = x;
    r->z = lcp.S * x;
    r->w = p.W * r->z + p.b;
    r->residual = LawResidual(p, lcp, polygonal, *r);
    r->ok = r->residual <= options.tolerance;
  };
  // The vertex, polished on its support when the LP's tolerance leaves it above the tolerance.
  const auto use = [&](const Eigen::VectorXd& x) {
    set(x);
    if (r->ok) return;
    const double vertex_residual = r->residual;
    set(PolishOnSupport(lcp, x));
    if (!(r->residual < vertex_residual)) set(x);
  };
  // A chosen vertex whose residual stays above the tolerance after the correction (a
  // Frank–Wolfe point inside a polyhedron, to the LP's tolerance) gives way to the solver's
  // answer when that one meets it, and the message says so.
  const auto prefer = [&](const Eigen::VectorXd& x, const std::string& which) {
    const LocalResult solver = *r;
    use(x);
    r->message += "; " + which;
    if (!r->ok && solver.ok) {
      *r = solver;
      r->message += "; " + which + " missed the tolerance, the solver's kept";
    }
  };
  const bool several = e.solutions.size() > 1 || e.continuum;
  if (options.prefer_impulsive && e.most_impulsive.size() > 0) {
    prefer(e.most_impulsive, "the enumerated solution with the largest normal impulse");
  } else if (several && e.least_energy.size() > 0) {
    prefer(e.least_energy, "the solution of least kinetic energy");
  } else if (!r->ok && !e.solutions.empty()) {
    use(e.solutions.front());
    r->message += "; solution taken from the enumeration";
  }
  if (e.solutions.empty()) {
    r->status = r->ok ? Solvability::kSolved : Solvability::kInconsistent;
    if (r->ok) r->message += "; the enumeration found no solution but the solver did";
  } else if (several) {
    r->status = Solvability::kIndeterminate;
  } else {
    r->status = r->ok ? Solvability::kUnique : Solvability::kNoSolutionFound;
  }
}

}  // namespace

LocalResult SolveLocal(const LocalProblem& p, const LocalOptions& options) {
  ValidateProblem(p);
  const Eigen::Index m = p.b.size();
  const double scale = std::max(1.0, m > 0 ? p.b.lpNorm<Eigen::Infinity>() : 0.0);
  // Mode and feasibility threshold on w: a margin of 10 over the residual tolerance.
  const double tol_w = 10.0 * options.tolerance * scale;
  const bool exact_cone = NeedsExactCone(p, options);
  const bool polygonal =
      !exact_cone && std::any_of(p.contacts.begin(), p.contacts.end(), [](const LocalContact& c) {
        return c.stick_candidate() && c.num_tangents == 2;
      });

  bool pushed = false;  // some normal row has b_N < 0
  for (const LocalContact& c : p.contacts) pushed = pushed || p.b[c.normal] < 0.0;
  LocalResult r;
  FacetedLcp lcp;
  if (!exact_cone) lcp = BuildFacetedLcp(p, options.facets);
  if (!pushed) {
    // z = 0 satisfies every law: with z_N = 0 the cone forces z_T = 0 whatever w_T is.
    r.z = Eigen::VectorXd::Zero(m);
    r.w = p.b;
    r.message = "nothing approaches or pushes: z = 0";
  } else if (exact_cone) {
    r = SolveExactCone(p, options);
  } else {
    r = SolveFacetedByLemke(p, lcp, options);
  }
  r.residual = LawResidual(p, lcp, polygonal, r);
  r.ok = r.residual <= options.tolerance;

  const bool enumerable =
      !exact_cone && options.diagnose &&
      CountCombinations(lcp, options.max_combinations) <= options.max_combinations;
  if (enumerable && (!Monotone(p) || !r.ok || options.prefer_impulsive)) {
    Classify(p, lcp, options, polygonal, tol_w, &r);
  } else if (Monotone(p)) {
    r.status = r.ok ? Solvability::kUnique : Solvability::kNoSolutionFound;
  } else {
    r.status = r.ok ? Solvability::kSolved : Solvability::kNoSolutionFound;
  }
  DecideModes(p, tol_w, &r);
  return r;
}

}  // namespace saltus::contact
