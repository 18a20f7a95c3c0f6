// Pile-like contact LCPs for the tests and the benchmark of the sparse LCP path: spheres on a
// cubic lattice (translational DOFs only, mass m_i I₃), a contact row between lattice neighbours
// along +x, +y, +z (always) and along the face diagonals (with probability p_diagonal), and a
// ground contact under every sphere of the bottom layer. With the diagonals there are more rows
// than the 3N DOFs: W = G M⁻¹ Gᵀ is then rank-deficient (positive SEMIdefinite), as in a pile.
// b = G u + c with u a per-body velocity (a downward bias plus noise) and c ≥ 0 on some rows
// (open gaps): every such LCP is solvable (for d ≥ 0 with W d = 0, i.e. Gᵀd = 0, bᵀd = cᵀd ≥ 0).
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <array>
#include <random>
#include <vector>

namespace saltus::contact::testing {

struct PileLcp {
  Eigen::SparseMatrix<double> W;  // m × m, symmetric
  Eigen::VectorXd b;              // m
  int bodies = 0, dofs = 0;
};

inline PileLcp MakePileLcp(int nx, int ny, int nz, double p_diagonal, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal;
  const int n = nx * ny * nz;
  const auto id = [&](int i, int j, int k) { return (k * ny + j) * nx + i; };
  std::vector<Eigen::Triplet<double>> g;  // rows of G (3 columns per body)
  int rows = 0;
  const auto add_row = [&](int a, int c, Eigen::Vector3d normal_dir) {
    normal_dir.normalize();
    for (int d = 0; d < 3; ++d) {
      g.emplace_back(rows, 3 * a + d, normal_dir[d]);
      if (c >= 0) g.emplace_back(rows, 3 * c + d, -normal_dir[d]);
    }
    ++rows;
  };
  const std::array<std::array<int, 3>, 9> directions = {{{1, 0, 0},
                                                         {0, 1, 0},
                                                         {0, 0, 1},
                                                         {1, 1, 0},
                                                         {1, -1, 0},
                                                         {1, 0, 1},
                                                         {-1, 0, 1},
                                                         {0, 1, 1},
                                                         {0, -1, 1}}};
  for (int k = 0; k < nz; ++k) {
    for (int j = 0; j < ny; ++j) {
      for (int i = 0; i < nx; ++i) {
        const int a = id(i, j, k);
        if (k == 0) add_row(a, -1, Eigen::Vector3d(0.05 * normal(rng), 0.05 * normal(rng), 1.0));
        for (std::size_t d = 0; d < directions.size(); ++d) {
          const auto [di, dj, dk] = directions[d];
          const int i2 = i + di, j2 = j + dj, k2 = k + dk;
          if (i2 < 0 || i2 >= nx || j2 < 0 || j2 >= ny || k2 < 0 || k2 >= nz) continue;
          if (d >= 3 && uniform(rng) >= p_diagonal) continue;
          // Row of the upper/forward body against the other: normal from neighbour to it.
          add_row(id(i2, j2, k2), a, Eigen::Vector3d(di, dj, dk));
        }
      }
    }
  }
  Eigen::SparseMatrix<double> G(rows, 3 * n);
  G.setFromTriplets(g.begin(), g.end());
  Eigen::VectorXd minv(3 * n), u(3 * n);
  for (int a = 0; a < n; ++a) {
    const double m = 1.0 + 2.0 * uniform(rng);
    for (int d = 0; d < 3; ++d) {
      minv[3 * a + d] = 1.0 / m;
      u[3 * a + d] = normal(rng) - (d == 2 ? 1.0 : 0.0);
    }
  }
  PileLcp p;
  p.bodies = n;
  p.dofs = 3 * n;
  p.W = G * minv.asDiagonal() * G.transpose();
  p.W = (0.5 * (p.W + Eigen::SparseMatrix<double>(p.W.transpose()))).pruned();
  p.b = G * u;
  for (int r = 0; r < rows; ++r) {
    if (uniform(rng) < 0.3) p.b[r] += 0.5 * uniform(rng);
  }
  return p;
}

// A settled-pile LCP whose solution leaves one row of a self-stress loop open by a hair, the
// situation of the N = 100 sphere pile at t = 0.7068 s (acceleration LCP of 232 rows, W with a
// 3-dimensional null space of mixed-sign self-stress states d, Gᵀd = 0, and b with a 3.6e-9
// component along them). From a pile W with diagonals (rank-deficient), d = the eigenvector of
// its smallest eigenvalue (p_diagonal > 0 for a null space), r = argmax |d_i| (sign chosen so that
// d_r > 0), z*_i ∈ [0.5, 1.5] except z*_r = 0, c = `gap` e_r, and b = −W z* + c: then z* solves the
// LCP with w* = c (w unique, W PSD), while b has the component c_r d_r along d. An active-set
// method that keeps row r active sees W_FF singular and b_F inconsistent with it. Returns d in
// `null_direction`.
inline PileLcp MakeSelfStressedPileLcp(int nx, int ny, int nz, double p_diagonal, unsigned seed,
                                       double gap, Eigen::VectorXd* null_direction) {
  PileLcp p = MakePileLcp(nx, ny, nz, p_diagonal, seed);
  const Eigen::MatrixXd W_dense(p.W);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(W_dense);
  Eigen::VectorXd d = eig.eigenvectors().col(0);
  Eigen::Index r = 0;
  d.cwiseAbs().maxCoeff(&r);
  if (d[r] < 0.0) d = -d;
  std::mt19937 rng(seed + 1000u);
  std::uniform_real_distribution<double> uniform(0.5, 1.5);
  Eigen::VectorXd z_star(p.b.size());
  for (Eigen::Index i = 0; i < z_star.size(); ++i) z_star[i] = uniform(rng);
  z_star[r] = 0.0;
  p.b = -(p.W * z_star);
  p.b[r] += gap;
  if (null_direction != nullptr) *null_direction = d;
  return p;
}

}  // namespace saltus::contact::testing
