#include "engine/topology.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/connected_components.hpp>
#include <sstream>
#include <stdexcept>

namespace saltus::engine {
namespace {

// Vertex 0 is the ground, vertex i + 1 is body i; the edge property is the joint index.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    boost::no_property, boost::property<boost::edge_index_t, int>>;

int Vertex(int body) { return body == kGround ? 0 : body + 1; }
int BodyOf(std::size_t vertex) { return vertex == 0 ? kGround : static_cast<int>(vertex) - 1; }

// A joint as an edge: its two bodies (kGround allowed) and its index in the model's joint list.
struct Edge {
  int body_a = kGround;
  int body_b = kGround;
  int joint = 0;
};

void CheckArguments(const MechanicalSystem& system, const Eigen::VectorXd& q, double tolerance) {
  if (!(tolerance > 0.0 && tolerance < 1.0)) {
    throw std::invalid_argument("AnalyzeTopology: tolerance must be in (0, 1)");
  }
  if (q.size() != system.nq()) {
    throw std::invalid_argument("AnalyzeTopology: q has size " + std::to_string(q.size()) +
                                ", expected nq = " + std::to_string(system.nq()));
  }
}

// The graph analysis of n bodies joined by `joints`, and the rank of G on `rows` at (t, q).
TopologyReport Analyze(int n, const std::vector<Edge>& joints, const MechanicalSystem& system,
                       const std::vector<int>& rows, double t, const Eigen::VectorXd& q,
                       double tolerance) {
  TopologyReport report;

  Graph graph(static_cast<std::size_t>(n + 1));
  std::vector<int> degree(static_cast<std::size_t>(n), 0);
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const Edge& joint = joints[j];
    boost::add_edge(static_cast<std::size_t>(Vertex(joint.body_a)),
                    static_cast<std::size_t>(Vertex(joint.body_b)), static_cast<int>(j), graph);
    if (joint.body_a != kGround) ++degree[static_cast<std::size_t>(joint.body_a)];
    if (joint.body_b != kGround) ++degree[static_cast<std::size_t>(joint.body_b)];
  }
  for (int i = 0; i < n; ++i) {
    if (degree[static_cast<std::size_t>(i)] == 0) report.unconnected_bodies.push_back(i);
  }

  // Components of the bodies alone (edges to the ground removed), then which touch the ground.
  Graph bodies_only(static_cast<std::size_t>(n));
  for (const Edge& joint : joints) {
    if (joint.body_a != kGround && joint.body_b != kGround) {
      boost::add_edge(static_cast<std::size_t>(joint.body_a),
                      static_cast<std::size_t>(joint.body_b), bodies_only);
    }
  }
  report.component.assign(static_cast<std::size_t>(n), 0);
  report.num_components =
      n == 0 ? 0
             : static_cast<int>(boost::connected_components(bodies_only, report.component.data()));
  report.component_grounded.assign(static_cast<std::size_t>(report.num_components), false);
  for (const Edge& joint : joints) {
    const int body = joint.body_a == kGround ? joint.body_b : joint.body_a;
    if (joint.body_a == kGround || joint.body_b == kGround) {
      report.component_grounded[static_cast<std::size_t>(
          report.component[static_cast<std::size_t>(body)])] = true;
    }
  }

  // Loops: cyclomatic number of the full graph; each non-tree edge of a BFS forest closes one.
  std::vector<int> full_component(static_cast<std::size_t>(n + 1));
  const int c_full = static_cast<int>(boost::connected_components(graph, full_component.data()));
  report.num_loops = static_cast<int>(joints.size()) - (n + 1) + c_full;

  const std::size_t nv_graph = static_cast<std::size_t>(n + 1);
  std::vector<long> parent_vertex(nv_graph, -1), parent_joint(nv_graph, -1), depth(nv_graph, -1);
  std::vector<bool> tree_joint(joints.size(), false);
  for (std::size_t root = 0; root < nv_graph; ++root) {
    if (depth[root] >= 0) continue;
    depth[root] = 0;
    std::vector<std::size_t> queue = {root};
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::size_t u = queue[head];
      for (auto [e, e_end] = boost::out_edges(u, graph); e != e_end; ++e) {
        const std::size_t w = boost::target(*e, graph);
        const int joint = boost::get(boost::edge_index, graph, *e);
        if (depth[w] >= 0) continue;
        depth[w] = depth[u] + 1;
        parent_vertex[w] = static_cast<long>(u);
        parent_joint[w] = joint;
        tree_joint[static_cast<std::size_t>(joint)] = true;
        queue.push_back(w);
      }
    }
  }
  for (std::size_t j = 0; j < joints.size(); ++j) {
    if (tree_joint[j]) continue;
    KinematicLoop loop;
    loop.joints.push_back(static_cast<int>(j));
    std::size_t u = static_cast<std::size_t>(Vertex(joints[j].body_a));
    std::size_t w = static_cast<std::size_t>(Vertex(joints[j].body_b));
    std::vector<int> path_u, path_w;  // joints from each end up to the common ancestor
    std::vector<int> bodies_u = {BodyOf(u)}, bodies_w = {BodyOf(w)};
    while (u != w) {
      if (depth[u] >= depth[w]) {
        path_u.push_back(static_cast<int>(parent_joint[u]));
        u = static_cast<std::size_t>(parent_vertex[u]);
        bodies_u.push_back(BodyOf(u));
      } else {
        path_w.push_back(static_cast<int>(parent_joint[w]));
        w = static_cast<std::size_t>(parent_vertex[w]);
        bodies_w.push_back(BodyOf(w));
      }
    }
    bodies_w.pop_back();  // the common ancestor is already in bodies_u
    loop.joints.insert(loop.joints.end(), path_u.begin(), path_u.end());
    loop.joints.insert(loop.joints.end(), path_w.rbegin(), path_w.rend());
    loop.bodies = bodies_u;
    loop.bodies.insert(loop.bodies.end(), bodies_w.rbegin(), bodies_w.rend());
    for (int& joint : loop.joints) joint = joints[static_cast<std::size_t>(joint)].joint;
    report.loops.push_back(std::move(loop));
  }

