// A planar flexible beam described with a floating frame of reference (FFR; Shabana, Dynamics
// of Multibody Systems, 4th ed., Ch. 5 and 7 — the formulation of the flexible bodies of
// Haddouni et al. 2017, Sec. 4.2, ref. [55]), with the foreshortening kinematics of Kane, Ryan &
// Banerjee (J. Guidance 10 (1987) 139–151) that gives geometric (centrifugal) stiffening.
//
// Finite elements. A straight beam of length L lies along the frame's x axis, X ∈ [0, L], cut
// into n equal Euler–Bernoulli elements of length l = L/n with nodes X_k = k l (k = 0..n) and
// nodal coordinates (u_k, w_k, φ_k): axial displacement, transverse displacement, slope. Within
// an element, ξ = (X − X_k)/l, u is linear and w cubic Hermite:
//   u = (1 − ξ) u_k + ξ u_k+1,
//   w = (1 − 3ξ² + 2ξ³) w_k + l (ξ − 2ξ² + ξ³) φ_k + (3ξ² − 2ξ³) w_k+1 + l (ξ³ − ξ²) φ_k+1,
// so that with the nodal vector x (3(n + 1)) u = S_u(X) x, w = S_w(X) x. Element stiffness
// ∫ EA u'² + EI w''² and consistent mass ∫ ρA (u² + w²) (rotary inertia of the section is
// neglected, as in Euler–Bernoulli theory) are integrated exactly by 6-point Gauss quadrature.
//
// Modal reduction. The reference conditions fix the frame to the beam and remove the rigid
// motions from x: `clamped` (u₀ = w₀ = φ₀ = 0: the frame is tangent to the beam at X = 0, the
// cantilever modes), `pinned` (u₀ = w₀ = w_n = 0: the chord frame, the simply supported
// transverse modes and fixed-free axial modes), `free` (no condition: the free–free modes, the
// three rigid-body modes dropped; their mass orthogonality to the rigid modes makes the frame
// the mean axes to first order). The m lowest modes Φ (3(n + 1) × m) of K x = ω² M x on the
// free coordinates, mass-normalized (Φᵀ M Φ = I, Φᵀ K Φ = diag ω²), give x = Φ η with the modal
// coordinates η (m) of the body.
//
// Craig–Bampton reduction (Craig & Bampton, AIAA J. 6 (1968) 1313–1319; Géradin & Rixen,
// Mechanical Vibrations, 3rd ed., Sec. 6.3). With `boundary_nodes`, the free coordinates split
// into the boundary b (every coordinate of those nodes that the reference leaves free) and the
// interior i. The basis holds the static constraint modes (a unit displacement of one boundary
// coordinate, the others held, the interior in static equilibrium) and the k lowest
// fixed-interface modes (boundary held):
//   T = [ I      0   ]   (rows b)        K_ii Φ_i = M_ii Φ_i diag(ω_i²),
//       [ Ψ_ib   Φ_i ]   (rows i),       Ψ_ib = −K_ii⁻¹ K_ib.
// It reproduces exactly the static deflection under loads at the boundary nodes, which the free-
// interface modes only approach. The body keeps one set of coordinates η with a diagonal
// stiffness: the m vectors of x = Φ η are the solutions of the eigenproblem projected on T,
// (Tᵀ K T) y = ω² (Tᵀ M T) y, Φ = T Y (same subspace, mass-normalized; their ω are the
// Rayleigh–Ritz values of the subspace, upper bounds of the FE frequencies). With the `free`
// reference the subspace holds the 3 rigid motions (the constraint modes of ≥ 1 node span them),
// dropped like the free-interface ones: m = n_b + k − 3. Otherwise m = n_b + k. So `modes` is at
// least n_b (n_b − 3 for `free`, which needs a boundary node: K_ii is singular without one).
//
// Kinematics. A material point X of the centreline is at p = r + A(θ) ū(X, η) with
//   ū = (X + s_u η − ½ ηᵀ H(X) η,  s_w η),   s_u = S_u(X) Φ, s_w = S_w(X) Φ (1 × m rows),
//   H(X) = ∫₀^X s_w'ᵀ s_w' dξ  (m × m),
// the second-order foreshortening of the centreline: an inextensible curve of slope w' covers
// the axial distance ∫₀^X cos w' ≈ X − ½ ∫₀^X w'² (Kane et al. 1987, eq. 22's stretch
// variable). With B = ∂ū/∂η = [s_u − (H η)ᵀ; s_w] (2 × m) and the body's velocity
// v_b = (ṙ, ω, η̇) (3 + m):  ṗ = P v_b,  P = [I₂, J A ū, A B],  J = [0 −1; 1 0].
// Turning geometric stiffening off sets H = 0: the conventional linear FFR model, which softens
// under rotation and diverges above the first bending frequency (Kane et al. 1987, Fig. 4).
//
// Dynamics (Lagrange, exactly for these kinematics): with ∫ρ = Σ over the Gauss points of ρA·dX,
//   M_b = ∫ρ Pᵀ P,   F_b = −∫ρ Pᵀ A â + ∫ρ Pᵀ g − [0; 0; K η + C η̇],
//   â = −ω² ū + 2 ω J B η̇ − (η̇ᵀ H η̇) e_x        (the velocity part of Aᵀ p̈),
// K = diag(ω_i²), C = α I + β K + diag(2 ζ ω_i) (Rayleigh α, β and modal ratio ζ, on the
// mass-normalized modes). In blocks (body frame quantities s = ∫ρ ū, S = ∫ρ B):
//   M_rr = m I₂, M_rθ = J A s, M_rη = A S, M_θθ = ∫ρ ū·ū, M_θη = ∫ρ (J ū)ᵀ B, M_ηη = ∫ρ Bᵀ B.
// Energies: T = ½ v_bᵀ M_b v_b, V = ½ ηᵀ K η − g·(m r + A s); T + V is conserved without
// damping and rheonomic constraints.
//
// Points of the beam. For attachments (joints, loads, contacts) at X (a node or any X ∈ [0, L])
// the beam gives ū, B and the slope row ψ = s_w'(X) (the section's rotation θ + ψ η). The
// velocity-free acceleration of p is A â(X), and of the section angle zero (linear in v).
//
// All quantities are precomputed at construction (FE matrices, modes, per Gauss point s_u, s_w,
// H); evaluation costs O(n_gauss · m²). The beam is immutable.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

