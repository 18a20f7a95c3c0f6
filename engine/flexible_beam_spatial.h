// A spatial flexible beam with a floating frame of reference (FFR; Shabana, Dynamics of
// Multibody Systems, 4th ed., Ch. 5: the mass matrix from the inertia shape integrals and the
// quadratic velocity vector of the floating frame formulation), the spatial
// counterpart of engine/flexible_beam.h, whose FE model, modes and foreshortening it reuses.
//
// Deformations modelled. The centreline of a straight beam along the frame's x axis, X ∈ [0, L],
// stretches axially (u) and bends in two planes: in x–y (deflection v along y, second moment
// I_xy = BeamProperties::second_moment) and in x–z (deflection w along z, I_xz). NOT modelled:
// torsion and the rotary inertia of the sections (Euler–Bernoulli, as in the planar beam: the
// mass sits on the centreline, so a twist of the sections carries neither kinetic nor strain
// energy in this model), shear deformation (Timoshenko), and the coupling of the two bending
// planes through a product of inertia I_yz (the section's principal axes are the frame's y and z).
// The sections' rotary inertia is kept for the rigid motion only: each section turns with the
// frame (not with the elastic slopes), which adds the constant body-frame inertia
//   J_sec = ρ L diag(I_xy + I_xz, I_xz, I_xy)
// (per unit length the section's polar moment ρ(I_xy + I_xz) about x, ρ ∫z² dA = ρ I_xz about y,
// ρ ∫y² dA = ρ I_xy about z). Without it the spin about the beam's own axis would have no
// inertia and M_b would be singular for a straight beam.
//
// Modes. The FE model (n Euler–Bernoulli elements, nodal (u, v, θ_z, w, θ_y)) decouples into the
// axial block and two bending blocks with the same consistent mass and stiffnesses E I_xy and
// E I_xz. Its modes are therefore those of the planar beam (axial and x–y bending, frequencies
// ω) and copies of the planar bending modes in x–z, with the same mass-normalized shapes and
// frequencies ω √(I_xz / I_xy). The body keeps the m lowest of these 5n modes (5n for every
// reference: clamped and pinned fix 5 nodal coordinates, free drops 5 rigid motions, the sixth,
// rotation about x, being torsion). A planar mode is classified axial or bending by its axial
// share of the modal mass; a mode mixing both (an axial and a bending frequency equal to
// ~1e-6) cannot be copied and is rejected. Only the free-interface reduction is available.
//
// Kinematics. With the modal rows s_u, s_v, s_w (1 × m; a mode contributes to s_u and s_v if
// planar, to s_w if an x–z copy) and the foreshortening of both bending planes,
//   ū(X, η) = (X + s_u η − ½ ηᵀ H η,  s_v η,  s_w η),   H(X) = ∫₀^X (s_v'ᵀ s_v' + s_w'ᵀ s_w') dξ,
// (Kane, Ryan & Banerjee 1987, eq. 22 for two planes; H has no cross terms between the planes,
// whose modes have disjoint components), a point is at p = r + R(Q) ū. With B = ∂ū/∂η (3 × m)
// and the velocities v_b = (ṙ, ω, η̇) (ω in the body frame, as for the rigid spatial bodies),
//   ṗ = P v_b,   P = [I₃,  −R [ū]×,  R B],
//   p̈ = P v̇_b + R â,   â = ω × (ω × ū) + 2 ω × (B η̇) − (η̇ᵀ H η̇) e_x.
//
// Dynamics (d'Alembert with the virtual velocities P δv_b, exact for these kinematics; with
// ∫ρ the quadrature of engine/flexible_beam.h):
//   M_b = ∫ρ Pᵀ P:  M_rr = m I₃,  M_rω = −R [s]×,  M_rη = R S,
//                   M_ωω = ∫ρ (ū·ū I₃ − ū ūᵀ) + J_sec,  M_ωη = ∫ρ [ū]× B,  M_ηη = ∫ρ Bᵀ B,
//   F_b = ∫ρ Pᵀ (R (ĝ − â)) − [0; ω × J_sec ω; K η + C η̇],  ĝ = Rᵀ g:
//         F_r = R ∫ρ (ĝ − â),  F_ω = ∫ρ ū × (ĝ − â) − ω × J_sec ω,
//         F_η = ∫ρ Bᵀ (ĝ − â) − K η − C η̇,
// with s = ∫ρ ū, S = ∫ρ B (Shabana's inertia shape integrals, evaluated at
// the current η because the foreshortening makes them quadratic in η), K = diag ω_i², C = α I + β K
// + diag 2 ζ ω_i. For a rigid body (B = 0) F_ω = −ω × J_o ω, the rigid spatial model's term.
// Energies: T = ½ v_bᵀ M_b v_b, V = ½ ηᵀ K η − g·(m r + R s); T + V is conserved without damping.
//
// Geometric stiffening off sets H = 0 (the linear FFR model). Evaluation costs
// O(n_gauss · m²); the beam is immutable.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "engine/flexible_beam.h"

