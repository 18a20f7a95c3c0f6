// The link-and-beam model and the row checks shared by the tests of contacts on spatial flexible
// bodies (spatial_node_contacts_test: spheres at nodes; spatial_centreline_contacts_test: the
// sphere swept along the centreline).
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contact/spatial_contacts.h"
#include "engine/flexible_beam_spatial.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"
#include "spatial_row_checks.h"

namespace saltus::contact::testing {

// The soft free–free beam of the spatial tumbling test (L = 2 m, E = 7e7 Pa, 3 elements, 6
// modes, I_xz = 2.25 I_xy): body 1; a rigid link: body 0.
inline std::shared_ptr<const engine::SpatialModel> LinkAndBeam() {
  engine::BeamProperties p;
  p.length = 2.0;
  p.area = 4e-4;
  p.second_moment = 2e-7;
  p.density = 3000.0;
  p.youngs_modulus = 7e7;
  p.elements = 3;
  p.modes = 6;
  p.reference = engine::BeamReference::kFree;
  engine::SpatialModelBuilder builder;
  engine::SpatialBody link;
  link.name = "link";
  link.mass = 0.7;
  link.inertia = Eigen::Vector3d(0.02, 0.03, 0.04).asDiagonal();
  builder.AddBody(link);
  engine::SpatialBody beam;
  beam.name = "beam";
  beam.beam = p;
  beam.second_moment_xz = 4.5e-7;
  builder.AddBody(beam);
  return builder.Build();
}

// The model, a contact block of `pairs` and a system holding it.
struct LinkAndBeamContacts {
  std::shared_ptr<const engine::SpatialModel> model = LinkAndBeam();
  std::shared_ptr<const SpatialContacts> contacts;
  std::shared_ptr<engine::SpatialMultibodySystem> system =
      std::make_shared<engine::SpatialMultibodySystem>(model);
  std::vector<int> rows;  // global rows of the contact block
  explicit LinkAndBeamContacts(std::vector<SpatialContactPair> pairs)
      : contacts(std::make_shared<SpatialContacts>(model, std::move(pairs))) {
    const int first = system->num_constraints();
    system->AddConstraintBlock(contacts);
    for (int r = 0; r < contacts->num_rows(); ++r) rows.push_back(first + r);
  }
};

// G of the normal rows at q against central differences of g along q ⊕ h e_i (every velocity
// direction, the elastic columns included). Truncation ~h² g''' ≲ 1e-10 and round-off ~1e-16/h ≈
// 1e-10 at h = 1e-6: 1e-7 (1 + |g'|) leaves a margin of 1000. Returns the largest entry of the
// elastic (last 6) columns.
inline double ExpectNormalRowsMatchGapDifferences(const LinkAndBeamContacts& f,
                                                  const Eigen::VectorXd& q, int draw) {
  const int nv = f.model->num_v();
  const int normal = f.contacts->num_normal_rows();
  const std::vector<int> normal_rows(f.rows.begin(), f.rows.begin() + normal);
  Eigen::MatrixXd G;
  f.system->ConstraintJacobian(0.0, q, normal_rows, &G);
  const double h = 1e-6;
  for (int i = 0; i < nv; ++i) {
    const Eigen::VectorXd e = Eigen::VectorXd::Unit(nv, i);
    Eigen::VectorXd qp, qm, gp, gm;
    f.system->IntegratePosition(q, e, h, &qp);
    f.system->IntegratePosition(q, e, -h, &qm);
    f.system->ConstraintValues(0.0, qp, normal_rows, &gp);
    f.system->ConstraintValues(0.0, qm, normal_rows, &gm);
    const Eigen::VectorXd fd = (gp - gm) / (2 * h);
    for (int r = 0; r < normal; ++r) {
      EXPECT_NEAR(G(r, i), fd[r], 1e-7 * (1.0 + std::abs(fd[r])))
          << f.contacts->row_info(r).name << " column " << i << " draw " << draw;
    }
  }
  return G.rightCols(6).cwiseAbs().maxCoeff();
}

// World position at q_new of the material point of `body` that is at x (world) at q: on a
// flexible body a point of the section at the material coordinate X (it moves with the
// centreline point X and turns with the section, R Λ(X, η)), on a rigid body a point of the body,
// on the ground x itself.
inline Eigen::Vector3d Carried(const engine::SpatialModel& model, int body, double X,
                               const Eigen::VectorXd& q, const Eigen::VectorXd& q_new,
                               const Eigen::Vector3d& x) {
  if (body == engine::kGround) return x;
  const int q0 = model.QOffset(body);
  const engine::SpatialFlexibleBeam* beam = model.beam(body);
  const auto origin = [&](const Eigen::VectorXd& qq) {
    Eigen::Vector3d o = qq.segment<3>(q0);
    if (beam) {
      o += engine::QuaternionToRotation(qq.segment<4>(q0 + 3)) *
           beam->Motion(beam->PointAt(X), qq.segment(q0 + 7, beam->num_modes()), Eigen::VectorXd())
               .u;
    }
    return o;
  };
  // The axes of the body, or of the section at X (R Λ(X, η), SpatialFlexibleBeam::Section).
  const auto axes = [&](const Eigen::VectorXd& qq) {
    Eigen::Matrix3d R = engine::QuaternionToRotation(qq.segment<4>(q0 + 3));
    if (beam) {
      R = R *
          beam->Section(beam->PointAt(X), qq.segment(q0 + 7, beam->num_modes()), Eigen::VectorXd())
              .turn;
    }
    return R;
  };
  const Eigen::Vector3d s = axes(q).transpose() * (x - origin(q));
  return origin(q_new) + axes(q_new) * s;
}

// G_T v = t·(ẋ_b − ẋ_a) of every tangential row at (q, v), x_a, x_b the material points at the
// witness points (on the beam: of the section at material_x(pair, side), side 0 = a, 1 = b, held
// fixed): central differences of their positions along q ⊕ h v (h = 1e-6: error ≲ 1e-10 · |v|³).
template <class MaterialX>
void ExpectTangentialRowsAreTheSlip(const LinkAndBeamContacts& f, const Eigen::VectorXd& q,
                                    const Eigen::VectorXd& v, int draw,
                                    const MaterialX& material_x) {
  const int normal = f.contacts->num_normal_rows();
  for (int r = normal; r < f.contacts->first_resistance_row(); ++r) {
    Eigen::MatrixXd G;
    f.system->ConstraintJacobian(0.0, q, std::vector<int>{f.rows[static_cast<std::size_t>(r)]}, &G);
    const PairDistance d = f.contacts->Evaluate(q, r);
    const auto [t1, t2] = f.contacts->Tangents(q, r);
    const Eigen::Vector3d t = (r - normal) % 2 == 0 ? t1 : t2;
    const int p = f.contacts->RowPair(r);
    const SpatialContactPair& pair = f.contacts->pairs()[static_cast<std::size_t>(p)];
    const double h = 1e-6;
    Eigen::VectorXd qp, qm;
    f.system->IntegratePosition(q, v, h, &qp);
    f.system->IntegratePosition(q, v, -h, &qm);
    const auto slip = [&](const Eigen::VectorXd& qq) {
      return t.dot(Carried(*f.model, pair.body_b, material_x(p, 1), q, qq, d.point_b) -
                   Carried(*f.model, pair.body_a, material_x(p, 0), q, qq, d.point_a));
    };
    const double expected = (slip(qp) - slip(qm)) / (2 * h);
    EXPECT_NEAR(G.row(0).dot(v), expected, 1e-7 * (1.0 + std::abs(expected)))
        << f.contacts->row_info(r).name << " draw " << draw;
  }
}

// A state of the link and the beam: the link within 5 cm of the origin, tilted by ≲ 0.3 rad; the
// beam's frame at x ≈ −1 ± 0.2 m (its span over the link), y within 0.3 m, 0.35 ± 0.1 m up, its
// quaternion (1 + a₀u, a₁u, a₂u, a₃u) normalized (u uniform in [−1, 1]); every modal amplitude
// in ±0.05 (~3 cm at the nodes); every velocity in [−2, 2].
inline void RandomLinkAndBeamState(std::mt19937& rng, const Eigen::Vector4d& beam_tilt,
                                   Eigen::VectorXd* q, Eigen::VectorXd* v) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::Vector4d& a = beam_tilt;
  q->resize(7 + 7 + 6);
  q->segment<3>(0) = 0.05 * Eigen::Vector3d(u(rng), u(rng), u(rng));
  q->segment<4>(3) =
      Eigen::Vector4d(1.0 + 0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng)).normalized();
  q->segment<3>(7) = Eigen::Vector3d(-1.0 + 0.2 * u(rng), 0.3 * u(rng), 0.35 + 0.1 * u(rng));
  q->segment<4>(10) =
      Eigen::Vector4d(1.0 + a[0] * u(rng), a[1] * u(rng), a[2] * u(rng), a[3] * u(rng))
          .normalized();
  for (int i = 0; i < 6; ++i) (*q)[14 + i] = 0.05 * u(rng);
  v->resize(6 + 6 + 6);
  for (int k = 0; k < v->size(); ++k) (*v)[k] = 2.0 * u(rng);
}

