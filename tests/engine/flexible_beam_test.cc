// Tests of engine/flexible_beam.h: FE matrices against the textbook element matrices, natural
// frequencies against the Euler–Bernoulli closed forms (with the convergence order in
// elements), static tip deflection against P L³/(3 E I) (with convergence in modes), the
// geometric stiffening against the published frequencies of rotating cantilevers, and the mass
// matrix and forces against the Lagrange equations by finite differences.
#include "engine/flexible_beam.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <numbers>

#include "flexible_test_models.h"

namespace saltus::engine {
namespace {

using testing::KaneBeam;

double BendingScale(const BeamProperties& p) {
  // ω = (βL)² √(EI/(ρA L⁴)).
  return std::sqrt(p.youngs_modulus * p.second_moment /
                   (p.density * p.area * std::pow(p.length, 4)));
}

TEST(FlexibleBeam, ElementMatricesAreTheTextbookOnes) {
  // One element of length l: consistent mass ρAl/420 [156 22l 54 −13l; …] and bending stiffness
  // EI/l³ [12 6l −12 6l; …] (Przemieniecki, Theory of Matrix Structural Analysis, 1968, eqs.
  // 5.2 and 11.39), axial EA/l [1 −1; −1 1] and ρAl/6 [2 1; 1 2]. Gauss quadrature of degree 11
  // is exact for these polynomials: agreement to round-off (1e-12 relative).
  BeamProperties p = KaneBeam(1, 1);
  const FlexibleBeam beam(p);
  const double l = p.length, ra = p.density * p.area, ei = p.youngs_modulus * p.second_moment;
  const double ea = p.youngs_modulus * p.area;
  Eigen::Matrix4d mb, kb;
  mb << 156, 22 * l, 54, -13 * l, 22 * l, 4 * l * l, 13 * l, -3 * l * l, 54, 13 * l, 156, -22 * l,
      -13 * l, -3 * l * l, -22 * l, 4 * l * l;
  mb *= ra * l / 420.0;
  kb << 12, 6 * l, -12, 6 * l, 6 * l, 4 * l * l, -6 * l, 2 * l * l, -12, -6 * l, 12, -6 * l, 6 * l,
      2 * l * l, -6 * l, 4 * l * l;
  kb *= ei / (l * l * l);
  const int bd[4] = {1, 2, 4, 5};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_NEAR(beam.fe_mass()(bd[i], bd[j]), mb(i, j), 1e-12 * mb.cwiseAbs().maxCoeff());
      EXPECT_NEAR(beam.fe_stiffness()(bd[i], bd[j]), kb(i, j), 1e-12 * kb.cwiseAbs().maxCoeff());
    }
  }
  EXPECT_NEAR(beam.fe_stiffness()(0, 0), ea / l, 1e-12 * ea / l);
  EXPECT_NEAR(beam.fe_stiffness()(0, 3), -ea / l, 1e-12 * ea / l);
  EXPECT_NEAR(beam.fe_mass()(0, 0), ra * l / 3.0, 1e-12 * ra * l);
  EXPECT_NEAR(beam.fe_mass()(0, 3), ra * l / 6.0, 1e-12 * ra * l);
  EXPECT_NEAR(beam.mass(), ra * l, 1e-12 * ra * l);
}

// Relative errors of the first bending frequencies for n elements against (βL)_i.
Eigen::VectorXd FrequencyErrors(BeamReference reference, int elements,
                                const std::vector<double>& beta_l) {
  BeamProperties p = KaneBeam(elements, 1);
  p.reference = reference;
  const FlexibleBeam beam(p);
  const Eigen::VectorXd w = beam.FeFrequencies();
  Eigen::VectorXd err(static_cast<Eigen::Index>(beta_l.size()));
  for (std::size_t i = 0; i < beta_l.size(); ++i) {
    const double exact = beta_l[i] * beta_l[i] * BendingScale(p);
    err(static_cast<Eigen::Index>(i)) = std::abs(w(static_cast<Eigen::Index>(i)) - exact) / exact;
  }
  return err;
}