namespace saltus::engine {

// The bending plane or axial family of a spatial mode (see above).
enum class SpatialModeKind { kAxial, kBendingXY, kBendingXZ };

// Modal rows of one centreline point: s_u, s_v, s_w, the slopes s_v', s_w', their X-derivatives
// s_u', s_v'', s_w'' (1 × m; within the element that holds X, the one to its right at a node),
// and H.
struct SpatialBeamPoint {
  double X = 0;
  Eigen::RowVectorXd su, sv, sw, slope_v, slope_w;
  Eigen::RowVectorXd dsu, dslope_v, dslope_w;
  Eigen::MatrixXd H;
};

// ū, B = ∂ū/∂η, B η̇ and η̇ᵀ H η̇ of a point for given η, η̇ (body frame).
struct SpatialBeamMotion {
  Eigen::Vector3d u;
  Eigen::Matrix<double, 3, Eigen::Dynamic> B;
  Eigen::Vector3d u_dot;
  double hdot = 0;
};

// The shape of the deformed centreline at one point for given η (body frame): the tangent
// ū_X = ∂ū/∂X, ū_XX and B_X = ∂B/∂X = ∂ū_X/∂η. With the slopes a = s_v'η, b = s_w'η,
// H'(X) = s_v'ᵀs_v' + s_w'ᵀs_w' and s_u'' = 0 (the axial shape is linear within an element):
//   ū_X = (1 + s_u'η − ½ (a² + b²),  a,  b),   ū_XX = (−(a a' + b b'),  a',  b'),
//   B_X = [s_u' − a s_v' − b s_w';  s_v';  s_w'],
// without the a, b terms of the first row when geometric stiffening is off (H = 0).
struct SpatialBeamCurve {
  Eigen::Vector3d u_x, u_xx;
  Eigen::Matrix<double, 3, Eigen::Dynamic> B_x;  // 3 × m
};

// The number of modes a spatial beam of n elements has: 5n.
int AvailableSpatialModes(int elements);

class SpatialFlexibleBeam {
 public:
  // `properties.second_moment` is I_xy, `second_moment_xz` is I_xz (> 0); `properties.modes` is
  // m ∈ [1, 5n]. Throws std::invalid_argument naming `label` on invalid input (ValidateBeam's
  // checks, I_xz, the mode count, the Craig–Bampton reduction) and for mixed modes.
  SpatialFlexibleBeam(const BeamProperties& properties, double second_moment_xz,
                      const std::string& label = "beam");

  int num_modes() const { return static_cast<int>(kind_.size()); }
  double length() const { return planar_.length(); }
  double mass() const { return planar_.mass(); }
  const BeamProperties& properties() const { return planar_.properties(); }
  double second_moment_xz() const { return second_moment_xz_; }
  // ω_i (rad/s, ascending) and the family of each mode.
  const Eigen::VectorXd& frequencies() const { return omega_; }
  const std::vector<SpatialModeKind>& mode_kinds() const { return kind_; }
  // The planar beam (every planar mode, I_xy) whose shapes the modes are.
  const FlexibleBeam& planar() const { return planar_; }
  // The diagonal of J_sec (kg·m², body axes; see above).
  const Eigen::Vector3d& section_inertia() const { return section_inertia_; }
  double NodeX(int node) const { return planar_.NodeX(node); }

