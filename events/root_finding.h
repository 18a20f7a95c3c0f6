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
// LocateRootWithRates: the same bracket and stopping rule as LocateRoot, for a φ whose rate φ'
// is known at both ends and at every evaluation (an armed or unarmed gap: φ = g or g + τ₀, so
// φ' = ġ = G v + ∂g/∂t, which the dense output's v gives at no extra interpolation). The first
// point is the root of the cubic Hermite interpolant of (φ, φ') on [lo, hi] (error O(h⁴) in the
// sample interval h; exact when φ is a cubic in s, as the gap of a body in free fall is on
// DOPRI5's dense output). Then Newton steps x ← x − φ(x)/φ'(x) inside the bracket, which
// converge quadratically near a simple root; once a Newton step is shorter than tol/2, one
// probe at tol/16 beyond the Newton point on the far side closes the bracket to width < tol
// (both ends then lie within tol/16 of the root, closer than Illinois' final bracket of tol).
// Safeguards: a Newton point outside the open bracket, an evaluation that did not halve |φ|, or
// a probe that did not close the bracket (φ flat to round-off, as the departing form of a
// bounce 1e-13 m high is) falls back to bisection (the bracket halves at least every other
// evaluation, so the loop ends like bisection in the worst case); at most 200 evaluations.
// Typically 2–3 evaluations where Illinois takes 6–10.
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

// φ(lo) = flo > 0 ≥ φ(hi) = fhi, φ'(lo) = dlo, φ'(hi) = dhi; phi_rate(s, &rate) returns φ(s) and
// stores φ'(s). At most 200 evaluations.
template <class PhiRate>
Bracket LocateRootWithRates(double lo, double hi, double flo, double fhi, double dlo, double dhi,
                            double relative_tolerance, PhiRate&& phi_rate) {
  const double tol = relative_tolerance * std::max(1.0, std::abs(hi));
  if (!(hi - lo > tol)) return {lo, hi};
  // The closing probe's distance beyond the Newton point, in units of tol: small, so that the
  // end the caller takes lies within tol/16 of the root, yet far above the round-off of φ near
  // a simple root (|φ'| · tol/16 against ε |g|).
  constexpr double kProbe = 1.0 / 16;
  // Root of the Hermite cubic p(θ) on θ ∈ [0, 1], p(0) = flo > 0 ≥ p(1) = fhi, located by
  // LocateRoot itself (polynomial evaluations only) to round-off of θ.
  const double h = hi - lo;
  const auto hermite = [&](double th) {
    const double th2 = th * th, th3 = th2 * th;
    return (2 * th3 - 3 * th2 + 1) * flo + (th3 - 2 * th2 + th) * h * dlo +
           (-2 * th3 + 3 * th2) * fhi + (th3 - th2) * h * dhi;
  };
  double x = 0.5 * (lo + hi);
  if (std::isfinite(dlo) && std::isfinite(dhi)) {
    const Bracket th = LocateRoot(0.0, 1.0, flo, fhi, 1e-15, hermite);
    x = lo + h * (0.5 * (th.lo + th.hi));
  }
  double f_before = std::numeric_limits<double>::infinity();
  bool probing = false, probed = false;  // the next point is / the current one was the probe
  for (int it = 0; it < 200 && hi - lo > tol; ++it) {
    if (!(x > lo && x < hi)) x = 0.5 * (lo + hi);
    double rate = 0.0;
    const double fx = phi_rate(x, &rate);
    if (fx > 0) {
      lo = x;
    } else {
      hi = x;
    }
    if (!(hi - lo > tol)) break;
    double next = x - fx / rate;
    if (probed) {
      // The probe landed on the side of the Newton point: φ is flat to round-off there (a
      // plateau of exact zeros, or noise above |φ'| tol/16): bisect.
      next = 0.5 * (lo + hi);
    } else if (std::isfinite(next) && std::abs(next - x) < 0.5 * tol) {
      // Converged to within round-off of the root (the Newton point may even round to x): probe
      // just beyond it on the far side, at most half way to the far end.
      next = fx > 0 ? std::min(next + kProbe * tol, 0.5 * (x + hi))
                    : std::max(next - kProbe * tol, 0.5 * (lo + x));
      probing = true;
    } else if (!std::isfinite(next) || !(next > lo && next < hi) || std::abs(fx) > 0.5 * f_before) {
      next = 0.5 * (lo + hi);  // outside the bracket, or no progress: bisect
    }
    f_before = std::abs(fx);
    probed = probing;
    probing = false;
    x = next;
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