  // Rank of G on the rows.
  report.num_rows = static_cast<int>(rows.size());
  if (!rows.empty()) {
    Eigen::MatrixXd G;
    system.ConstraintJacobian(t, q, rows, &G);
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(G);
    qr.setThreshold(tolerance);
    report.rank = static_cast<int>(qr.rank());
  }
  report.redundant_rows = report.num_rows - report.rank;
  report.degrees_of_freedom = system.nv() - report.rank;
  return report;
}

// Summary of a report with the model's names.
template <class Model, class Joints>
std::string SummaryOf(const TopologyReport& r, const Model& model, const Joints& edge_joints) {
  auto body_name = [&](int b) {
    return b == kGround ? std::string("ground") : model.bodies()[static_cast<std::size_t>(b)].name;
  };
  std::ostringstream out;
  out << model.num_bodies() << " bodies, " << edge_joints << " joints, " << r.num_components
      << (r.num_components == 1 ? " component" : " components") << ", " << r.num_loops
      << (r.num_loops == 1 ? " independent loop" : " independent loops") << "\n";
  for (std::size_t k = 0; k < r.loops.size(); ++k) {
    out << "  loop " << k + 1 << ": joints";
    for (int j : r.loops[k].joints) out << " " << model.joints()[static_cast<std::size_t>(j)].name;
    out << "; bodies";
    for (int b : r.loops[k].bodies) out << " " << body_name(b);
    out << "\n";
  }
  if (!r.unconnected_bodies.empty()) {
    out << "  bodies not connected by any joint:";
    for (int b : r.unconnected_bodies) out << " " << body_name(b);
    out << "\n";
  }
  out << "  constraint rows " << r.num_rows << ", rank of G " << r.rank << ", redundant "
      << r.redundant_rows << ", degrees of freedom " << r.degrees_of_freedom << "\n";
  return out.str();
}

}  // namespace

TopologyReport AnalyzeTopology(const SpatialMultibodySystem& system, double t,
                               const Eigen::VectorXd& q, double tolerance) {
  CheckArguments(system, q, tolerance);
  const SpatialModel& model = system.model();
  std::vector<Edge> joints;
  for (std::size_t j = 0; j < model.joints().size(); ++j) {
    joints.push_back({model.joints()[j].body_a, model.joints()[j].body_b, static_cast<int>(j)});
  }
  // All joint and driver rows.
  std::vector<int> rows(static_cast<std::size_t>(system.num_joint_rows()));
  for (int r = 0; r < system.num_joint_rows(); ++r) rows[static_cast<std::size_t>(r)] = r;
  return Analyze(model.num_bodies(), joints, system, rows, t, q, tolerance);
}

TopologyReport AnalyzeTopology(const PlanarMultibodySystem& system, double t,
                               const Eigen::VectorXd& q, double tolerance) {
  CheckArguments(system, q, tolerance);
  const PlanarModel& model = system.model();
  std::vector<Edge> joints;
  for (std::size_t j = 0; j < model.joints().size(); ++j) {
    const PlanarJoint& joint = model.joints()[j];
    if (joint.type == PlanarJointType::kAngleDriver) continue;  // a row, not an edge
    joints.push_back({joint.body_a, joint.body_b, static_cast<int>(j)});
  }
  return Analyze(model.num_bodies(), joints, system, system.RowsOfKind(ConstraintKind::kBilateral),
                 t, q, tolerance);
}

std::string TopologyReport::Summary(const SpatialModel& model) const {
  return SummaryOf(*this, model, model.joints().size());
}

std::string TopologyReport::Summary(const PlanarModel& model) const {
  const auto edges = std::count_if(model.joints().begin(), model.joints().end(), [](const auto& j) {
    return j.type != PlanarJointType::kAngleDriver;
  });
  return SummaryOf(*this, model, edges);
}

}  // namespace saltus::engine
