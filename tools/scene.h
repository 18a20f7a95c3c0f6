// Scene files: a planar multibody mechanism with unilateral contacts, or (`dimension: 3`) a
// spatial mechanism of quaternion bodies, joints, drivers and force elements
// (engine/spatial_model.h), and the options of its simulation, described in YAML (format and
// every key: docs/scene-format.md).
//
// Loading is in two stages, both before anything is simulated or written:
//   1. ParseScene / LoadSceneFile read the YAML into a Scene (plain descriptions of bodies,
//      joints, force elements, contacts and events::SimulationOptions) and validate every item:
//      unknown or duplicate keys, missing keys, wrong types, non-finite numbers, masses,
//      inertias, restitution coefficients, body references, vector lengths, names, the
//      integrator and the formulation it supports (integrators::IntegratorTable()).
//   2. BuildSystem turns the Scene into an engine::PlanarMultibodySystem with its joints (first
//      constraint block) and a contact::PlanarContacts block; anything the engine or contact
//      layer still rejects is reported with the line of the offending item.
// Every error is a SceneError whose message reads "<file>:<line>: <item>: <what>", e.g.
//   scene.yaml:12: body 'ball': mass must be > 0, got -1
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contact/broadphase.h"
#include "contact/joint_limits.h"
#include "contact/planar_contacts.h"
#include "contact/spatial_contacts.h"
#include "engine/planar_model.h"
#include "engine/spatial_model.h"
#include "engine/topology.h"
#include "events/simulation.h"
#include "timestepping/moreau_jean.h"
#include "tools/hybrid_options.h"
#include "tools/limits.h"

namespace saltus::tools {

// Bad scene input. what() is "<file>:<line>: <message>" ("<file>: <message>" when line is 0).
class SceneError : public std::invalid_argument {
 public:
  SceneError(std::string file, int line, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }  // 1-based; 0 when the error has no line
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string message_;
};

// 1-based line of every item, so that later stages (BuildSystem, the CLI) can point at it.
struct SceneLines {
  int simulation = 0;
  int integrator = 0;   // the `integrator` key, or the simulation section when absent
  int output_step = 0;  // the `output_step` key, or the simulation section when absent
  std::vector<int> bodies, joints, springs, loads, contacts;
  std::vector<int> torsional_springs;
  std::vector<int> drivers;
};

// The optional `reference:` section: where `saltus compare` takes the scene's reference solution
// from (tools/reference.h, docs/scene-format.md). At most one of file, analytic and a
// tight-tolerance run (integrator non-empty) is set; none means "compare decides".
struct SceneReference {
  std::string file;      // CSV of reference positions, resolved against the scene's folder
  std::string analytic;  // name of a closed-form solution (tools/reference.h)
  std::string integrator, formulation;  // a tight-tolerance run of this integrator
  double rtol = 0, atol = 0;            // of that run; 0: compare's defaults
  double step = 0;                      // spacing of the reference times (s); 0: t_end / 100
  int line = 0;                         // of the section; 0 when absent
};

// A spatial scene (`dimension: 3`): the items handed to engine::SpatialModelBuilder, with the
// line of each. Body and joint indices are resolved from names by the loader.
struct SpatialScene {
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, 0.0, -9.81);
  std::vector<engine::SpatialBody> bodies;  // body i of the model is bodies[i]
  std::vector<engine::SpatialJoint> joints;
  std::vector<engine::SpatialDriver> drivers;
  std::vector<engine::SpatialSpringDamper> springs;
  std::vector<engine::SpatialTorsionalSpring> torsional_springs;
  std::vector<engine::SpatialLoad> loads;
  std::vector<engine::SpatialPrismaticFriction> prismatic_frictions;
  std::vector<int> body_lines, joint_lines, driver_lines, spring_lines, torsional_lines, load_lines;
  std::vector<int> friction_lines;
  // `shapes:` (pose X_BS in the body frame; body engine::kGround for shapes fixed in the world)
  // and the unilateral contact pairs that `contacts:` selects among them (one
  // contact::SpatialContacts block, after the joint and driver rows).
  std::vector<contact::Shape> shapes;
  std::vector<int> shape_bodies, shape_lines;
  // Per shape: the node of its flexible body (a sphere at a node), −1 otherwise; may be shorter
  // than shapes (the missing entries are −1: shapes of URDF robots and of the Python builder).
  std::vector<int> shape_nodes;
  std::vector<contact::CollisionFilter> shape_filters;
  std::vector<contact::SpatialContactPair> contact_pairs;
  std::vector<int> contact_pair_lines;  // the explicit pair's line, else the shape_b's line
  // `limits:` of revolute and prismatic joints: unilateral stops (contact/joint_limits.h), one
  // contact::JointLimits block after the contact pairs; limit_lines: the joint's line.
  std::vector<contact::JointLimit> limits;
  std::vector<int> limit_lines;
};