TEST(FlexibleBeam, FrequenciesMatchEulerBernoulliAndConvergeAtOrderFour) {
  // Roots βL of the frequency equations (Blevins, Formulas for Natural Frequency and Mode Shape,
  // Table 8-1): clamped-free cos cosh = −1; free-free and clamped-clamped cos cosh = 1; pinned-
  // pinned βL = iπ. For the Kane beam the axial modes lie far above (ω_axial = (π/2)√(E/ρ)/L =
  // 759 rad/s vs 3.8, 23.8, 66.7 rad/s), so the lowest FE modes are the bending ones.
  const std::vector<double> clamped = {1.875104069, 4.694091133, 7.854757438};
  const std::vector<double> free = {4.730040745, 7.853204624, 10.99560784};
  const double pi = std::numbers::pi;
  const std::vector<double> pinned = {pi, 2 * pi, 3 * pi};
  const struct {
    BeamReference reference;
    const std::vector<double>& beta_l;
    const char* name;
  } cases[] = {{BeamReference::kClamped, clamped, "clamped"},
               {BeamReference::kFree, free, "free"},
               {BeamReference::kPinned, pinned, "pinned"}};
  for (const auto& c : cases) {
    // Hermite cubics: eigenvalue error O(h^(2(p+1−m))) = O(h⁴) (Strang & Fix, An Analysis of the
    // Finite Element Method, Sec. 6.3): the error of ω₃ falls ≈ 16× per halving.
    const Eigen::VectorXd e4 = FrequencyErrors(c.reference, 4, c.beta_l);
    const Eigen::VectorXd e8 = FrequencyErrors(c.reference, 8, c.beta_l);
    const Eigen::VectorXd e16 = FrequencyErrors(c.reference, 16, c.beta_l);
    const double slope = std::log2(e8(2) / e16(2));
    std::cout << c.name << ": errors of omega_1..3 at 16 elements " << e16.transpose()
              << "; observed order " << std::log2(e4(2) / e8(2)) << ", " << slope << "\n";
    EXPECT_NEAR(slope, 4.0, 0.3) << c.name;
    // At 16 elements: measured 4e-5 (clamped), 1.5e-4 (free), 8e-5 (pinned) for ω₃, whose
    // wavelength spans ~5 elements; twice the largest bounds them.
    EXPECT_LT(e16.maxCoeff(), 3e-4) << c.name;
  }
}

TEST(FlexibleBeam, ModesAreMassNormalizedAndSatisfyTheReferenceConditions) {
  BeamProperties p = KaneBeam(6, 5);
  for (BeamReference reference :
       {BeamReference::kClamped, BeamReference::kPinned, BeamReference::kFree}) {
    p.reference = reference;
    const FlexibleBeam beam(p);
    const Eigen::MatrixXd& phi = beam.modes();
    const Eigen::MatrixXd mm = phi.transpose() * beam.fe_mass() * phi;
    const Eigen::MatrixXd kk = phi.transpose() * beam.fe_stiffness() * phi;
    // Eigen's generalized solver returns M-orthonormal vectors: identity to round-off.
    EXPECT_LT((mm - Eigen::MatrixXd::Identity(5, 5)).norm(), 1e-10);
    EXPECT_LT((kk - beam.ModalStiffness()).norm(), 1e-8 * beam.ModalStiffness().norm());
    // Coordinates fixed by the reference conditions are exactly zero in every mode.
    if (reference == BeamReference::kClamped) {
      EXPECT_EQ(phi.topRows(3).norm(), 0.0);
    }
    if (reference == BeamReference::kPinned) {
      EXPECT_EQ(phi.row(3 * 6 + 1).norm(), 0.0);
    }
  }
}