namespace saltus::engine {

// The frame conditions of the modal reduction (see above).
enum class BeamReference { kClamped, kPinned, kFree };
// The basis of the elastic coordinates (see above).
enum class BeamReduction { kFreeInterface, kCraigBampton };

struct BeamProperties {
  double length = 1.0;        // L (m), > 0
  double youngs_modulus = 0;  // E (Pa), > 0
  double density = 0;         // ρ (kg/m³), > 0
  double area = 0;            // A (m²), > 0
  double second_moment = 0;   // I (m⁴), > 0 (bending in the plane)
  int elements = 4;           // n ≥ 1
  int modes = 2;              // m ≥ 1, at most the number the discretisation has
  BeamReference reference = BeamReference::kClamped;
  BeamReduction reduction = BeamReduction::kFreeInterface;
  std::vector<int> boundary_nodes;   // Craig–Bampton: nodes in [0, n], distinct (may be empty)
  bool geometric_stiffening = true;  // false: H = 0 (the linear FFR model)
  double rayleigh_alpha = 0;         // 1/s, ≥ 0
  double rayleigh_beta = 0;          // s, ≥ 0
  double modal_damping = 0;          // ζ, ≥ 0, every mode
};

// Number of modes the discretisation has for a reference: 3(n + 1) minus the 3 coordinates the
// reference fixes (clamped, pinned) or the 3 rigid modes (free), i.e. 3n.
int AvailableModes(int elements, BeamReference reference);

// The nodal coordinates (indices into the 3(n + 1) nodal vector u_k, w_k, φ_k) that the reference
// conditions fix (see above).
std::vector<int> ReferenceFixedCoordinates(int elements, BeamReference reference);
// Throws std::invalid_argument naming `label` for boundary nodes that do not exist or repeat, for
// boundary nodes without the Craig–Bampton reduction, and for a free Craig–Bampton beam without
// boundary nodes.
void ValidateBoundaryNodes(const std::string& label, const BeamProperties& beam);
// The Craig–Bampton basis T (above) of the stiffness and mass (k, m) on free coordinates, with
// the boundary coordinates `boundary` (indices into them) and the `fixed_modes` lowest
// fixed-interface modes: the columns of T are the constraint modes, then those modes. Throws
// std::runtime_error when K_ii is singular.
Eigen::MatrixXd CraigBamptonSubspace(const Eigen::MatrixXd& k, const Eigen::MatrixXd& m,
                                     const std::vector<int>& boundary, int fixed_modes);

// Craig–Bampton: the number n_b of boundary coordinates, those of the boundary nodes that the
// reference leaves free (0 for the free-interface reduction).
int BoundaryCoordinates(const BeamProperties& beam);
// The fewest modes the reduction allows: 1, or for Craig–Bampton max(1, n_b − 3) with the `free`
// reference and max(1, n_b) otherwise.
int MinimumModes(const BeamProperties& beam);

// Throws std::invalid_argument "<label>: <field> must be > 0, got …" (or the mode count) for
// invalid properties.
void ValidateBeam(const std::string& label, const BeamProperties& beam);

// What the beam gives about its centreline at one X: rows s_u, s_w, ψ = s_w', and their
// X-derivatives s_u', ψ' = s_w'' (1 × m; taken within the element that holds X, the one to its
// right at a node) and H (m × m).
struct BeamPoint {
  double X = 0;
  Eigen::RowVectorXd su, sw, slope;
  Eigen::RowVectorXd dsu, dslope;
  Eigen::MatrixXd H;
};

// Kinematics of one beam point for given η, η̇ in the body frame.
struct BeamPointMotion {
  Eigen::Vector2d u;                           // ū(X, η)
  Eigen::Matrix<double, 2, Eigen::Dynamic> B;  // ∂ū/∂η (2 × m)
  Eigen::Vector2d u_dot;                       // B η̇
  double hdot = 0;                             // η̇ᵀ H η̇ (so ∂(B η̇)/∂t = −hdot e_x)
};

// The shape of the deformed centreline at one point for given η (body frame): its tangent
// ū_X = ∂ū/∂X, ū_XX, and B_X = ∂B/∂X = ∂ū_X/∂η. With H'(X) = ψᵀψ and s_u'' = 0 (the axial shape
// is linear within an element):
//   ū_X = (1 + s_u' η − ½ (ψη)²,  ψη),   ū_XX = (−(ψη)(ψ'η),  ψ'η),   B_X = [s_u' − (ψη) ψ; ψ],
// without the H terms when geometric stiffening is off.
struct BeamCurve {
  Eigen::Vector2d u_x, u_xx;
  Eigen::Matrix<double, 2, Eigen::Dynamic> B_x;  // 2 × m
};

class FlexibleBeam {
 public:
  // Builds the FE model, solves the eigenproblem and precomputes the invariants. Throws
  // std::invalid_argument (ValidateBeam, with `label`) on invalid properties.
  FlexibleBeam(const BeamProperties& properties, const std::string& label = "beam");