// The friction key of `simulation:` (issue 17 §2): `friction`, Coulomb μ ≥ 0 of every contact
// (planar) or contact pair (spatial) without its own `friction` key; already applied to
// Scene::contacts and SpatialScene::contact_pairs. `painleve` and `friction_cone` go to
// events::SimulationOptions (painleve, friction_cone, friction_facets). `rolling_friction` and
// `spinning_friction` (lengths μ_R, μ_S ≥ 0; spatial scenes only): the resistance of every
// contact pair with a sphere on one side and without its own key (contact/spatial_contacts.h,
// "Resistance rows").
struct FrictionOptions {
  double friction = 0.0;
  double rolling_friction = 0.0;
  double spinning_friction = 0.0;
};

struct Scene {
  std::string file;   // label used in messages (the path as given)
  int dimension = 2;  // `dimension`: 2 (planar, the fields below) or 3 (`spatial`)
  SpatialScene spatial;
  // Non-fatal remarks on the input, each "<file>:<line>: <item>: <what>" (e.g. a quaternion
  // normalized because its norm was within 1e-6 of 1); `saltus run` prints them on stderr.
  std::vector<std::string> warnings;
  std::string name;  // `scene`: also the default output directory out/<name>
  std::string description;
  Eigen::Vector2d gravity = Eigen::Vector2d(0.0, -9.81);
  std::vector<engine::PlanarBody> bodies;  // body i of the model is bodies[i]
  std::vector<engine::PlanarJoint> joints;
  std::vector<engine::PlanarDriver> drivers;  // after the joints they drive
  std::vector<engine::PlanarSpringDamper> springs;
  std::vector<engine::PlanarLoad> loads;
  std::vector<engine::PlanarTorsionalSpring> torsional_springs;
  std::vector<contact::PlanarContact> contacts;
  // Everything under `simulation:` except t_end, friction and the keys of time_stepping.
  events::SimulationOptions options;
  // Whether `formulation` was given; without it options has the integrator's default
  // (DefaultFormulation), which a different integrator chosen later replaces by its own.
  bool formulation_given = false;
  FrictionOptions friction;  // `simulation:` friction
  double t_end = 0.0;        // s, > 0
  // The keys of integrator moreau_jean (timestepping/moreau_jean.h; its fixed step
  // `simulation.step` is options.integrator_options.h_init with adaptive = false):
  //   theta             θ ∈ [1/2, 1];
  //   speculative       speculative contacts on (true, the default) or the classical index set
  //                     g(q̃) ≤ 0 (false);
  //   project_contacts  the position projection onto g ≥ −τ₀ after a step (true / false; without
  //                     the key, on when no contact has friction);
  //   sleeping          islands at rest are frozen (true, the default), with sleep_speed (m/s,
  //                     > 0) and sleep_time (s, > 0).
  timestepping::SceneKeys time_stepping;
  // simulation.hybrid and hybrid_* (tools/hybrid_options.h); with hybrid on, simulation.step is
  // hybrid.step (the time-stepping phases), not a fixed step of the event loop's integrator, and
  // the moreau_jean keys above apply to the time-stepping phases.
  HybridOptions hybrid;
  // Output rows allowed when output_step > 0 (simulation.max_output_rows, tools/limits.h):
  // t_end / output_step above it is refused at the line of output_step (CheckOutputRows).
  double max_output_rows = kDefaultMaxOutputRows;
  // Bytes the result files of `saltus run` may take (simulation.max_output_bytes,
  // tools/limits.h; CheckOutputBytes before the run, the CLI's output guard during it).
  double max_output_bytes = kDefaultMaxOutputBytes;
  SceneLines lines;
  SceneReference reference;
};

