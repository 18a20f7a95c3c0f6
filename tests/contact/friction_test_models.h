// Small mechanical systems with frictional contact rows (normal row + tangential rows with
// engine::ConstraintKind::kTangential) for the friction-problem tests and benchmarks, until the
// contact modules give their contacts tangential rows.
//
// Plane: bodies with q = v = (x, y, θ) (centre of mass, angle), M = diag(m, m, J), gravity. A
// contact is a body point s (body frame; s = 0 for a disk) or a disk of radius ρ against a fixed
// line nᵀp = c, with tangent t = (n_y, −n_x). With r = R(θ) s − ρ n the contact point relative to
// the centre (perp(a) = (−a_y, a_x)):
//   g_N = nᵀ(x + R s) − ρ − c,   G_N = [nᵀ, nᵀ perp(r)],   γ_N = −θ̇² nᵀ R s,
//   ġ_T = tᵀ(ẋ + θ̇ perp(r)),     G_T = [tᵀ, tᵀ perp(r)],   γ_T = −θ̇² tᵀ R s,
// (p̈ = ẍ + θ̈ perp(R s) − θ̇² R s for a body point; a disk's contact point stays at −ρ n).
//
// Space, at one state: v = (ċ, ω) of one body (world frame), M = diag(m I₃, J) with J the world
// inertia at that state, F = m g; a contact point at r (relative to the centre, world frame) with
// normal n and tangents t₁, t₂ has rows [kᵀ, (r × k)ᵀ] for k = n, t₁, t₂ (velocity of the
// material point ċ + ω × r), evaluated at the given state with ω = 0, so γ = 0.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/lagrangian_system.h"

namespace saltus::contact::testing {

struct PlanarBodySpec {
  double mass = 1.0;
  double inertia = 1.0;
};

inline std::shared_ptr<engine::LagrangianSystem> PlanarBodies(std::vector<PlanarBodySpec> bodies,
                                                              Eigen::Vector2d gravity) {
  engine::LagrangianCallbacks cb;
  cb.n = 3 * static_cast<int>(bodies.size());
  cb.constant_mass = true;
  cb.mass = [bodies](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    M->setZero(3 * static_cast<Eigen::Index>(bodies.size()),
               3 * static_cast<Eigen::Index>(bodies.size()));
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      const auto k = 3 * static_cast<Eigen::Index>(i);
      (*M)(k, k) = (*M)(k + 1, k + 1) = bodies[i].mass;
      (*M)(k + 2, k + 2) = bodies[i].inertia;
    }
  };
  cb.forces = [bodies, gravity](double, const Eigen::VectorXd&, const Eigen::VectorXd&,
                                Eigen::VectorXd* F) {
    F->setZero(3 * static_cast<Eigen::Index>(bodies.size()));
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      F->segment<2>(3 * static_cast<Eigen::Index>(i)) = bodies[i].mass * gravity;
    }
  };
  return std::make_shared<engine::LagrangianSystem>(cb);
}

// Row metadata: a unilateral row with friction μ, and a tangential row of local normal row k.
inline engine::ConstraintRowInfo NormalRowInfo(const std::string& name, double friction) {
  engine::ConstraintRowInfo n;
  n.kind = engine::ConstraintKind::kUnilateral;
  n.name = name;
  n.friction = friction;
  return n;
}

inline engine::ConstraintRowInfo TangentRowInfo(const std::string& name, int normal_row) {
  engine::ConstraintRowInfo t;
  t.kind = engine::ConstraintKind::kTangential;
  t.name = name;
  t.level = engine::ConstraintLevel::kVelocity;
  t.normal_row = normal_row;
  return t;
}

struct PlanarContactSpec {
  std::string name;
  int body = 0;                                       // its (x, y, θ) are q[3 body .. 3 body + 2]
  Eigen::Vector2d point = Eigen::Vector2d::Zero();    // s, body frame
  double radius = 0.0;                                // ρ (disk), 0 for a point
  Eigen::Vector2d normal = Eigen::Vector2d::UnitY();  // n, unit
  double offset = 0.0;                                // c
  double friction = 0.0;                              // μ
};

