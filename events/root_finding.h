// Location of the roots of event (witness) functions on an integrator's dense output.
//
// LocateRoot: the Illinois variant of regula falsi (Dowell & Jarratt 1971) on a bracket
// [lo, hi] with φ(lo) > 0 ≥ φ(hi): the secant point m replaces the end of its sign, and when the
// same end is kept twice its value is halved, so the bracket shrinks superlinearly (order ≈ 1.44)
// also on convex or concave φ. It stops when hi − lo ≤ ε_r · max(1, |hi|) (ε_r the relative root
// tolerance of SimulationOptions) and returns the final bracket: φ(lo) > 0 ≥ φ(hi) still holds,
// so the caller takes the end that suits the event (an impact takes lo, where the gap is still
// ≥ 0; a take-off hi, where the force has reached 0).
//
// FindGapDip: the tunnelling guard for a gap g sampled positive at both ends of [lo, hi] with
// ġ(lo) < 0 < ġ(hi): g has a minimum inside, which may lie below 0 (a fast body through a thin
// obstacle). A golden-section search for the minimum either finds a point with g ≤ 0 — then
// [lo, that point] brackets the crossing, located by LocateRoot on φ — or stops as soon as the
// bracket is too short for g to reach 0 at the largest end rate `rate_bound` (the rate runs from
// −|ġ(lo)| to +|ġ(hi)| through the minimum), which costs a body passing by a few evaluations; the
// same test on [lo, hi] itself with the end gaps decides before any evaluation. Not caught: a
// crossing and a turning point of the approach inside one sample interval.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace saltus::events {

struct Bracket {
  double lo = 0, hi = 0;
};

// φ(lo) = flo > 0 ≥ φ(hi) = fhi; phi(s) evaluates φ at s. At most 200 iterations.
template <class Phi>
Bracket LocateRoot(double lo, double hi, double flo, double fhi, double relative_tolerance,
                   Phi&& phi) {
  const double tol = relative_tolerance * std::max(1.0, std::abs(hi));
  int side = 0;
  for (int it = 0; it < 200 && hi - lo > tol; ++it) {
    double m = (lo * fhi - hi * flo) / (fhi - flo);
    if (!(m > lo && m < hi)) m = 0.5 * (lo + hi);
    const double fmid = phi(m);
    if (fmid > 0) {
      lo = m;
      flo = fmid;
      if (side == -1) fhi *= 0.5;
      side = -1;
    } else {
      hi = m;
      fhi = fmid;
      if (side == 1) flo *= 0.5;
      side = 1;
    }
  }
  return {lo, hi};
}

// g(lo) = g_lo > 0, g(hi) = g_hi > 0, rate_bound = max(−ġ(lo), ġ(hi)); gap(s) evaluates g and
// phi(s) the event function whose root is located (φ(lo) taken as g_lo). Returns the left end of
// the located crossing, or +∞ when the gap stays positive.
template <class Gap, class Phi>
double FindGapDip(double lo, double hi, double g_lo, double g_hi, double rate_bound,
                  double relative_tolerance, Gap&& gap, Phi&& phi) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if ((hi - lo) * rate_bound < std::min(g_lo, g_hi)) return kInf;
  const double tol = relative_tolerance * std::max(1.0, std::abs(hi));
  constexpr double kInvPhi = 0.6180339887498949;  // (√5 − 1)/2
  const double t_lo = lo;
  double x1 = hi - kInvPhi * (hi - lo), x2 = lo + kInvPhi * (hi - lo);
  double f1 = gap(x1), f2 = gap(x2);
  while (hi - lo > tol && (hi - lo) * rate_bound >= std::min(f1, f2)) {
    if (f1 <= 0.0 || f2 <= 0.0) {
      const double t_cross = f1 <= 0.0 ? x1 : x2;
      return LocateRoot(t_lo, t_cross, g_lo, f1 <= 0.0 ? f1 : f2, relative_tolerance, phi).lo;
    }
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - kInvPhi * (hi - lo);
      f1 = gap(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + kInvPhi * (hi - lo);
      f2 = gap(x2);
    }
  }
  return kInf;
}

}  // namespace saltus::events
