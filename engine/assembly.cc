#include "engine/assembly.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace saltus::engine {

namespace {

// " residual rows: <row> (<residual>) ...; joints: <item> ..." for the rows whose residual
// exceeds `tolerance` (or is not finite), largest first; fills report->failing_rows and
// failing_items (the item of a row "<item>.<part>").
std::string NameResidualRows(const MechanicalSystem& system, std::span<const int> rows,
                             const Eigen::VectorXd& residual, double tolerance,
                             AssemblyReport* report) {
  std::vector<std::pair<double, int>> large;
  for (Eigen::Index k = 0; k < residual.size(); ++k) {
    if (!(std::abs(residual(k)) <= tolerance)) {
      const double size = std::isfinite(residual(k)) ? std::abs(residual(k)) : HUGE_VAL;
      large.push_back({-size, static_cast<int>(k)});
    }
  }
  std::sort(large.begin(), large.end());
  std::ostringstream out;
  out << " residual rows:";
  for (const auto& [neg, k] : large) {
    const std::string& name = system.constraint_info(rows[static_cast<std::size_t>(k)]).name;
    report->failing_rows.push_back(name);
    const std::string item = name.substr(0, name.find('.'));
    if (std::find(report->failing_items.begin(), report->failing_items.end(), item) ==
        report->failing_items.end()) {
      report->failing_items.push_back(item);
    }
    out << " " << name << " (" << -neg << ")";
  }
  out << "; joints:";
  for (const std::string& item : report->failing_items) out << " " << item;
  return out.str();
}

}  // namespace

AssemblyReport Assemble(const MechanicalSystem& system, double t, std::span<const int> rows,
                        const AssemblyOptions& options, Eigen::VectorXd* q, Eigen::VectorXd* v) {
  if (q->size() != system.nq() || v->size() != system.nv()) {
    throw std::invalid_argument("Assemble: q, v have sizes " + std::to_string(q->size()) + ", " +
                                std::to_string(v->size()) + ", expected " +
                                std::to_string(system.nq()) + ", " + std::to_string(system.nv()));
  }
  if (!(options.tolerance > 0.0) || options.max_iterations < 1 ||
      !(options.rank_tolerance > 0.0 && options.rank_tolerance < 1.0)) {
    throw std::invalid_argument(
        "Assemble: tolerance must be > 0, max_iterations >= 1 and "
        "rank_tolerance in (0, 1)");
  }
  AssemblyReport report;
  if (rows.empty()) return report;

  Eigen::VectorXd qk = *q, g, delta, total = Eigen::VectorXd::Zero(system.nv());
  Eigen::MatrixXd G;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;
  cod.setThreshold(options.rank_tolerance);
  system.ConstraintValues(t, qk, rows, &g);
  double residual = g.lpNorm<Eigen::Infinity>();
  int stalled = 0;
  while (residual > options.tolerance && report.iterations < options.max_iterations) {
    system.ConstraintJacobian(t, qk, rows, &G);
    cod.compute(G);
    delta = -cod.solve(g);
    system.IntegratePosition(qk, delta, 1.0, &qk);
    total += delta;
    ++report.iterations;
    system.ConstraintValues(t, qk, rows, &g);
    const double next = g.lpNorm<Eigen::Infinity>();
    if (!std::isfinite(next)) break;
    // Least-squares iterates of an impossible assembly stop decreasing: give up after a few.
    stalled = next > 0.9 * residual ? stalled + 1 : 0;
    residual = next;
    if (stalled >= 5) break;
  }
  report.position_residual = residual;
  if (!(residual <= options.tolerance)) {
    report.ok = false;
    std::ostringstream out;
    out << "assembly failed: |g|max = " << residual << " after " << report.iterations
        << " iterations;";
    report.message = out.str() + NameResidualRows(system, rows, g, options.tolerance, &report);
    return report;
  }

  // Velocities: ṽ = v − G⁺ (G v + ∂g/∂t).
  Eigen::VectorXd g_t;
  system.ConstraintJacobian(t, qk, rows, &G);
  system.ConstraintTimeDerivative(t, qk, rows, &g_t);
  cod.compute(G);
  report.rank = static_cast<int>(cod.rank());
  const Eigen::VectorXd dv = -cod.solve(G * *v + g_t);
  Eigen::VectorXd vk = *v + dv;
  report.velocity_residual = (G * vk + g_t).lpNorm<Eigen::Infinity>();
  report.velocity_correction = dv.norm();
  report.position_correction = total.norm();
  const double velocity_tolerance = options.tolerance * std::max(1.0, vk.lpNorm<Eigen::Infinity>());
  if (!(report.velocity_residual <= velocity_tolerance)) {
    report.ok = false;
    std::ostringstream out;
    out << "assembly failed: velocity constraints inconsistent, |G v + dg/dt|max = "
        << report.velocity_residual << ";";
    report.message =
        out.str() + NameResidualRows(system, rows, G * vk + g_t, velocity_tolerance, &report);
    return report;
  }
  *q = qk;
  *v = vk;
  return report;
}

}  // namespace saltus::engine
