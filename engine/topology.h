// Topology of a spatial or planar multibody model: bodies as vertices (plus one vertex for the
// ground), joints as edges of an undirected multigraph (Boost.Graph). Drivers are rows, not
// edges (spatial and planar drivers, planar angle_driver joints).
//
//   components      connected components of the graph without the ground vertex's edges
//                   counted separately: every body belongs to exactly one component; a
//                   component is "grounded" when one of its bodies is jointed to the ground.
//   loops           the number of independent kinematic loops is the cyclomatic number
//                   E − V + C of the graph including the ground (Euler; e.g. Wittenburg,
//                   Dynamics of Multibody Systems, 2nd ed., Sec. 5.1); each loop is closed by a
//                   joint outside a spanning forest, and its members are that joint plus the
//                   forest path between its two bodies.
//   unconnected     bodies with no joint at all (free bodies).
//   rank of G       at the given configuration, by a column-pivoting QR with relative threshold
//                   tolerance · max|R_ii| (rank-revealing); redundant = rows − rank, the
//                   mobility (degrees of freedom) = nv − rank. Redundancy is reported, not an
//                   error (the Bricard mechanism is redundant); the index-1 solve and the
//                   projections use rank-revealing factorizations and stay correct with it.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "engine/planar_model.h"
#include "engine/spatial_model.h"

namespace saltus::engine {

struct KinematicLoop {
  std::vector<int> joints;  // joint indices around the loop, starting with the closing joint
  std::vector<int> bodies;  // bodies on the loop (kGround for the ground)
};

struct TopologyReport {
  int num_components = 0;                // components among the bodies (ground excluded)
  std::vector<int> component;            // component of each body
  std::vector<bool> component_grounded;  // per component
  int num_loops = 0;                     // independent loops, E − V + C (with the ground)
  std::vector<KinematicLoop> loops;      // one per independent loop
  std::vector<int> unconnected_bodies;   // bodies without any joint
  int num_rows = 0;                      // joint and driver rows
  int rank = 0;                          // numerical rank of G at the configuration
  int redundant_rows = 0;                // num_rows − rank
  int degrees_of_freedom = 0;            // nv − rank
  // A few lines for a user: components, loops with member names, free bodies, rank.
  std::string Summary(const SpatialModel& model) const;
  std::string Summary(const PlanarModel& model) const;  // joints: all but angle_driver ones
};

// Graph analysis of the model and the rank of G (all joint and driver rows) at (t, q); q of size
// nq (else std::invalid_argument). tolerance: relative pivot threshold of the QR, in (0, 1).
TopologyReport AnalyzeTopology(const SpatialMultibodySystem& system, double t,
                               const Eigen::VectorXd& q, double tolerance = 1e-10);
// Planar model: every joint but the angle_driver type (revolute, prismatic, distance, fixed,
// point_on_line) is an edge (loop members are indices into PlanarModel::joints()); drivers are
// not edges. The rows are every bilateral row (joints, angle_driver joints and drivers), the
// rank that of G on them (contacts excluded).
TopologyReport AnalyzeTopology(const PlanarMultibodySystem& system, double t,
                               const Eigen::VectorXd& q, double tolerance = 1e-10);

}  // namespace saltus::engine