  const BeamProperties& properties() const { return properties_; }
  int num_modes() const { return properties_.modes; }
  int num_nodes() const { return properties_.elements + 1; }
  double length() const { return properties_.length; }
  double mass() const { return mass_; }
  // Moment of inertia of the undeformed beam about its centre of mass, m L²/12.
  double centroidal_inertia() const { return mass_ * length() * length() / 12.0; }
  // ω_i (rad/s), ascending (m).
  const Eigen::VectorXd& frequencies() const { return omega_; }
  // Φ (3(n + 1) × m), mass-normalized.
  const Eigen::MatrixXd& modes() const { return phi_; }
  // Full FE matrices on the nodal vector x (3(n + 1) square), before reduction.
  const Eigen::MatrixXd& fe_stiffness() const { return k_fe_; }
  const Eigen::MatrixXd& fe_mass() const { return m_fe_; }
  // Every eigenfrequency of the FE model under the reference conditions (AvailableModes of
  // them; rad/s, ascending; for `free` without the rigid modes).
  const Eigen::VectorXd& FeFrequencies() const { return all_omega_; }
  // X of node k (k in [0, n]); throws std::out_of_range otherwise.
  double NodeX(int node) const;
  // The beam point at X ∈ [0, L] (throws std::out_of_range outside).
  BeamPoint PointAt(double X) const;
  // ū, B, B η̇, η̇ᵀ H η̇ of a point (η̇ may be empty: then u_dot = 0, hdot = 0).
  BeamPointMotion Motion(const BeamPoint& point, const Eigen::Ref<const Eigen::VectorXd>& eta,
                         const Eigen::Ref<const Eigen::VectorXd>& eta_dot) const;