// Rows 2i (normal, "<name>") and 2i + 1 (tangential, "<name>.t") of contact i; returns the first
// global row.
inline int AddPlanarContacts(engine::MechanicalSystem* system,
                             std::vector<PlanarContactSpec> contacts) {
  engine::ConstraintCallbacks cb;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    cb.rows.push_back(NormalRowInfo(contacts[i].name, contacts[i].friction));
    cb.rows.push_back(TangentRowInfo(contacts[i].name + ".t", 2 * static_cast<int>(i)));
  }
  const int nv = system->nv();
  // Geometry of contact i at q: R s, r, n, t.
  struct Geo {
    Eigen::Vector2d Rs, r, n, t;
  };
  const auto geo = [](const PlanarContactSpec& c, const Eigen::VectorXd& q) {
    const double th = q[3 * c.body + 2];
    Geo g;
    g.Rs = Eigen::Rotation2Dd(th) * c.point;
    g.n = c.normal;
    g.t = Eigen::Vector2d(c.normal.y(), -c.normal.x());
    g.r = g.Rs - c.radius * g.n;
    return g;
  };
  const auto perp = [](const Eigen::Vector2d& a) { return Eigen::Vector2d(-a.y(), a.x()); };
  cb.values = [contacts, geo](double, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
    g->setZero(2 * static_cast<Eigen::Index>(contacts.size()));
    for (std::size_t i = 0; i < contacts.size(); ++i) {
      const PlanarContactSpec& c = contacts[i];
      const Geo e = geo(c, q);
      const Eigen::Vector2d x = q.segment<2>(3 * c.body);
      (*g)[2 * static_cast<Eigen::Index>(i)] = e.n.dot(x + e.Rs) - c.radius - c.offset;
    }
  };
  cb.jacobian = [contacts, geo, perp, nv](double, const Eigen::VectorXd& q, Eigen::MatrixXd* G) {
    G->setZero(2 * static_cast<Eigen::Index>(contacts.size()), nv);
    for (std::size_t i = 0; i < contacts.size(); ++i) {
      const PlanarContactSpec& c = contacts[i];
      const Geo e = geo(c, q);
      const auto row = 2 * static_cast<Eigen::Index>(i);
      G->block<1, 2>(row, 3 * c.body) = e.n.transpose();
      (*G)(row, 3 * c.body + 2) = e.n.dot(perp(e.r));
      G->block<1, 2>(row + 1, 3 * c.body) = e.t.transpose();
      (*G)(row + 1, 3 * c.body + 2) = e.t.dot(perp(e.r));
    }
  };
  cb.gamma = [contacts, geo](double, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                             Eigen::VectorXd* gamma) {
    gamma->setZero(2 * static_cast<Eigen::Index>(contacts.size()));
    for (std::size_t i = 0; i < contacts.size(); ++i) {
      const PlanarContactSpec& c = contacts[i];
      const Geo e = geo(c, q);
      const double w2 = v[3 * c.body + 2] * v[3 * c.body + 2];
      (*gamma)[2 * static_cast<Eigen::Index>(i)] = -w2 * e.n.dot(e.Rs);
      (*gamma)[2 * static_cast<Eigen::Index>(i) + 1] = -w2 * e.t.dot(e.Rs);
    }
  };
  return system->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cb, nv));
}

// One rigid body in space at one state (see the header): v = (ċ, ω).
inline std::shared_ptr<engine::LagrangianSystem> SpatialBody(double mass,
                                                             const Eigen::Matrix3d& inertia,
                                                             const Eigen::Vector3d& gravity) {
  engine::LagrangianCallbacks cb;
  cb.n = 6;
  cb.constant_mass = true;
  cb.mass = [mass, inertia](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    M->setZero(6, 6);
    M->topLeftCorner<3, 3>() = mass * Eigen::Matrix3d::Identity();
    M->bottomRightCorner<3, 3>() = inertia;
  };
  cb.forces = [mass, gravity](double, const Eigen::VectorXd&, const Eigen::VectorXd&,
                              Eigen::VectorXd* F) {
    F->setZero(6);
    F->head<3>() = mass * gravity;
  };
  return std::make_shared<engine::LagrangianSystem>(cb);
}

struct SpatialContactSpec {
  std::string name;
  Eigen::Vector3d r = Eigen::Vector3d::Zero();        // contact point relative to the centre
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  // n
  Eigen::Vector3d t1 = Eigen::Vector3d::UnitX(), t2 = Eigen::Vector3d::UnitY();
  double friction = 0.0;
};

// Rows 3i ("<name>"), 3i + 1 ("<name>.t1"), 3i + 2 ("<name>.t2"); returns the first global row.
inline int AddSpatialContacts(engine::MechanicalSystem* system,
                              std::vector<SpatialContactSpec> contacts) {
  engine::ConstraintCallbacks cb;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    cb.rows.push_back(NormalRowInfo(contacts[i].name, contacts[i].friction));
    for (int k = 1; k <= 2; ++k) {
      cb.rows.push_back(
          TangentRowInfo(contacts[i].name + ".t" + std::to_string(k), 3 * static_cast<int>(i)));
    }
  }
  const int nv = system->nv();
  cb.values = [contacts](double, const Eigen::VectorXd&, Eigen::VectorXd* g) {
    g->setZero(3 * static_cast<Eigen::Index>(contacts.size()));
  };
  cb.jacobian = [contacts, nv](double, const Eigen::VectorXd&, Eigen::MatrixXd* G) {
    G->setZero(3 * static_cast<Eigen::Index>(contacts.size()), nv);
    for (std::size_t i = 0; i < contacts.size(); ++i) {
      const SpatialContactSpec& c = contacts[i];
      const Eigen::Vector3d dirs[3] = {c.normal, c.t1, c.t2};
      for (int k = 0; k < 3; ++k) {
        const auto row = 3 * static_cast<Eigen::Index>(i) + k;
        G->block<1, 3>(row, 0) = dirs[k].transpose();
        G->block<1, 3>(row, 3) = c.r.cross(dirs[k]).transpose();
      }
    }
  };
  return system->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cb, nv));
}

}  // namespace saltus::contact::testing