// Parses and validates a scene given as YAML text; `file` labels the messages. Throws
// SceneError.
Scene ParseScene(std::string_view yaml_text, const std::string& file = "<scene>");
// Reads the file and calls ParseScene with its path as the label. Throws SceneError (also when
// the file cannot be read).
Scene LoadSceneFile(const std::string& path);

// The keys of a scene's `simulation:` section (docs/scene-format.md), also the names of
// saltus.Options in Python.
const std::vector<std::string>& SimulationKeys();

// The scene format's item types (the `type` key of joints, planar contacts and shapes) with
// what each name stands for, in the order messages list them. saltus::PlanarBuilder and
// SpatialBuilder (saltus/builder.h) take the same names from these tables.
template <class T>
using NameTable = std::vector<std::pair<std::string, T>>;
const NameTable<engine::PlanarJointType>& PlanarJointTypes();
const NameTable<engine::SpatialJointType>& SpatialJointTypes();
const NameTable<contact::PlanarContactType>& PlanarContactTypes();
// Shape types with the parameters each takes besides name, body, pose and filters (a
// triangle_mesh also takes per_triangle).
const NameTable<std::vector<std::string>>& ShapeTypeParameters();
// The names of a table, in its order.
template <class T>
std::vector<std::string> TableNames(const NameTable<T>& table) {
  std::vector<std::string> names;
  names.reserve(table.size());
  for (const auto& entry : table) names.push_back(entry.first);
  return names;
}

// The friction cone of `simulation.friction_cone`: "exact" or "faceted N" (an integer N ≥ 3)
// into options->friction_cone and friction_facets; false (options unchanged) for any other text.
bool ParseFrictionCone(const std::string& text, events::SimulationOptions* options);
// The text of options.friction_cone ("exact" or "faceted N"), as ParseFrictionCone reads it.
std::string FrictionConeText(const events::SimulationOptions& options);

// The formulation an integrator uses when none is given: the first one it lists in
// integrators::IntegratorTable(); nullopt for an unknown name.
std::optional<integrators::Formulation> DefaultFormulation(std::string_view integrator);
// " (did you mean 'x'?)" when one candidate is within two edits of `word`, "" otherwise.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// Refuses an output grid of more than scene.max_output_rows rows over [0, t_end]
// (t_end / output_step, tools/limits.h): SceneError at the line of output_step. Called by the
// parser and again after the command line overrides t_end.
void CheckOutputRows(const Scene& scene);
// Refuses an output grid whose trajectory.csv over `duration` seconds (rows of
// `numbers_per_row` = 1 + nq + nv numbers) could exceed scene.max_output_bytes (the estimate of
// tools/limits.h): SceneError at the line of output_step naming max_output_bytes. Runs without a
// grid are bounded while they run.
void CheckOutputBytes(const Scene& scene, double duration, long numbers_per_row);

// Empty when the integrator exists and supports the formulation; otherwise the reason, listing
// the known integrators or the supported formulations (from integrators::IntegratorTable(), and
// timestepping::kMoreauJeanName, which takes any formulation).
std::string CheckIntegratorChoice(std::string_view integrator,
                                  integrators::Formulation formulation);