TEST(FlexibleBeam, StaticTipDeflectionConvergesInModesToTheClosedForm) {
  // Cantilever with a tip load P: δ = P L³/(3 E I) (Euler–Bernoulli). Hermite elements are
  // nodally exact for point loads, so with all modes δ is exact to round-off; the modal
  // truncation δ_m = P Σ_{i≤m} (s_w,i(L))² / ω_i² converges from below.
  BeamProperties p = KaneBeam(8, 1);
  const double P = 1.0;
  const double exact = P * std::pow(p.length, 3) / (3.0 * p.youngs_modulus * p.second_moment);
  double previous_error = 1.0;
  for (int m : {1, 2, 4, AvailableModes(8, BeamReference::kClamped)}) {
    p.modes = m;
    const FlexibleBeam beam(p);
    const BeamPoint tip = beam.PointAt(p.length);
    const Eigen::ArrayXd w2 = beam.frequencies().array().square();
    const double delta = P * (tip.sw.transpose().array().square() / w2).sum();
    const double error = std::abs(delta - exact) / exact;
    std::cout << "tip deflection with " << m << " modes: " << delta << " (exact " << exact
              << ", relative error " << error << ")\n";
    EXPECT_LT(error, previous_error);
    previous_error = error;
  }
  // All 24 modes: the nodally exact FE answer, up to the round-off of the eigenvectors.
  EXPECT_LT(previous_error, 1e-9);
}

// Rows of the Lagrange equations: for T = ½ vᵀ M(q) v (θ̇ = ω, η̇ = v_η, ṙ = v_r),
// Q(q, v) = ∂T/∂q − Ṁ v must equal the beam's inertial forces (AddForces with g = 0 and without
// elastic and damping terms). Ṁ v and ∂T/∂q by central differences of M.
Eigen::VectorXd LagrangeInertialForces(const FlexibleBeam& beam, const Eigen::VectorXd& q,
                                       const Eigen::VectorXd& v, double h) {
  const int n = static_cast<int>(q.size());
  const auto mass = [&](const Eigen::VectorXd& x) {
    Eigen::MatrixXd M(n, n);
    beam.MassMatrix(x(2), x.tail(n - 3), M);
    return M;
  };
  Eigen::VectorXd dT(n);
  Eigen::MatrixXd m_dot = Eigen::MatrixXd::Zero(n, n);
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd qp = q, qm = q;
    qp(j) += h;
    qm(j) -= h;
    const Eigen::MatrixXd dM = (mass(qp) - mass(qm)) / (2.0 * h);
    dT(j) = 0.5 * v.dot(dM * v);
    m_dot += dM * v(j);
  }
  return dT - m_dot * v;
}

TEST(FlexibleBeam, InertialForcesAreTheLagrangeEquationsOfTheMassMatrix) {
  for (bool stiffening : {true, false}) {
    for (BeamReference reference : {BeamReference::kClamped, BeamReference::kFree}) {
      BeamProperties p = KaneBeam(5, 4);
      p.reference = reference;
      p.geometric_stiffening = stiffening;
      const FlexibleBeam beam(p);
      const int n = 3 + beam.num_modes();
      Eigen::VectorXd q(n), v(n);
      // Deflections of tens of centimetres on the 10 m beam and fast motions, so that every
      // term (centrifugal, Coriolis, foreshortening rate) is of the same order.
      q << 0.3, -0.2, 0.7, 0.4, -0.1, 0.05, 0.02;
      v << 0.5, -0.3, 1.3, -0.8, 0.6, 0.3, -0.2;
      q.tail(4) *= 1.0 / std::sqrt(beam.mass());  // η of mass-normalized modes: u ~ η/√m
      v.tail(4) *= 1.0 / std::sqrt(beam.mass());
      Eigen::VectorXd F = Eigen::VectorXd::Zero(n);
      beam.AddForces(q(2), q.tail(4), v(2), v.tail(4), Eigen::Vector2d::Zero(), F);
      // Remove the elastic force −K η (no damping here).
      F.tail(4) += beam.ModalStiffness() * q.tail(4);
      // h = 1e-5 on O(1) coordinates: truncation O(h²) ≈ 1e-10, round-off ≈ 1e-16/h ≈ 1e-11
      // relative to the size of M: agreement to 1e-7 of the largest force.
      const Eigen::VectorXd reference_forces = LagrangeInertialForces(beam, q, v, 1e-5);
      const double scale = std::max(1.0, F.cwiseAbs().maxCoeff());
      EXPECT_LT((F - reference_forces).cwiseAbs().maxCoeff(), 1e-7 * scale)
          << "stiffening " << stiffening << "\nF = " << F.transpose()
          << "\nLagrange = " << reference_forces.transpose();
      // M is symmetric positive definite.
      Eigen::MatrixXd M(n, n);
      beam.MassMatrix(q(2), q.tail(4), M);
      EXPECT_LT((M - M.transpose()).norm(), 1e-14 * M.norm());
      EXPECT_EQ(Eigen::LLT<Eigen::MatrixXd>(M).info(), Eigen::Success);
    }
  }
}

