// A spatial flexible beam with a floating frame of reference (FFR; Shabana, Dynamics of
// Multibody Systems, 4th ed., Ch. 5: the mass matrix from the inertia shape integrals and the
// quadratic velocity vector of the floating frame formulation), the spatial
// counterpart of engine/flexible_beam.h, whose FE model, modes and foreshortening it reuses.
//
// Deformations modelled. The centreline of a straight beam along the frame's x axis, X ∈ [0, L],
// stretches axially (u) and bends in two planes: in x–y (deflection v along y, second moment
// I_xy = BeamProperties::second_moment) and in x–z (deflection w along z, I_xz). With a
// BeamTorsion the sections also twist (St Venant torsion, below). NOT modelled: the rotary
// inertia of the sections in bending (Euler–Bernoulli, as in the planar beam: the sections do
// not tilt with the bending slopes), shear deformation (Timoshenko), warping (free warping, no
// Vlasov warping stiffness or inertia), and the coupling of the two bending planes through a
// product of inertia I_yz (the section's principal axes are the frame's y and z; the shear centre
// is the centroid, as for doubly symmetric sections).
// The sections' rotary inertia is kept for the rigid motion: each section turns with the frame
// (and, with torsion, by its twist about the frame's x axis), which adds per unit length the
// section inertia J' = ρ diag(I_p, I_xz, I_xy), I_p = I_xy + I_xz (the polar moment ρ I_p about
// x, ρ ∫z² dA = ρ I_xz about y, ρ ∫y² dA = ρ I_xy about z), in all
//   J_sec = ρ L diag(I_xy + I_xz, I_xz, I_xy)
// for the untwisted beam. Without it the spin about the beam's own axis would have no inertia
// and M_b would be singular for a straight beam.
//
// Modes. The FE model (n Euler–Bernoulli elements, nodal (u, v, θ_z, w, θ_y)) decouples into the
// axial block and two bending blocks with the same consistent mass and stiffnesses E I_xy and
// E I_xz. Its modes are therefore those of the planar beam (axial and x–y bending, frequencies
// ω) and copies of the planar bending modes in x–z, with the same mass-normalized shapes and
// frequencies ω √(I_xz / I_xy). A planar mode is classified axial or bending by its axial share
// of the modal mass; a mode mixing both (an axial and a bending frequency equal to ~1e-6) cannot
// be copied and is rejected. Without torsion the body keeps the m lowest of these 5n modes (5n for
// every reference: clamped and pinned fix 5 nodal coordinates, free drops 5 rigid motions, the
// sixth, rotation about x, being torsion).
//
// Craig–Bampton reduction (Craig & Bampton, AIAA J. 6 (1968) 1313–1319; the planar beam's, in
// engine/flexible_beam.h, on the spatial FE model). With `reduction: craig_bampton` and
// `boundary_nodes`, the free nodal coordinates of the spatial model — the planar beam's (u, v, θ_z)
// (axial and x–y), the x–z bending (w, θ_y) with stiffness E I_xz, and with torsion the twists φ —
// split into the boundary (every free coordinate of the boundary nodes, n_b in all) and the
// interior. The basis T holds the n_b static constraint modes and the k lowest fixed-interface
// modes of the whole spatial interior problem, and the body's m modes are the eigenvectors of the
// eigenproblem projected on T (mass-normalized, their ω the Rayleigh–Ritz values): m = n_b + k,
// minus the 5 (6 with torsion) rigid motions the subspace holds with the `free` reference. The
// FE blocks decouple, so each of these eigenvectors lies in one family (axial and x–y, x–z, or
// torsion; a mixed one is rejected). An axial/x–y or x–z vector x is stored by its coordinates
// c = Φᵀ M x over the planar beam's (complete) free-interface modes Φ: its rows are s = S Φ c
// and H_jk = c_jᵀ H c_k (H bilinear in the modes); a torsion vector as the nodal twists. Loads at
// the boundary nodes are then represented exactly: a cantilever with the tip node as boundary
// and k = 0 has the exact static tip deflections, F L³/(3 E I) in both planes, F L/(E A) and
// T L/(G J) (tests/engine/flexible_beam_spatial_test.cc).
//
// Torsion (St Venant: Timoshenko & Goodier, Theory of Elasticity, 3rd ed., §§ 101–109; the
// torsion-bar element with consistent mass of Przemieniecki, Theory of Matrix Structural
// Analysis, 1968; the floating frame's inertia as above). With a BeamTorsion (shear modulus G,
// torsion constant J) the section at X turns by the twist φ(X) about the frame's x axis,
// interpolated linearly between the nodal twists φ_k (the C⁰ shaft element), with strain energy
// ½ ∫ G J φ'² and the sections' kinetic energy below. Its FE block (stiffness G J/l [1 −1; −1 1],
// consistent mass ρ I_p l/6 [2 1; 1 2]) decouples from the others; the reference conditions
// fix φ₀ = 0 (clamped and pinned: the frame's roll is the section at X = 0) or drop the uniform
// twist (free: the remaining modes are mass-orthogonal to it, the mean axis of roll). Its n modes,
// mass-normalized, join the candidates: the body keeps the m lowest of the 6n. Clamped–free they
// tend to ω_k = (2k − 1) π/(2L) √(G J/(ρ I_p)) from above at order 2 in the element size (the
// discrete frequencies are ω² = (6 G J/(ρ I_p l²)) (1 − cos κl)/(2 + cos κl), κ = (2k−1)π/(2L)).
//
// Kinematics. With the modal rows s_u, s_v, s_w (1 × m; a mode contributes to s_u and s_v if
// planar, to s_w if an x–z copy) and the foreshortening of both bending planes,
//   ū(X, η) = (X + s_u η − ½ ηᵀ H η,  s_v η,  s_w η),   H(X) = ∫₀^X (s_v'ᵀ s_v' + s_w'ᵀ s_w') dξ,
// (Kane, Ryan & Banerjee 1987, eq. 22 for two planes; H has no cross terms between the planes,
// whose modes have disjoint components), a point is at p = r + R(Q) ū. With B = ∂ū/∂η (3 × m)
// and the velocities v_b = (ṙ, ω, η̇) (ω in the body frame, as for the rigid spatial bodies),
//   ṗ = P v_b,   P = [I₃,  −R [ū]×,  R B],
//   p̈ = P v̇_b + R â,   â = ω × (ω × ū) + 2 ω × (B η̇) − (η̇ᵀ H η̇) e_x.
// The twist has its own modal row s_φ (torsion modes only): φ = s_φ η. The section at X has the
// orientation R R_x(φ), R_x the rotation about x, and (in the frame's basis) the angular velocity
//   Ω = ω + φ̇ e_x = P_φ v_b,   P_φ = [0, I₃, e_x s_φ],   Ω̇ = P_φ v̇_b (exactly: e_x is fixed).
// Kept: the exact rotational kinetic energy of rigid sections with this orientation, including
// the turn of a non-circular section's inertia with φ, J(φ) = R_x(φ) J' R_x(φ)ᵀ (its gyroscopic
// and "propeller" moments: a flat section spinning about y or z is twisted towards its flat
// position). Neglected: the tilt of the sections and of the twist axis with the bending slopes
// (the twist is about the frame's x, not the deformed tangent; the lateral–torsional couplings
// are of second order in the deformation), the axial-load (Wagner) term of torsion, and the
// displacement of the centreline by the twist (shear centre = centroid).
//
// Dynamics (d'Alembert with the virtual velocities P δv_b and, for the sections, P_φ δv_b, exact
// for these kinematics; with ∫ρ the quadrature of engine/flexible_beam.h and ∫ the same
// quadrature per unit length):
//   M_b = ∫ρ Pᵀ P + ∫ P_φᵀ J(φ) P_φ:
//                   M_rr = m I₃,  M_rω = −R [s]×,  M_rη = R S,
//                   M_ωω = ∫ρ (ū·ū I₃ − ū ūᵀ) + ∫ J(φ),  M_ωη = ∫ρ [ū]× B + e_x ∫ ρ I_p s_φ,
//                   M_ηη = ∫ρ Bᵀ B + ∫ ρ I_p s_φᵀ s_φ,
//   F_b = ∫ρ Pᵀ (R (ĝ − â)) + ∫ P_φᵀ (φ̇ J(φ) (e_x × Ω) − Ω × J(φ) Ω) − [0; 0; K η + C η̇],
// (J(φ) e_x = ρ I_p e_x; the section's d'Alembert term: J'Ω̇' + Ω' × J'Ω' in section axes, with
// Ω' = R_x(φ)ᵀ Ω and the velocity part of Ω̇' = −φ̇ e_x × Ω'), ĝ = Rᵀ g:
//         F_r = R ∫ρ (ĝ − â),  F_ω = ∫ρ ū × (ĝ − â) + ∫ (φ̇ J (e_x × Ω) − Ω × J Ω),
//         F_η = ∫ρ Bᵀ (ĝ − â) + ∫ s_φᵀ e_x·(φ̇ J (e_x × Ω) − Ω × J Ω) − K η − C η̇,
// with s = ∫ρ ū, S = ∫ρ B (Shabana's inertia shape integrals, evaluated at
// the current η because the foreshortening makes them quadratic in η), K = diag ω_i², C = α I + β K
// + diag 2 ζ ω_i. For a rigid body (B = 0, φ = 0) F_ω = −ω × J_o ω, the rigid spatial model's
// term. Without torsion φ ≡ 0 and ∫ J(φ) = J_sec (evaluated as that constant, so that the beam
// without torsion is the one of earlier versions bit for bit).
// Energies: T = ½ v_bᵀ M_b v_b, V = ½ ηᵀ K η − g·(m r + R s); T + V is conserved without damping.
//
// Geometric stiffening off sets H = 0 (the linear FFR model). Evaluation costs
// O(n_gauss · m²); the beam is immutable.
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <string>
#include <vector>

