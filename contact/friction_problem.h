// Impact and contact problems with Coulomb friction at the rows of a MechanicalSystem, and the
// diagnosis of their Painlevé cases (issue 17 §4, issue 18 §3).
//
// Contacts are given as a unilateral (normal) row with 0, 1 (plane) or 2 (space) tangential rows
// of engine::ConstraintKind::kTangential (ġ_T = G_T v + ∂g_T/∂t), a friction coefficient μ and,
// for impacts, a restitution coefficient e. Bilateral rows are equalities, eliminated as in
// contact/impact_problem.h (contact/delassus.h): with W the Delassus matrix of the contact rows
// after that elimination and b the contact rows' rate without contact forces, w = W z + b, and
// the contact law of contact/friction_cone.h is solved on (W, b), one independent component (the
// contacts coupled through W ≠ 0) at a time.
//
// Impact (Newton + Coulomb, tangential restitution 0): with u⁻ = G v⁻ + ∂g/∂t,
//   v⁺ = v⁻ + M⁻¹ (G_Bᵀ P_B + G_Nᵀ P_N + G_Tᵀ P_T),   u_B⁺ = 0,
//   0 ≤ u_N⁺ + e u_N⁻ ⊥ P_N ≥ 0,
//   ‖P_T‖ ≤ μ P_N, and u_T⁺ = 0 or P_T = −μ P_N u_T⁺/‖u_T⁺‖,
// i.e. the law of friction_cone.h with w = (u_N⁺ + e u_N⁻, u_T⁺). The kinetic energy changes by
//   ΔT = T⁺ − T⁻ = ½ (v⁺ − v⁻)ᵀ M (v⁺ + v⁻) = P_N u_N⁺ + P_Tᵀ u_T⁺ − ½ Pᵀ W P  (scleronomic),
// where P_Tᵀ u_T⁺ ≤ 0 and −½ PᵀWP ≤ 0, but P_N u_N⁺ = −e P_N u_N⁻ ≥ 0: with e > 0 and friction
// the law can create energy (Kane's double pendulum; Kane & Levinson, "Dynamics: Theory and
// Applications", 1985; Glocker, Multibody Syst. Dyn. 29 (2013), "Energetic consistency conditions
// for standard impacts", Parts I and II). What the contact law itself adds is the work of the
// contact impulses, W_c = ½ Σ P·(u⁺ + u⁻) over the normal and tangential rows: equal to ΔT for a
// scleronomic system whose joints are kept (u_B = 0), and still the law's share when rheonomic
// joints (drivers) also work on the system during the impact (ΔT = W_c − P_Bᵀ ∂g_B/∂t). A gain
// above round-off, W_c > 1e-8 T⁻ (the LCP tolerance 1e-10 on the velocities, with margin), is
// reported (energy_gain), never hidden.
//
// Tangential impact (SolveTangentialImpact): the resolution of an inconsistent (Painlevé)
// configuration by an impulse at the current state without collision (Génot & Brogliato, Eur. J.
// Mech. A 18 (1999) 653–677; Champneys & Várkonyi, IMA J. Appl. Math. 81 (2016) 538–568): the
// impact above with e = 0 at v⁻ = v, where u_N⁻ = 0 and u_T⁻ ≠ 0. z = 0 always solves that
// problem; the impulsive solution is the enumerated one with the largest Σ P_N (for the Painlevé
// rod: the sticking impulse, which exists exactly where b < 0).
//
// Acceleration level: M v̇ = F + G_Bᵀ λ_B + G_Nᵀ λ_N + G_Tᵀ λ_T, G_B v̇ + γ_B = 0, g̈ = G v̇ + γ,
//   0 ≤ g̈_N ⊥ λ_N ≥ 0;
//   stick candidates (tangential velocity zero): the cone law on (λ, g̈_T): stick (g̈_T = 0,
//     ‖λ_T‖ ≤ μ λ_N) or start to slip (λ_T = −μ λ_N g̈_T/‖g̈_T‖);
//   sliding contacts (unit slip direction d, the direction of ġ_T): λ_T = −μ λ_N d substituted,
//     so the normal problem has the non-symmetric matrix W_NN − μ W_NT d; g̈_T is free.
// The decided mode of each contact: open (λ_N = 0, g̈_N > 0), closed (frictionless), stick
// (g̈_T = 0), slip with d = g̈_T/‖g̈_T‖ for a stick candidate that starts to slide (its friction
// force −μ λ_N d points along −g̈_T: MBSim's rule, ../shared/FRICTION.md), slip with the given d
// for a sliding contact. Thresholds: 10× the residual tolerance relative to max(1, ‖b‖∞).
//
// Painlevé diagnosis (friction_cone.h, Solvability): per component, exact by enumeration when
// the component has at most FrictionOptions::max_enumerated_combinations mode combinations and no
// contact needs the exact 3D cone (the plane, the faceted cone, sliding and frictionless
// contacts): inconsistent (no solution), indeterminate (solutions with different v̇ or v⁺; a
// continuum of forces with one v̇, as on redundant contacts, is not) or unique. Otherwise
// "solved" (a solution, uniqueness not examined) or "no solution found" (not a proof: Lemke's
// ray termination proves infeasibility only for copositive-plus matrices, which frictional ones
// are not). The message names the contacts of the components concerned by
// constraint_info(row).name, with μ and, for sliding contacts, d.
//
// Frictionless inputs (every contact with μ = 0 or without tangential rows, nothing sliding) are
// handed to contact::SolveImpact / contact::SolveContactAccelerations unchanged: the same v⁺, v̇
// and normal impulses/forces, bit for bit.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "contact/friction_cone.h"
#include "engine/mechanical_system.h"