TEST(FlexibleBeam, GravityAndElasticForcesDeriveFromThePotential) {
  BeamProperties p = KaneBeam(4, 3);
  const FlexibleBeam beam(p);
  const Eigen::Vector2d g(0.3, -9.81);
  Eigen::VectorXd q(6);
  q << 0.4, -0.7, 0.9, 0.2, -0.15, 0.05;
  Eigen::VectorXd F = Eigen::VectorXd::Zero(6);
  beam.AddForces(q(2), q.tail(3), 0.0, Eigen::VectorXd::Zero(3), g, F);
  const double h = 1e-6;
  for (int j = 0; j < 6; ++j) {
    Eigen::VectorXd qp = q, qm = q;
    qp(j) += h;
    qm(j) -= h;
    const double dV = (beam.PotentialEnergy(qp.head<2>(), qp(2), qp.tail(3), g) -
                       beam.PotentialEnergy(qm.head<2>(), qm(2), qm.tail(3), g)) /
                      (2.0 * h);
    // F = −∂V/∂q; central difference with h = 1e-6 on V ~ 1e3 J: error ≈ 1e-16 · 1e3 / 1e-6.
    EXPECT_NEAR(F(j), -dV, 1e-6 * std::max(1.0, std::abs(dV))) << "coordinate " << j;
  }
}

