// Reference solutions of scenes and the error of a run against them, for `saltus compare`.
//
// A reference solution is a table of positions q^ref(t_k) at the times
//   t_k = k·Δ,  k = 0, 1, …, while t_k ≤ t_end,
// for some or all of the scene's position coordinates (MechanicalSystem::PositionName, e.g.
// "ball.y"). A run is evaluated at the same times on its dense output (SimulationOptions::
// output_step = Δ, which does not change the steps the integrator takes) and its error is the
// largest scaled position error over the reference times and coordinates:
//
//   err = max_k max_i |q_i(t_k) − q^ref_i(t_k)| / (1 + |q^ref_i(t_k)|).
//
// It is a mixed absolute/relative error (absolute for coordinates below 1 m or 1 rad) on
// positions only: positions are continuous across impacts, velocities jump, so a velocity error
// at fixed times measures mainly the impact times. It is defined for runs that reach t_end.
//
// Where the reference comes from (the scene's `reference:` section, tools/scene.h):
//   file      a CSV file `t,<name>,<name>,...` (header, then one row per time, times on the grid
//             k·Δ with Δ the `step` key or else the spacing of the first two rows);
//   analytic  a closed form evaluated here (AnalyticReferenceNames()):
//               bouncing_disk  one body, one disk_line (or point_line at the centre) contact
//                              with the ground, gravity, Newton restitution e: free flights
//                              s(t) = s_k + ṡ_k (t − t_k) + a (t − t_k)²/2 along the contact
//                              normal (a = n·gravity < 0), ṡ⁺ = −e ṡ⁻ at every impact, flights
//                              2 e^j ṡ_1/|a| accumulating at t∞ = t_1 + 2 e ṡ_1/(|a|(1 − e))
//                              (e < 1), then rest on the line; uniform motion along the line
//                              (Haddouni et al. 2017; the Siconos BouncingBallED benchmark);
//               free_body      one body, no joints, forces or contacts (planar or spatial):
//                              centre of mass c(t) = c0 + ċ0 t + g t²/2; planar θ = θ0 + ω t;
//                              spatial with the body-frame ω along a principal axis of inertia
//                              (Euler's equations keep it constant): R(t) = R0 Rot(ω/|ω|, |ω|t);
//               spinning_top   a symmetric body on a spherical joint with the ground, started in
//                              steady precession Ω (J3 ω3 − J1' Ω cos θ) = m g l (Goldstein,
//                              Classical Mechanics, Sec. 5.7): R(t) = Rot(k, Ωt) R0 Rot(e3, ψ̇t),
//                              k = −g/|g|, e3 the body's pivot-to-centre-of-mass axis;
//               slider_crank   the driven spatial slider-crank (crank on a revolute joint with
//                              the ground under an angle driver φ(t), rod with a spherical and a
//                              spherical/universal joint, slider on a prismatic guide): the
//                              crank turns by φ(t) − φ(0) about its axis and the slider solves
//                              |p(t) − w(0) − d u| = L for its travel d (root with d(0) = 0);
//                              the crank's and slider's seven coordinates are compared;
//             spatial quaternions follow the continuous half-angle formula (no sign flips);
//   a run     a tight-tolerance run of a chosen integrator, made by `saltus compare` and written
//             with WriteReferenceCsv, its provenance kept in ReferenceSolution::how.
#pragma once

#include <Eigen/Dense>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/mechanical_system.h"
#include "events/simulation.h"
#include "tools/scene.h"

namespace saltus::tools {

struct ReferenceSolution {
  double step = 0;                 // Δ (s), > 0
  std::vector<double> times;       // t_k, ascending, on the grid k·Δ
  std::vector<std::string> names;  // position coordinates compared
  std::vector<int> columns;        // index of each name in q
  Eigen::MatrixXd values;          // times.size() × names.size(): q^ref_i(t_k)
  std::string how;                 // provenance: "file F", "analytic NAME", "run ..."
};

// The reference grid 0, Δ, 2Δ, … up to t_end (inclusive within 1e-9·Δ). step > 0.
std::vector<double> ReferenceTimes(double t_end, double step);

// Reads a reference CSV for `system`. Throws std::invalid_argument naming the file and line on a
// missing file, unknown column, malformed number, negative times, times not ascending or off
// the grid. Rows past t_end are ignored.
ReferenceSolution LoadReferenceFile(const std::string& path, const engine::MechanicalSystem& system,
                                    double t_end, double step = 0);

// Names of the closed forms AnalyticReference knows.
std::vector<std::string> AnalyticReferenceNames();

// The closed form `name` for the scene, at ReferenceTimes(scene.t_end, step). Throws
// std::invalid_argument naming the scene and the closed form when it is unknown or the scene
// does not fit its assumptions (listed in the header comment).
ReferenceSolution AnalyticReference(const std::string& name, const Scene& scene,
                                    const engine::MechanicalSystem& system, double step);

// Writes `t,<names...>` then one row per time (%.17g).
void WriteReferenceCsv(const ReferenceSolution& reference, std::ostream& out);

// Records the reference coordinates of a run at the reference times. Attach it to a simulation
// whose output_step is reference.step; it picks the output rows whose time is a reference time.
class ReferenceRecorder : public events::Observer {
 public:
  explicit ReferenceRecorder(const ReferenceSolution& reference);
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  // True when every reference time was recorded.
  bool complete() const { return recorded_ == values_.rows(); }
  // err above; +∞ when a reference time is missing.
  double Error() const;
  // The recorded values as a reference (same times and names; `how` given by the caller).
  ReferenceSolution AsReference(std::string how) const;

 private:
  const ReferenceSolution& reference_;
  Eigen::MatrixXd values_;
  std::vector<bool> seen_;
  Eigen::Index recorded_ = 0;
};

}  // namespace saltus::tools