  // ū_X, ū_XX and B_X of a point for given η.
  BeamCurve Curve(const BeamPoint& point, const Eigen::Ref<const Eigen::VectorXd>& eta) const;
  // The X ∈ [0, L] of the centreline point ū(X, η) nearest to the body-frame point c. The
  // nearest of the 2n + 1 samples at the nodes and element midpoints brackets it with its two
  // neighbours; in the bracket X is the root of f(X) = ū_X·(ū − c) by Newton
  // (f' = ū_X·ū_X + ū_XX·(ū − c)) safeguarded by bisection, or an end of the bracket where f
  // does not change sign (X = 0 with f(0) ≥ 0, X = L with f(L) ≤ 0). This is the global nearest
  // point when the samples resolve the centreline's shape: its radius of curvature larger than
  // its distance to c and than the sample spacing. Converges to |ΔX| ≤ 1e-14 L (40 iterations
  // at most); costs 2n + 1 + 2 + (iterations) evaluations of PointAt.
  double NearestX(const Eigen::Vector2d& c, const Eigen::Ref<const Eigen::VectorXd>& eta) const;

  // Body blocks for q_b = (x, y, θ, η), v_b = (ẋ, ẏ, ω, η̇) (3 + m each): M_b written into the
  // (3 + m) square block `M`; F_b (inertial quadratic-velocity, gravity, elastic and damping
  // forces) added to `F`.
  void MassMatrix(double theta, const Eigen::Ref<const Eigen::VectorXd>& eta,
                  Eigen::Ref<Eigen::MatrixXd> M) const;
  void AddForces(double theta, const Eigen::Ref<const Eigen::VectorXd>& eta, double omega,
                 const Eigen::Ref<const Eigen::VectorXd>& eta_dot, const Eigen::Vector2d& gravity,
                 Eigen::Ref<Eigen::VectorXd> F) const;
  // V = ½ ηᵀ K η − g·(m r + A(θ) s(η)).
  double PotentialEnergy(const Eigen::Vector2d& r, double theta,
                         const Eigen::Ref<const Eigen::VectorXd>& eta,
                         const Eigen::Vector2d& gravity) const;
  // Modal stiffness diag(ω²) and damping C (m × m).
  Eigen::MatrixXd ModalStiffness() const;
  Eigen::MatrixXd ModalDamping() const;
  // The quadrature of the mass integrals: 6 Gauss points per element (exact for the degree-10
  // integrands of the foreshortened kinematics) and their weights ρA × Gauss weight × l.
  const std::vector<BeamPoint>& quadrature_points() const { return gauss_; }
  const std::vector<double>& quadrature_weights() const { return weight_; }

 private:
  // Motion into reused storage (no allocation once sized); h_eta is scratch of size m.
  void MotionInto(const BeamPoint& point, const Eigen::Ref<const Eigen::VectorXd>& eta,
                  const Eigen::Ref<const Eigen::VectorXd>& eta_dot, BeamPointMotion* motion,
                  Eigen::VectorXd* h_eta) const;
  void Assemble();
  void Reduce();
  void Precompute();
  // Nodal shape rows S_u, S_u', S_w, S_w', S_w'' at X (each 1 × 3(n + 1)), in the element that
  // holds X (the right one at an inner node).
  struct NodalRows {
    Eigen::RowVectorXd su, dsu, sw, dsw, ddsw;
  };
  void ShapeRows(double X, NodalRows* rows) const;

  BeamProperties properties_;
  double mass_ = 0;
  Eigen::MatrixXd k_fe_, m_fe_, phi_;
  Eigen::VectorXd omega_, all_omega_, damping_;  // damping_: diagonal of C
  std::vector<BeamPoint> gauss_;                 // the quadrature points of the whole beam
  std::vector<double> weight_;                   // ρA × quadrature weight × l, per point
};

}  // namespace saltus::engine