  // The point at X ∈ [0, L] (throws std::out_of_range outside).
  SpatialBeamPoint PointAt(double X) const;
  // η̇ may be empty: then u_dot = 0, hdot = 0.
  SpatialBeamMotion Motion(const SpatialBeamPoint& point,
                           const Eigen::Ref<const Eigen::VectorXd>& eta,
                           const Eigen::Ref<const Eigen::VectorXd>& eta_dot) const;
  // ū_X, ū_XX and B_X of a point for given η (SpatialBeamCurve).
  SpatialBeamCurve Curve(const SpatialBeamPoint& point,
                         const Eigen::Ref<const Eigen::VectorXd>& eta) const;
  // The X ∈ [0, L] of the centreline point ū(X, η) nearest to the body-frame point c (minimum of
  // φ = ½‖ū − c‖², φ_X = ū_X·(ū − c), φ_XX = ū_X·ū_X + ū_XX·(ū − c)), and the X of the point
  // lowest along the body-frame direction n (minimum of φ = n·ū, φ_X = n·ū_X, φ_XX = n·ū_XX).
  // Both: the lowest of the 2n + 1 samples of φ at the nodes and element midpoints, then on the
  // side of it where φ_X descends, Newton on φ_X = 0 safeguarded by bisection within the
  // neighbouring sample, or that sample's end of the beam (X = 0 with φ_X(0) ≥ 0, X = L with
  // φ_X(L) ≤ 0). The global minimum when the samples resolve the centreline's shape (as the planar
  // FlexibleBeam::NearestX); |ΔX| ≤ 1e-14 L after at most 40 iterations.
  double NearestX(const Eigen::Vector3d& c, const Eigen::Ref<const Eigen::VectorXd>& eta) const;
  double LowestX(const Eigen::Vector3d& n, const Eigen::Ref<const Eigen::VectorXd>& eta) const;
  // The quadrature points of the mass integrals and their weights (those of the planar beam).
  const std::vector<SpatialBeamPoint>& quadrature_points() const { return gauss_; }
  const std::vector<double>& quadrature_weights() const { return planar_.quadrature_weights(); }

  // Body blocks for q_b = (r, Q, η), v_b = (ṙ, ω, η̇) with R = R(Q): M_b into the (6 + m) square
  // block `M`; F_b (quadratic velocity, gravity, elastic, damping) added to `F` (6 + m).
  void MassMatrix(const Eigen::Matrix3d& R, const Eigen::Ref<const Eigen::VectorXd>& eta,
                  Eigen::Ref<Eigen::MatrixXd> M) const;
  void AddForces(const Eigen::Matrix3d& R, const Eigen::Ref<const Eigen::VectorXd>& eta,
                 const Eigen::Vector3d& omega, const Eigen::Ref<const Eigen::VectorXd>& eta_dot,
                 const Eigen::Vector3d& gravity, Eigen::Ref<Eigen::VectorXd> F) const;
  // V = ½ ηᵀ K η − g·(m r + R s(η)).
  double PotentialEnergy(const Eigen::Vector3d& r, const Eigen::Matrix3d& R,
                         const Eigen::Ref<const Eigen::VectorXd>& eta,
                         const Eigen::Vector3d& gravity) const;

 private:
  SpatialBeamPoint FromPlanar(const BeamPoint& p) const;

  FlexibleBeam planar_;
  double second_moment_xz_ = 0;
  Eigen::Vector3d section_inertia_;
  std::vector<SpatialModeKind> kind_;  // per spatial mode
  std::vector<int> column_;            // per spatial mode: its planar mode
  Eigen::VectorXd omega_, damping_;    // ω_i and the diagonal of C
  std::vector<SpatialBeamPoint> gauss_;
};

}  // namespace saltus::engine
