#include "contact/sparse_assembly.h"

#include <algorithm>
#include <cmath>

#include "engine/disjoint_sets.h"

namespace saltus::contact {

SparseAssembled AssembleSparse(const engine::MechanicalSystem& system, double t,
                               const Eigen::VectorXd& q, std::span<const int> rows,
                               bool all_bodies) {
  SparseAssembled a;
  if (!system.BlockSparseMatrices(t, q, rows, &a.M, &a.G)) return a;
  a.available = true;
  const int b = a.M.block_size;
  const int num_blocks = system.nv() / b;
  if (!a.M.blocks.allFinite()) {
    a.error = "mass matrix is not finite";
    return a;
  }
  a.llt.resize(static_cast<std::size_t>(num_blocks));
  std::vector<char> touched(static_cast<std::size_t>(num_blocks), static_cast<char>(all_bodies));
  for (const int c : a.G.block_col) touched[static_cast<std::size_t>(c)] = 1;
  for (int c = 0; c < num_blocks; ++c) {
    if (!touched[static_cast<std::size_t>(c)]) continue;
    a.llt[static_cast<std::size_t>(c)].compute(a.M.blocks.middleCols(c * b, b));
    if (a.llt[static_cast<std::size_t>(c)].info() != Eigen::Success) {
      a.error = "mass matrix is not positive definite (Cholesky failed)";
      return a;
    }
  }
  const std::size_t nnz = a.G.block_col.size();
  a.Y.resize(nnz * static_cast<std::size_t>(b));
  auto& by_body = a.by_body;
  by_body.assign(static_cast<std::size_t>(num_blocks), {});
  for (int i = 0; i < a.G.rows(); ++i) {
    for (int k = a.G.row_start[static_cast<std::size_t>(i)];
         k < a.G.row_start[static_cast<std::size_t>(i) + 1]; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      const int c = a.G.block_col[kk];
      const Eigen::Map<const Eigen::VectorXd> g(
          a.G.values.data() + kk * static_cast<std::size_t>(b), b);
      Eigen::Map<Eigen::VectorXd>(a.Y.data() + kk * static_cast<std::size_t>(b), b) =
          a.llt[static_cast<std::size_t>(c)].solve(g);
      by_body[static_cast<std::size_t>(c)].emplace_back(i, k);
    }
  }
  if (!std::isfinite(a.G.MaxAbs())) {
    a.error = "constraint Jacobian has a non-finite entry";
    return a;
  }
  // Components: union-find over the bodies, every row joins the bodies it touches (a row
  // touching no body is a component of its own).
  engine::DisjointSets sets(num_blocks);
  for (int i = 0; i < a.G.rows(); ++i) {
    const int first = a.G.row_start[static_cast<std::size_t>(i)];
    const int last = a.G.row_start[static_cast<std::size_t>(i) + 1];
    for (int k = first + 1; k < last; ++k) {
      sets.Unite(a.G.block_col[static_cast<std::size_t>(first)],
                 a.G.block_col[static_cast<std::size_t>(k)]);
    }
  }
  std::vector<int> label(static_cast<std::size_t>(num_blocks), -1);
  a.component_of_row.resize(static_cast<std::size_t>(a.G.rows()));
  a.component_of_body.assign(static_cast<std::size_t>(num_blocks), -1);
  for (int i = 0; i < a.G.rows(); ++i) {
    const int first = a.G.row_start[static_cast<std::size_t>(i)];
    if (first == a.G.row_start[static_cast<std::size_t>(i) + 1]) {
      a.component_of_row[static_cast<std::size_t>(i)] = a.num_components++;
      continue;
    }
    const auto root =
        static_cast<std::size_t>(sets.Find(a.G.block_col[static_cast<std::size_t>(first)]));
    if (label[root] < 0) label[root] = a.num_components++;
    a.component_of_row[static_cast<std::size_t>(i)] = label[root];
  }
  for (int c = 0; c < num_blocks; ++c) {
    if (!by_body[static_cast<std::size_t>(c)].empty()) {
      a.component_of_body[static_cast<std::size_t>(c)] =
          label[static_cast<std::size_t>(sets.Find(c))];
    }
  }
  return a;
}

const std::vector<int>& SparseAssembled::Bodies(const std::vector<int>& idx) const {
  thread_local std::vector<int> bodies;
  bodies.clear();
  for (int i : idx) {
    for (int k = G.row_start[static_cast<std::size_t>(i)];
         k < G.row_start[static_cast<std::size_t>(i) + 1]; ++k) {
      bodies.push_back(G.block_col[static_cast<std::size_t>(k)]);
    }
  }
  std::sort(bodies.begin(), bodies.end());
  bodies.erase(std::unique(bodies.begin(), bodies.end()), bodies.end());
  return bodies;
}

void SparseAssembled::Block(const std::vector<int>& idx, Eigen::MatrixXd* W_c) const {
  const int b = M.block_size;
  W_c->setZero(static_cast<Eigen::Index>(idx.size()), static_cast<Eigen::Index>(idx.size()));
  const auto local = [&](int row) {
    return static_cast<Eigen::Index>(std::lower_bound(idx.begin(), idx.end(), row) - idx.begin());
  };
  const std::vector<int>& bodies = Bodies(idx);
  for (int c : bodies) {
    const auto& entries = by_body[static_cast<std::size_t>(c)];
    for (const auto& [i, k] : entries) {
      const Eigen::Map<const Eigen::VectorXd> g(
          G.values.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(b), b);
      const Eigen::Index li = local(i);
      for (const auto& [j, l] : entries) {
        const Eigen::Map<const Eigen::VectorXd> y(
            Y.data() + static_cast<std::size_t>(l) * static_cast<std::size_t>(b), b);
        (*W_c)(li, local(j)) += g.dot(y);
      }
    }
  }
  *W_c = 0.5 * (*W_c + W_c->transpose()).eval();
}

void SparseAssembled::SparseBlock(const std::vector<int>& idx,
                                  Eigen::SparseMatrix<double>* W_c) const {
  const int b = M.block_size;
  const auto local = [&](int row) {
    return static_cast<int>(std::lower_bound(idx.begin(), idx.end(), row) - idx.begin());
  };
  const std::vector<int>& bodies = Bodies(idx);
  // Σ over the bodies of g_i · M_c⁻¹ g_j and its transpose, halved (setFromTriplets sums
  // duplicates): symmetric to round-off like Block.
  std::vector<Eigen::Triplet<double>> entries;
  for (int c : bodies) {
    const auto& body_entries = by_body[static_cast<std::size_t>(c)];
    for (const auto& [i, k] : body_entries) {
      const Eigen::Map<const Eigen::VectorXd> g(
          G.values.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(b), b);
      const int li = local(i);
      for (const auto& [j, l] : body_entries) {
        const Eigen::Map<const Eigen::VectorXd> y(
            Y.data() + static_cast<std::size_t>(l) * static_cast<std::size_t>(b), b);
        const double v = 0.5 * g.dot(y);
        entries.emplace_back(li, local(j), v);
        entries.emplace_back(local(j), li, v);
      }
    }
  }
  W_c->setFromTriplets(entries.begin(), entries.end());
}

// x += M⁻¹ Gᵀ z (blocks Y = M_c⁻¹ g_k).
void AddMinvGtz(const SparseAssembled& a, const Eigen::VectorXd& z, Eigen::VectorXd* x) {
  const int b = a.M.block_size;
  for (int i = 0; i < a.G.rows(); ++i) {
    const double zi = z[i];
    for (int k = a.G.row_start[static_cast<std::size_t>(i)];
         k < a.G.row_start[static_cast<std::size_t>(i) + 1]; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      x->segment(static_cast<Eigen::Index>(a.G.block_col[kk]) * b, b) +=
          zi * Eigen::Map<const Eigen::VectorXd>(a.Y.data() + kk * static_cast<std::size_t>(b), b);
    }
  }
}

// x = M⁻¹ f by blocks.
Eigen::VectorXd MinvTimes(const SparseAssembled& a, const Eigen::VectorXd& f) {
  const int b = a.M.block_size;
  Eigen::VectorXd x(f.size());
  for (std::size_t c = 0; c < a.llt.size(); ++c) {
    const auto off = static_cast<Eigen::Index>(c) * b;
    x.segment(off, b) = a.llt[c].solve(f.segment(off, b));
  }
  return x;
}

Eigen::VectorXd MTimes(const SparseAssembled& a, const Eigen::VectorXd& x) {
  const int b = a.M.block_size;
  Eigen::VectorXd y(x.size());
  for (Eigen::Index off = 0; off < x.size(); off += b) {
    y.segment(off, b) = a.M.blocks.middleCols(off, b) * x.segment(off, b);
  }
  return y;
}

std::string ComputeStepRates(const engine::MechanicalSystem& system, const SparseAssembled& a,
                             double t, const Eigen::VectorXd& q, std::span<const int> rows,
                             const Eigen::VectorXd& v, const Eigen::VectorXd& f, StepRates* out) {
  system.ConstraintTimeDerivative(t, q, rows, &out->gt);
  if (!out->gt.allFinite()) return "a constraint's time derivative has a non-finite entry";
  a.G.Multiply(v, &out->u_minus);
  out->u_minus += out->gt;
  out->v_free = v + MinvTimes(a, f);
  a.G.Multiply(out->v_free, &out->u_free);
  out->u_free += out->gt;
  return {};
}

}  // namespace saltus::contact