TEST(FlexibleBeam, CentrifugalStiffeningGivesThePublishedRotatingCantileverFrequencies) {
  // A cantilever spinning at Ω about an axis through its root normal to the bending plane has,
  // for bending out of the plane of rotation, the frequencies ω(Ω̄) with Ω̄ = Ω √(ρA L⁴/EI)
  // tabulated by Wright, Smith, Thresher & Wang (J. Appl. Mech. 49 (1982) 197–202, Table 1;
  // also Hodges & Rutkowski, AIAA J. 19 (1981)): ω̄₁ = 3.6816 at Ω̄ = 1, 4.1373 at 2, 5.5850 at
  // 4, 11.2023 at 10. In this planar model the same centrifugal tension acts on the in-plane
  // bending, whose stiffness about the steady spin is K − Ω² M + Ω² K_G (Kane et al. 1987,
  // eq. 63: the −Ω² M softening is specific to in-plane motion). The test linearizes the beam's
  // own forces (central differences of AddForces in η at ω = Ω, η = η̇ = 0) and removes the
  // in-plane term +Ω² M (M = I for mass-normalized modes; the modes here are all bending):
  // K + Ω² K_G must give the tabulated flapwise frequencies.
  BeamProperties p = KaneBeam(12, 6);
  const FlexibleBeam beam(p);
  const double scale = BendingScale(p);  // ω = ω̄ · scale, Ω = Ω̄ · scale
  const struct {
    double spin, omega1;
  } published[] = {{0.0, 3.5160}, {1.0, 3.6816}, {2.0, 4.1373}, {4.0, 5.5850}, {10.0, 11.2023}};
  const int m = beam.num_modes();
  for (const auto& row : published) {
    const double spin = row.spin * scale;
    Eigen::MatrixXd K(m, m);
    const double h = 1e-6;
    for (int j = 0; j < m; ++j) {
      Eigen::VectorXd ep = Eigen::VectorXd::Zero(m), em = ep, Fp = Eigen::VectorXd::Zero(3 + m),
                      Fm = Fp;
      ep(j) = h;
      em(j) = -h;
      beam.AddForces(0.0, ep, spin, Eigen::VectorXd::Zero(m), Eigen::Vector2d::Zero(), Fp);
      beam.AddForces(0.0, em, spin, Eigen::VectorXd::Zero(m), Eigen::Vector2d::Zero(), Fm);
      K.col(j) = -(Fp.tail(m) - Fm.tail(m)) / (2.0 * h);
    }
    K += spin * spin * Eigen::MatrixXd::Identity(m, m);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (K + K.transpose()));
    const double omega1 = std::sqrt(eig.eigenvalues()(0)) / scale;
    std::cout << "spin " << row.spin << ": first flapwise frequency " << omega1 << " (published "
              << row.omega1 << ")\n";
    // The table has 5 digits; 12 elements and 6 modes add < 1e-4 relative (Ritz convergence
    // from above, measured by doubling both).
    EXPECT_NEAR(omega1, row.omega1, 2e-4 * row.omega1) << "spin " << row.spin;
  }
}

// Craig–Bampton (header): the constraint modes of the tip reproduce the static tip deflection of
// the FE model exactly, with no fixed-interface mode, where the free-interface modes only
// converge to it (StaticTipDeflectionConvergesInModesToTheClosedForm).
TEST(FlexibleBeam, CraigBamptonConstraintModesGiveTheExactStaticTipDeflection) {
  BeamProperties p = KaneBeam(8, 3);
  const double P = 1.0;
  const double exact = P * std::pow(p.length, 3) / (3.0 * p.youngs_modulus * p.second_moment);
  const auto tip_deflection = [&](const FlexibleBeam& beam) {
    const BeamPoint tip = beam.PointAt(p.length);
    return P * (tip.sw.transpose().array().square() / beam.frequencies().array().square()).sum();
  };
  const double free_interface = tip_deflection(FlexibleBeam(p));
  p.reduction = BeamReduction::kCraigBampton;
  p.boundary_nodes = {8};  // u, w, φ of the tip: 3 constraint modes, 0 fixed-interface modes
  const double craig_bampton = tip_deflection(FlexibleBeam(p));
  std::cout << "tip deflection with 3 modes: free-interface " << free_interface
            << ", Craig-Bampton " << craig_bampton << " (exact " << exact << ")\n";
  // Hermite elements are nodally exact for a tip load and the static solution lies in the
  // subspace: exact up to the round-off of the eigenvectors (as the all-mode case above).
  EXPECT_NEAR(craig_bampton, exact, 1e-9 * exact);
  // The 3 free-interface modes miss the higher modes' share: measured 1.43e-3 of it.
  EXPECT_GT(std::abs(free_interface - exact), 1e-3 * exact);
}