// γ of every row at (q, v) against d/dε [G(q ⊕ ε v) v] (Richardson, spatial_row_checks.h), with
// the tolerance of a difference γ for the rows where difference_gamma(row) holds.
template <class DifferenceGamma>
void ExpectGammaMatchesDifferences(const LinkAndBeamContacts& f, const Eigen::VectorXd& q,
                                   const Eigen::VectorXd& v, int draw,
                                   const DifferenceGamma& difference_gamma) {
  const GammaReference ref(*f.system, q, v, f.rows, 1e-3);
  for (std::size_t k = 0; k < f.rows.size(); ++k) {
    const int r = static_cast<int>(k);
    const auto i = static_cast<Eigen::Index>(k);
    EXPECT_LE(ref.Error(i), ref.Tolerance(i, difference_gamma(r)))
        << f.contacts->row_info(r).name << " draw " << draw << " gamma " << ref.gamma[i]
        << " reference " << ref.r2[i];
  }
}

// CheckPair and the constructor refuse `pair` with a message naming it ('p') and containing
// `what`.
inline void ExpectRefused(const std::shared_ptr<const engine::SpatialModel>& model,
                          const SpatialContactPair& pair, const std::string& what) {
  try {
    SpatialContacts::CheckPair(*model, pair);
    ADD_FAILURE() << "accepted: " << what;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("contact pair 'p'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
  EXPECT_THROW(SpatialContacts(model, {pair}), std::invalid_argument);
}

}  // namespace saltus::contact::testing