#include "engine/flexible_beam.h"

namespace saltus::engine {

// The bending plane or axial family of a spatial mode (see above).
enum class SpatialModeKind { kAxial, kBendingXY, kBendingXZ, kTorsion };

// St Venant torsion of a spatial beam (see above): shear modulus G (Pa, > 0) and torsion
// constant J (m⁴, > 0; the polar moment I_xy + I_xz for circular sections and tubes,
// RectangleTorsionConstant for rectangles).
struct BeamTorsion {
  double shear_modulus = 0;
  double torsion_constant = 0;
};

// The St Venant torsion constant of a w × h rectangle (Timoshenko & Goodier, Theory of
// Elasticity, 3rd ed., §109, eq. (169)): with a ≥ b the longer and shorter sides,
//   J = (a b³/3) (1 − (192/π⁵) (b/a) Σ_{k odd} tanh(k π a/(2 b))/k⁵),
// summed until the terms fall below 1e-17 of the first (at most k = 99; they decay as k⁻⁵).
// A square: 0.1406 a⁴ (against the polar moment 0.1667 a⁴).
double RectangleTorsionConstant(double width, double height);

// Modal rows of one centreline point: s_u, s_v, s_w, the slopes s_v', s_w', their X-derivatives
// s_u', s_v'', s_w'' (1 × m; within the element that holds X, the one to its right at a node),
// H, and the twist row s_φ and its X-derivative s_φ' (zero without torsion).
struct SpatialBeamPoint {
  double X = 0;
  Eigen::RowVectorXd su, sv, sw, slope_v, slope_w;
  Eigen::RowVectorXd dsu, dslope_v, dslope_w;
  Eigen::MatrixXd H;
  Eigen::RowVectorXd twist, dtwist;
};

// ū, B = ∂ū/∂η, B η̇ and η̇ᵀ H η̇ of a point for given η, η̇ (body frame), and the section's
// twist φ = s_φ η and its rate φ̇ = s_φ η̇ (0 without torsion).
struct SpatialBeamMotion {
  Eigen::Vector3d u;
  Eigen::Matrix<double, 3, Eigen::Dynamic> B;
  Eigen::Vector3d u_dot;
  double hdot = 0;
  double twist = 0, twist_rate = 0;
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

// The orientation and angular motion of the section at a point, for what is attached to it (the
// axes of joints at nodes, the arms of their points, the spheres of contacts at nodes). The
// section of an Euler–Bernoulli beam stays normal to the deformed centreline: it is tilted by the
// bending slopes a = s_v'η (about z) and b = s_w'η (about −y), and twisted by φ = s_φη about its
// own normal, which gives, in the frame's basis,
//   Λ = R_z(a) R_y(−b) R_x(φ)
// (the slopes taken as angles: exact to first order in the deformation, as the beam's kinematics
// are; the normal Λ e_x = (cos a cos b, sin a cos b, sin b) is the tangent ū_X/‖ū_X‖ to first
// order). Differentiating (n_y = R_z(a) e_y, n_x = Λ e_x = R_z(a) R_y(−b) e_x), the section turns
// relative to the frame at
//   ω_s = ȧ e_z − ḃ n_y + φ̇ n_x = E η̇,   E = e_z s_v' − n_y s_w' + n_x s_φ   (3 × m),
// and the v̇-free part of ω̇_s is
//   κ = Ė η̇ = −ȧ ḃ (e_z × n_y) + φ̇ (ȧ e_z × n_x − ḃ n_y × n_x).
// A vector ū fixed in the section is R Λ ū in the world; with Ω = ω + ω_s (frame basis) its rate
// is R (Ω × Λū) and the v̇-free part of its acceleration R ((ω × ω_s + κ) × Λū + Ω × (Ω × Λū)).
// Only attachments use this orientation: the sections' rotary inertia of bending is neglected
// (above), and their twist inertia uses R_x(φ) about the frame's x. Without torsion φ ≡ 0; a
// clamped reference has a = b = φ = 0 at X = 0, so Λ = I and E = 0 there.
struct SpatialSectionMotion {
  Eigen::Matrix3d turn = Eigen::Matrix3d::Identity();  // Λ
  Eigen::Matrix<double, 3, Eigen::Dynamic> E;          // 3 × m
  Eigen::Vector3d rate = Eigen::Vector3d::Zero();      // ω_s = E η̇
  Eigen::Vector3d acc = Eigen::Vector3d::Zero();       // κ = Ė η̇
};

// The number of modes a spatial beam of n elements has: 5n, 6n with torsion.
int AvailableSpatialModes(int elements, bool torsion = false);
// Craig–Bampton: the boundary coordinates n_b of the spatial model (the free coordinates of the
// boundary nodes: 5 per node, 6 with torsion, minus those the reference fixes) and the fewest
// modes allowed, max(1, n_b − r) with r = 5 (6 with torsion) rigid motions for `free`, 0 else.
// Both 0 / 1 for the free-interface reduction.
int SpatialBoundaryCoordinates(const BeamProperties& beam, bool torsion);
int SpatialMinimumModes(const BeamProperties& beam, bool torsion);

class SpatialFlexibleBeam {
 public:
  // `properties.second_moment` is I_xy, `second_moment_xz` is I_xz (> 0); `properties.modes` is
  // m ∈ [1, 5n] (6n with torsion). Throws std::invalid_argument naming `label` on invalid input
  // (ValidateBeam's checks, I_xz, G and J, the mode count, the Craig–Bampton reduction) and for
  // mixed modes. Without `torsion` the sections do not twist (5n modes).
  SpatialFlexibleBeam(const BeamProperties& properties, double second_moment_xz,
                      const std::string& label = "beam");
  SpatialFlexibleBeam(const BeamProperties& properties, double second_moment_xz,
                      const std::optional<BeamTorsion>& torsion, const std::string& label = "beam");