// Craig–Bampton frequencies: Rayleigh–Ritz values on nested subspaces (each added fixed-interface
// mode enlarges the subspace), so they bound the FE frequencies from above, never increase with
// the number of fixed-interface modes k, and equal the FE frequencies when k is all of them.
// Cases: the connecting rod (pinned, the pins' nodes 0 and 16 as boundary: φ₀, u₁₆, φ₁₆) and the
// free beam with one end as boundary (its 3 coordinates; the 3 rigid modes of the subspace are
// dropped, so m = k).
TEST(FlexibleBeam, CraigBamptonFrequenciesConvergeToTheFullModel) {
  const struct {
    BeamReference reference;
    std::vector<int> boundary;
    int boundary_coordinates, rigid;
  } cases[] = {{BeamReference::kPinned, {0, 16}, 3, 0}, {BeamReference::kFree, {0}, 3, 3}};
  for (const auto& c : cases) {
    BeamProperties p = KaneBeam(16, 1, c.reference);
    p.reduction = BeamReduction::kCraigBampton;
    p.boundary_nodes = c.boundary;
    EXPECT_EQ(BoundaryCoordinates(p), c.boundary_coordinates);
    const int interior =
        3 * 17 - (c.reference == BeamReference::kPinned ? 3 : 0) - c.boundary_coordinates;
    Eigen::Vector3d previous = Eigen::Vector3d::Constant(1e300);
    for (int k : {3, 4, 6, 10, 20, interior}) {
      p.modes = c.boundary_coordinates - c.rigid + k;
      const FlexibleBeam beam(p);
      const Eigen::Vector3d cb = beam.frequencies().head(3);
      const Eigen::Vector3d fe = beam.FeFrequencies().head(3);
      const Eigen::Vector3d error = (cb - fe).cwiseQuotient(fe);
      std::cout << (c.rigid ? "free" : "pinned") << ", " << k
                << " fixed-interface modes: relative errors of omega_1..3 " << error.transpose()
                << "\n";
      EXPECT_GT(error.minCoeff(), -1e-9);                                 // upper bounds
      EXPECT_TRUE((cb.array() <= previous.array() * (1 + 1e-12)).all());  // nested subspaces
      previous = cb;
      // Mass-normalized with a diagonal stiffness, as the free-interface modes.
      const Eigen::MatrixXd& phi = beam.modes();
      const auto m = static_cast<Eigen::Index>(p.modes);
      EXPECT_LT((phi.transpose() * beam.fe_mass() * phi - Eigen::MatrixXd::Identity(m, m)).norm(),
                1e-9);
      EXPECT_LT((phi.transpose() * beam.fe_stiffness() * phi - beam.ModalStiffness()).norm(),
                1e-8 * beam.ModalStiffness().norm());
      // Ten fixed-interface modes hold the three lowest to 1e-3 (measured 5.2e-6 pinned,
      // 1.7e-4 free); all of them give the FE frequencies.
      if (k == 10) {
        EXPECT_LT(error.maxCoeff(), 1e-3);
      }
      if (k == interior) {
        EXPECT_LT(error.cwiseAbs().maxCoeff(), 1e-9);  // the whole FE space
      }
    }
  }
}

TEST(FlexibleBeam, CraigBamptonInputIsValidated) {
  BeamProperties p = KaneBeam(4, 3);
  p.reduction = BeamReduction::kCraigBampton;
  const auto message = [&] {
    try {
      ValidateBeam("flexible body 'rod'", p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  p.boundary_nodes = {5};
  EXPECT_NE(message().find("boundary node 5 does not exist (nodes 0..4)"), std::string::npos);
  p.boundary_nodes = {4, 4};
  EXPECT_NE(message().find("boundary node 4 is listed twice"), std::string::npos);
  p.boundary_nodes = {2, 4};  // 6 boundary coordinates, 3 modes
  EXPECT_NE(message().find("modes must be in [6, 12]"), std::string::npos) << message();
  p.boundary_nodes = {};
  p.reference = BeamReference::kFree;
  EXPECT_NE(message().find("needs at least one boundary node"), std::string::npos);
  p.reduction = BeamReduction::kFreeInterface;
  p.boundary_nodes = {1};
  EXPECT_NE(message().find("boundary_nodes need the craig_bampton reduction"), std::string::npos);
}

}  // namespace
}  // namespace saltus::engine
