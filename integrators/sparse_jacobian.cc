#include "integrators/sparse_jacobian.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/sequential_vertex_coloring.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace saltus::integrators {

long SparsityPattern::nonzeros() const {
  long n = 0;
  for (const auto& c : column_rows) n += static_cast<long>(c.size());
  return n;
}

double DifferenceIncrement(double y_r) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  static const double kFloor = std::pow(kEps, 0.25);
  static const double kSqrtEps = std::sqrt(kEps);
  return std::max(std::abs(y_r), kFloor) * kSqrtEps;
}

int DenseDifferenceJacobian(const ResidualFunction& F, const Eigen::VectorXd& y,
                            const Eigen::VectorXd& F0, Eigen::MatrixXd* J) {
  const Eigen::Index n = y.size();
  J->resize(F0.size(), n);
  Eigen::VectorXd y_pert = y, F_pert;
  for (Eigen::Index r = 0; r < n; ++r) {
    y_pert(r) = y(r) + DifferenceIncrement(y(r));
    const double delta = y_pert(r) - y(r);  // the increment actually applied
    F(y_pert, &F_pert);
    y_pert(r) = y(r);
    J->col(r) = (F_pert - F0) / delta;
  }
  return static_cast<int>(n);
}

SparsityPattern PatternOf(const Eigen::MatrixXd& J, double threshold) {
  if (!(threshold >= 0)) {
    throw std::invalid_argument("PatternOf: threshold must be >= 0, got " +
                                std::to_string(threshold));
  }
  SparsityPattern p;
  p.rows = static_cast<int>(J.rows());
  p.cols = static_cast<int>(J.cols());
  p.column_rows.resize(static_cast<std::size_t>(p.cols));
  UpdatePattern(J, threshold, &p);
  return p;
}

bool UpdatePattern(const Eigen::MatrixXd& J, double threshold, SparsityPattern* pattern) {
  if (J.rows() != pattern->rows || J.cols() != pattern->cols) {
    throw std::invalid_argument("UpdatePattern: Jacobian is " + std::to_string(J.rows()) + " x " +
                                std::to_string(J.cols()) + ", pattern " +
                                std::to_string(pattern->rows) + " x " +
                                std::to_string(pattern->cols));
  }
  bool added = false;
  for (int r = 0; r < pattern->cols; ++r) {
    std::vector<int>& rows = pattern->column_rows[static_cast<std::size_t>(r)];
    for (int i = 0; i < pattern->rows; ++i) {
      if (std::abs(J(i, r)) > threshold || !std::isfinite(J(i, r))) {
        const auto it = std::lower_bound(rows.begin(), rows.end(), i);
        if (it == rows.end() || *it != i) {
          rows.insert(it, i);
          added = true;
        }
      }
    }
  }
  return added;
}

ColumnColouring ColourColumns(const SparsityPattern& pattern) {
  using Graph = boost::adjacency_list<boost::setS, boost::vecS, boost::undirectedS>;
  using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
  const int n = pattern.cols;
  Graph graph(static_cast<std::size_t>(n));
  // Columns sharing a row are adjacent in the column-intersection graph.
  std::vector<std::vector<int>> row_cols(static_cast<std::size_t>(pattern.rows));
  for (int r = 0; r < n; ++r) {
    for (int i : pattern.column_rows[static_cast<std::size_t>(r)]) {
      row_cols[static_cast<std::size_t>(i)].push_back(r);
    }
  }
  for (const auto& cols : row_cols) {
    for (std::size_t a = 0; a < cols.size(); ++a) {
      for (std::size_t b = a + 1; b < cols.size(); ++b) {
        boost::add_edge(static_cast<Vertex>(cols[a]), static_cast<Vertex>(cols[b]), graph);
      }
    }
  }
  // Largest-first order (Curtis–Powell–Reid / TOMS 618): decreasing degree, ties by index.
  std::vector<Vertex> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Vertex{0});
  std::stable_sort(order.begin(), order.end(), [&](Vertex a, Vertex b) {
    return boost::out_degree(a, graph) > boost::out_degree(b, graph);
  });
  std::vector<Vertex> order_index(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < order.size(); ++k) order_index[k] = order[k];
  ColumnColouring result;
  std::vector<std::size_t> colour(static_cast<std::size_t>(n), 0);
  const auto index_map = boost::get(boost::vertex_index, graph);
  const auto colour_map = boost::make_iterator_property_map(colour.begin(), index_map);
  const auto order_map =
      boost::make_iterator_property_map(order_index.begin(), boost::identity_property_map());
  const std::size_t num =
      n > 0 ? boost::sequential_vertex_coloring(graph, order_map, colour_map) : 0;
  result.num_colours = static_cast<int>(num);
  result.colour.assign(colour.begin(), colour.end());
  return result;
}

bool IsConsistentColouring(const SparsityPattern& pattern, const ColumnColouring& colouring) {
  if (static_cast<int>(colouring.colour.size()) != pattern.cols) return false;
  for (int r = 0; r < pattern.cols; ++r) {
    const int c = colouring.colour[static_cast<std::size_t>(r)];
    if (c < 0 || c >= colouring.num_colours) return false;
  }
  // For each row, the colours of its columns must be distinct.
  std::vector<std::vector<int>> row_colours(static_cast<std::size_t>(pattern.rows));
  for (int r = 0; r < pattern.cols; ++r) {
    for (int i : pattern.column_rows[static_cast<std::size_t>(r)]) {
      row_colours[static_cast<std::size_t>(i)].push_back(
          colouring.colour[static_cast<std::size_t>(r)]);
    }
  }
  for (auto& colours : row_colours) {
    std::sort(colours.begin(), colours.end());
    if (std::adjacent_find(colours.begin(), colours.end()) != colours.end()) return false;
  }
  return true;
}

int SparseDifferenceJacobian(const ResidualFunction& F, const Eigen::VectorXd& y,
                             const Eigen::VectorXd& F0, const SparsityPattern& pattern,
                             const ColumnColouring& colouring, Eigen::MatrixXd* J) {
  if (y.size() != pattern.cols || F0.size() != pattern.rows ||
      static_cast<int>(colouring.colour.size()) != pattern.cols) {
    throw std::invalid_argument("SparseDifferenceJacobian: y has " + std::to_string(y.size()) +
                                " entries, F0 " + std::to_string(F0.size()) + ", pattern is " +
                                std::to_string(pattern.rows) + " x " +
                                std::to_string(pattern.cols) + ", colouring has " +
                                std::to_string(colouring.colour.size()) + " columns");
  }
  J->setZero(pattern.rows, pattern.cols);
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(colouring.num_colours));
  for (int r = 0; r < pattern.cols; ++r) {
    groups[static_cast<std::size_t>(colouring.colour[static_cast<std::size_t>(r)])].push_back(r);
  }
  Eigen::VectorXd y_pert = y, F_pert;
  int evaluations = 0;
  for (const std::vector<int>& group : groups) {
    if (group.empty()) continue;
    for (int r : group) y_pert(r) = y(r) + DifferenceIncrement(y(r));
    F(y_pert, &F_pert);
    ++evaluations;
    for (int r : group) {
      const double delta = y_pert(r) - y(r);  // the increment actually applied
      y_pert(r) = y(r);
      for (int i : pattern.column_rows[static_cast<std::size_t>(r)]) {
        (*J)(i, r) = (F_pert(i) - F0(i)) / delta;
      }
    }
  }
  return evaluations;
}

}  // namespace saltus::integrators