  int num_modes() const { return static_cast<int>(kind_.size()); }
  double length() const { return planar_.length(); }
  double mass() const { return planar_.mass(); }
  // The properties as given (modes: the spatial m; the reduction and its boundary nodes).
  const BeamProperties& properties() const { return properties_; }
  double second_moment_xz() const { return second_moment_xz_; }
  // G and J when the sections twist (nullopt: no torsion modes).
  const std::optional<BeamTorsion>& torsion() const { return torsion_; }
  // Every torsional frequency of the FE model under the reference conditions (n; rad/s,
  // ascending; empty without torsion), kept or not.
  const Eigen::VectorXd& TorsionFeFrequencies() const { return torsion_omega_; }
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
  // Λ, E, ω_s and κ of the section at a point (SpatialSectionMotion); η̇ may be empty (then
  // ω_s = κ = 0).
  SpatialSectionMotion Section(const SpatialBeamPoint& point,
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
  // The torsion FE model: modes of the nodal twists (n + 1 rows) and frequencies.
  void SolveTorsion();
  // The Craig–Bampton modes (header): sets kind_, column_, omega_, coeff_ and, with torsion,
  // torsion_modes_ to the basis' torsion vectors.
  void ReduceCraigBampton(const std::string& label);
  // The body-frame section inertia ∫ J(φ) over quadrature point g (w_g/A · J'), turned by φ.
  Eigen::Matrix3d SectionInertia(std::size_t g, double phi) const;

  FlexibleBeam planar_;
  BeamProperties properties_;
  double second_moment_xz_ = 0;
  Eigen::Vector3d section_inertia_;
  std::vector<SpatialModeKind> kind_;  // per spatial mode
  std::vector<int> column_;            // per spatial mode: its planar (or torsion) mode
  // Craig–Bampton: per spatial mode (column) its coordinates over the planar modes (empty for the
  // free-interface reduction, where column_ names one planar mode).
  Eigen::MatrixXd coeff_;
  Eigen::VectorXd omega_, damping_;  // ω_i and the diagonal of C
  std::vector<SpatialBeamPoint> gauss_;
  std::optional<BeamTorsion> torsion_;
  Eigen::MatrixXd torsion_modes_;  // nodal twists (n + 1) × n of the torsion modes, mass-normalized
  Eigen::VectorXd torsion_omega_;
};

}  // namespace saltus::engine
