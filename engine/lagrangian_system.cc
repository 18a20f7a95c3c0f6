#include "engine/lagrangian_system.h"

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace saltus::engine {
namespace {

std::string SizeText(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

// Evaluation buffers of the callback constraints: per thread, so that const evaluation stays
// thread-compatible, and reused so that evaluation does not allocate once warm.
struct CallbackBuffers {
  Eigen::VectorXd vector;
  Eigen::MatrixXd matrix;
};
CallbackBuffers& Buffers() {
  thread_local CallbackBuffers buffers;
  return buffers;
}

}  // namespace

// ---- LagrangianSystem ---------------------------------------------------------------------

LagrangianSystem::LagrangianSystem(LagrangianCallbacks callbacks)
    : callbacks_(std::move(callbacks)) {
  if (callbacks_.n <= 0) {
    throw std::invalid_argument("LagrangianSystem: n must be > 0, got " +
                                std::to_string(callbacks_.n));
  }
  if (!callbacks_.coordinate_names.empty() &&
      static_cast<int>(callbacks_.coordinate_names.size()) != callbacks_.n) {
    throw std::invalid_argument("LagrangianSystem: coordinate_names has " +
                                std::to_string(callbacks_.coordinate_names.size()) +
                                " entries, expected n = " + std::to_string(callbacks_.n));
  }
  std::set<std::string> seen;
  for (const std::string& name : callbacks_.coordinate_names) {
    if (name.empty()) {
      throw std::invalid_argument("LagrangianSystem: coordinate names must not be empty");
    }
    if (!seen.insert(name).second) {
      throw std::invalid_argument("LagrangianSystem: duplicate coordinate name '" + name + "'");
    }
  }
}

void LagrangianSystem::MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const {
  const int n = callbacks_.n;
  if (!callbacks_.mass) {
    M->setIdentity(n, n);
    return;
  }
  callbacks_.mass(q, M);
  if (M->rows() != n || M->cols() != n) {
    throw std::invalid_argument("LagrangianSystem: mass callback returned a " +
                                SizeText(M->rows(), M->cols()) + " matrix, expected " +
                                SizeText(n, n));
  }
}

void LagrangianSystem::Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                              Eigen::VectorXd* F) const {
  const int n = callbacks_.n;
  if (!callbacks_.forces) {
    F->setZero(n);
    return;
  }
  callbacks_.forces(t, q, v, F);
  if (F->size() != n) {
    throw std::invalid_argument("LagrangianSystem: forces callback returned size " +
                                std::to_string(F->size()) + ", expected " + std::to_string(n));
  }
}

double LagrangianSystem::PotentialEnergy(double t, const Eigen::VectorXd& q) const {
  return callbacks_.potential ? callbacks_.potential(t, q) : 0.0;
}

std::string LagrangianSystem::PositionName(int i) const {
  if (callbacks_.coordinate_names.empty()) return MechanicalSystem::PositionName(i);
  return callbacks_.coordinate_names.at(static_cast<std::size_t>(i));
}

std::string LagrangianSystem::VelocityName(int i) const {
  if (callbacks_.coordinate_names.empty()) return MechanicalSystem::VelocityName(i);
  // "x" → "vx", "cart.x" → "cart.vx", as PlanarMultibodySystem names its velocities.
  const std::string& name = callbacks_.coordinate_names.at(static_cast<std::size_t>(i));
  const std::size_t dot = name.rfind('.');
  const std::size_t split = dot == std::string::npos ? 0 : dot + 1;
  std::string velocity(name, 0, split);
  velocity.push_back('v');
  velocity.append(name, split, std::string::npos);
  return velocity;
}

// ---- CallbackConstraints ------------------------------------------------------------------

CallbackConstraints::CallbackConstraints(ConstraintCallbacks callbacks, int nv)
    : callbacks_(std::move(callbacks)), nv_(nv) {
  if (nv_ <= 0) {
    throw std::invalid_argument("CallbackConstraints: nv must be > 0, got " + std::to_string(nv));
  }
  if (!callbacks_.values) {
    throw std::invalid_argument("CallbackConstraints: the values callback is missing");
  }
  if (!callbacks_.jacobian) {
    throw std::invalid_argument("CallbackConstraints: the jacobian callback is missing");
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < callbacks_.rows.size(); ++i) {
    const ConstraintRowInfo& info = callbacks_.rows[i];
    const std::string label = "CallbackConstraints: row " + std::to_string(i) +
                              (info.name.empty() ? std::string() : " '" + info.name + "'");
    if (info.name.empty()) throw std::invalid_argument(label + ": name must not be empty");
    if (!seen.insert(info.name).second) {
      throw std::invalid_argument(label + ": duplicate row name");
    }
    if (std::isnan(info.restitution) ||
        (info.kind == ConstraintKind::kUnilateral && info.restitution > 1.0)) {
      throw std::invalid_argument(label +
                                  ": restitution must be in [0, 1] (or negative for the "
                                  "global coefficient), got " +
                                  std::to_string(info.restitution));
    }
  }
}

void CallbackConstraints::Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                                 Eigen::Ref<Eigen::VectorXd> g) const {
  Eigen::VectorXd& all = Buffers().vector;
  callbacks_.values(t, q, &all);
  if (all.size() != num_rows()) {
    throw std::invalid_argument("CallbackConstraints: values callback returned size " +
                                std::to_string(all.size()) + ", expected " +
                                std::to_string(num_rows()));
  }
  for (std::size_t k = 0; k < rows.size(); ++k) g(static_cast<Eigen::Index>(k)) = all(rows[k]);
}