namespace saltus::contact {

struct FrictionalContact {
  int normal_row = -1;                      // global unilateral row
  std::array<int, 2> tangent_rows{-1, -1};  // global tangential rows, the first num_tangent_rows
  int num_tangent_rows = 0;                 // 0, 1 (plane) or 2 (space)
  double friction = 0.0;                    // μ ≥ 0
  double restitution = 0.0;                 // e ∈ [0, 1] (impacts)
  // s ≥ 0 of a time step's law u_N⁺ + e u_N⁻ + s ≥ 0 (SolveFrictionalVelocityStep): an open
  // contact's speculative gap rate g/(θ h) (timestepping/moreau_jean.h); 0 for impacts.
  double gap_rate = 0.0;
  bool sliding = false;  // acceleration level: slip direction given
  Eigen::Vector2d slip_direction = Eigen::Vector2d::Zero();  // d, unit (plane: ±1)

  // The contact of `normal_row` with the system's tangential rows (MechanicalSystem::TangentRows)
  // and μ from constraint_info(normal_row).friction. Throws std::out_of_range on a bad row and
  // std::invalid_argument when the row is not unilateral or has more than two tangential rows.
  static FrictionalContact FromSystem(const engine::MechanicalSystem& system, int normal_row,
                                      double restitution = 0.0);
};

struct FrictionOptions {
  FrictionCone cone = FrictionCone::kExact;  // for contacts with two tangential rows
  int facets = 8;                            // FrictionCone::kFaceted: N ≥ 3
  double tolerance = 1e-10;                  // law residual (friction_cone.h), > 0
  int max_iterations = 10000;                // Lemke pivots; fc3d min(this, 200)
  bool diagnose = true;                      // enumerate small components (exact diagnosis)
  long max_enumerated_combinations = 4096;
  // Exact cone: impulses/forces of a previous solve, 3 per contact (normal, tangent 1, 2), e.g.
  // FrictionalImpactResult::Packed(). nullptr: cold start.
  const Eigen::VectorXd* warm_start = nullptr;
};

struct FrictionalContactResult {
  ContactMode mode = ContactMode::kOpen;
  double normal = 0.0;                                        // P_N or λ_N
  Eigen::Vector2d tangential = Eigen::Vector2d::Zero();       // P_T or λ_T
  double normal_rate = 0.0;                                   // u_N⁺ or g̈_N
  Eigen::Vector2d tangential_rate = Eigen::Vector2d::Zero();  // u_T⁺ or g̈_T
  Eigen::Vector2d slip_direction = Eigen::Vector2d::Zero();   // mode kSlip: d
  // Rolling resistance (contact/rolling_friction_step.h only): the torque impulse P_R on the
  // rolling rows and their rate u_R⁺; zero elsewhere.
  Eigen::Vector2d rolling = Eigen::Vector2d::Zero();
  Eigen::Vector2d rolling_rate = Eigen::Vector2d::Zero();
};

struct PainleveDiagnosis {
  Solvability status = Solvability::kUnique;  // the worst over the components
  std::vector<int> contacts;                  // indices (in the input list) concerned
  std::string message;                        // empty when unique or solved
};

struct FrictionalImpactResult {
  bool ok = false;         // a solution meeting the tolerance (possibly one of several)
  Eigen::VectorXd v_plus;  // nv
  Eigen::VectorXd impulse_b;
  std::vector<FrictionalContactResult> contacts;  // same order as given
  double kinetic_energy_change = 0.0;             // T⁺ − T⁻
  double contact_work = 0.0;                      // W_c = ½ Σ P·(u⁺ + u⁻), contact rows
  bool energy_gain = false;                       // W_c > 1e-8 T⁻
  double residual = 0.0;                          // largest law residual over the components
  PainleveDiagnosis diagnosis;
  int bilateral_rank = 0;
  double bilateral_residual = 0.0;
  int components = 0;
  std::string message;
  Eigen::VectorXd Packed() const;  // 3 per contact: normal, tangent 1, tangent 2
};

struct FrictionalAccelerationResult {
  bool ok = false;
  Eigen::VectorXd vdot;  // nv
  Eigen::VectorXd lambda_b;
  std::vector<FrictionalContactResult> contacts;
  double residual = 0.0;
  PainleveDiagnosis diagnosis;
  int bilateral_rank = 0;
  double bilateral_residual = 0.0;
  int components = 0;
  std::string message;
  Eigen::VectorXd Packed() const;
};

// All three throw std::invalid_argument on: a state of the wrong size or non-finite (as
// contact::SolveImpact), a row outside the system or listed twice (bilateral, normal and
// tangential rows together), a normal row that is not unilateral, a tangential row that is not
// kTangential or belongs to another normal row, num_tangent_rows outside [0, 2], μ < 0 or not
// finite, μ > 0 without tangential rows, e outside [0, 1], bad options (tolerance ≤ 0, facets < 3
// with the faceted cone, max_iterations ≤ 0), a warm start of the wrong size; impacts also on a
// sliding contact; accelerations on a sliding contact whose direction is not unit (to 1e-6) or
// has no tangential row. Messages name the row. Solver failures are statuses (ok = false).
FrictionalImpactResult SolveFrictionalImpact(const engine::MechanicalSystem& system, double t,
                                             const Eigen::VectorXd& q,
                                             const Eigen::VectorXd& v_minus,
                                             std::span<const int> bilateral_rows,
                                             std::span<const FrictionalContact> contacts,
                                             const FrictionOptions& options);

// e = 0 whatever the contacts say (see "Tangential impact").
FrictionalImpactResult SolveTangentialImpact(const engine::MechanicalSystem& system, double t,
                                             const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                             std::span<const int> bilateral_rows,
                                             std::span<const FrictionalContact> contacts,
                                             const FrictionOptions& options);

// The contact problem of one step of Moreau–Jean time-stepping (timestepping/moreau_jean.h) with
// Coulomb friction on the impulses (Acary & Brogliato 2008, Sec. 10.1; Jean 1999):
//   v⁺ = v + M⁻¹ (f + G_Bᵀ P_B + G_Nᵀ P_N + G_Tᵀ P_T),   u_B⁺ = 0,
//   0 ≤ u_N⁺ + e u_N⁻ + s ⊥ P_N ≥ 0,   ‖P_T‖ ≤ μ P_N, and u_T⁺ = 0 or P_T = −μ P_N u_T⁺/‖u_T⁺‖,
// (s = FrictionalContact::gap_rate; with s > 0 the cone's normal velocity is u_N⁺ + s, De
// Saxcé's form with the shifted normal velocity: a contact with P_N > 0 ends at u_N⁺ = −s, i.e.
// closed at the step's end, and sticks or slides there; one with P_N = 0 has no friction)
// with u⁻ = G v + ∂g/∂t at the given v (the velocity at the start of the step) and f (nv) the
// impulse of the forces over the step (h F): SolveFrictionalImpact on the free velocity
// v + M⁻¹ f with Newton's law on the start velocity (contact::SolveVelocityStep is the
// frictionless case, and is what frictionless inputs are handed to). kinetic_energy_change,
// contact_work and energy_gain take the free velocity as v⁻. Same validation as
// SolveFrictionalImpact, and f must have nv finite entries.
FrictionalImpactResult SolveFrictionalVelocityStep(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
    std::span<const FrictionalContact> contacts, const FrictionOptions& options);

FrictionalAccelerationResult SolveFrictionalAccelerations(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, std::span<const int> bilateral_rows,
    std::span<const FrictionalContact> contacts, const FrictionOptions& options);

}  // namespace saltus::contact