// The mechanical system of a parsed scene: the multibody model (joints as its first constraint
// block) plus one contact::PlanarContacts block when the scene has contacts, with one row per
// contact in scene order. Throws SceneError with the line of an item the engine rejects.
// Planar scenes only: a spatial scene throws SceneError.
std::shared_ptr<engine::PlanarMultibodySystem> BuildSystem(const Scene& scene);

// The engine::SpatialMultibodySystem of a spatial scene (joint and driver rows as its first
// constraint block, then one contact::SpatialContacts block of SpatialScene::contact_pairs when
// there are any). Throws SceneError with the line of an item the engine rejects, or when the
// scene is planar.
std::shared_ptr<engine::SpatialMultibodySystem> BuildSpatialSystem(const Scene& scene);

// Shape and contact-pair selection of spatial scenes, shared by the loader (`shapes:`,
// `contacts:`) and the Python SpatialBuilder (python/model_bindings.cc).
// A triangle mesh split into one shape per planar face (contact::PlanarFaces: coplanar
// edge-adjacent triangles, e.g. a quad, stay together), named "<name>.<k>" in the order of each
// face's first triangle (`per_triangle: true`): a concave surface then gives a separate gap for
// each face.
std::vector<contact::Shape> PerTriangleShapes(const contact::Shape& mesh, const std::string& name);
// Why shapes i and j of `sp` can never form a pair (same body, both on the ground, neither
// convex); empty if they can.
std::string ContactPairObstacle(const SpatialScene& sp, int i, int j);
// What `contacts:` asks for, in shape items: item k is the first shape of a named shape (several
// shapes share an item when a mesh is split per triangle). Pairs are (smaller, larger) items.
struct ContactPairChoice {
  bool all_pairs = true;                      // `default: all` (else `none`)
  std::vector<std::pair<int, int>> excluded;  // `exclude`
  struct Listed {
    std::pair<int, int> items;
    double restitution = -1.0;        // negative: the simulation's global coefficient
    double friction = -1.0;           // Coulomb μ; negative: ContactPairChoice::friction
    double rolling_friction = -1.0;   // μ_R; negative: ContactPairChoice::resistance
    double spinning_friction = -1.0;  // μ_S; negative: ContactPairChoice::resistance
    int line = 0;
  };
  std::vector<Listed> listed;  // `pairs`, validated by the caller (no obstacle, not excluded)
  double friction = 0.0;       // μ ≥ 0 of the pairs without their own (`simulation.friction`)
  // simulation.rolling_friction and spinning_friction: applied to the pairs with a sphere on one
  // side that have no key of their own (the others have no resistance rows).
  FrictionOptions resistance;
};
// Fills sp->contact_pairs (and contact_pair_lines): every listed pair, plus with all_pairs every
// pair that is not excluded, has no obstacle and passes the group/mask filters. shape_items[i]
// is the item of shape i. Shape A of a pair is the one fixed to the ground if any.
void SelectContactPairs(const ContactPairChoice& choice, const std::vector<int>& shape_items,
                        SpatialScene* sp);

// What `saltus run` simulates: the system of either kind of scene and its initial state.
// For a spatial scene the state is the consistent initialization (engine/assembly.h) of the
// scene's q0, v0 on all joint and driver rows at t = 0, and `report` holds the topology
// (components, loops, free bodies, rank of G, redundant rows, degrees of freedom;
// engine/topology.h) and the size of the assembly corrections. An impossible assembly throws
// SceneError at the line of the first joint or driver whose residual stays large, naming them.
struct SceneSystem {
  std::shared_ptr<engine::MechanicalSystem> system;
  Eigen::VectorXd q0, v0;
  std::string report;  // planar scenes: the topology only, at the scene's q0 (not assembled)
  // Spatial scenes: the topology at the assembled q0 (summary.json's "topology").
  std::optional<engine::TopologyReport> topology;
};
SceneSystem BuildSceneSystem(const Scene& scene);

}  // namespace saltus::tools