void CallbackConstraints::Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                                   Eigen::Ref<Eigen::MatrixXd> G) const {
  Eigen::MatrixXd& all = Buffers().matrix;
  callbacks_.jacobian(t, q, &all);
  if (all.rows() != num_rows() || all.cols() != nv_) {
    throw std::invalid_argument("CallbackConstraints: jacobian callback returned a " +
                                SizeText(all.rows(), all.cols()) + " matrix, expected " +
                                SizeText(num_rows(), nv_));
  }
  for (std::size_t k = 0; k < rows.size(); ++k) {
    G.row(static_cast<Eigen::Index>(k)) = all.row(rows[k]);
  }
}

void CallbackConstraints::Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                std::span<const int> rows,
                                Eigen::Ref<Eigen::VectorXd> gamma) const {
  if (!callbacks_.gamma) {
    gamma.setZero();
    return;
  }
  Eigen::VectorXd& all = Buffers().vector;
  callbacks_.gamma(t, q, v, &all);
  if (all.size() != num_rows()) {
    throw std::invalid_argument("CallbackConstraints: gamma callback returned size " +
                                std::to_string(all.size()) + ", expected " +
                                std::to_string(num_rows()));
  }
  for (std::size_t k = 0; k < rows.size(); ++k) {
    gamma(static_cast<Eigen::Index>(k)) = all(rows[k]);
  }
}

void CallbackConstraints::TimeDerivative(double t, const Eigen::VectorXd& q,
                                         std::span<const int> rows,
                                         Eigen::Ref<Eigen::VectorXd> g_t) const {
  if (!callbacks_.time_derivative) {
    g_t.setZero();
    return;
  }
  Eigen::VectorXd& all = Buffers().vector;
  callbacks_.time_derivative(t, q, &all);
  if (all.size() != num_rows()) {
    throw std::invalid_argument("CallbackConstraints: time_derivative callback returned size " +
                                std::to_string(all.size()) + ", expected " +
                                std::to_string(num_rows()));
  }
  for (std::size_t k = 0; k < rows.size(); ++k) g_t(static_cast<Eigen::Index>(k)) = all(rows[k]);
}

}  // namespace saltus::engine
