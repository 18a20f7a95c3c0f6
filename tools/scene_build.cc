// BuildSystem, BuildSpatialSystem and BuildSceneSystem (tools/scene.h): hand the validated scene
// items to engine::PlanarModelBuilder and contact::PlanarContacts, or to
// engine::SpatialModelBuilder, one at a time, so that whatever those layers still reject is
// reported at the line of the offending item; spatial scenes are then analysed
// (engine/topology.h) and assembled (engine/assembly.h).
#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/assembly.h"
#include "engine/topology.h"
#include "tools/scene.h"

namespace saltus::tools {

namespace {

int LineAt(const std::vector<int>& lines, std::size_t i) { return i < lines.size() ? lines[i] : 0; }

}  // namespace

std::shared_ptr<engine::PlanarMultibodySystem> BuildSystem(const Scene& scene) {
  if (scene.dimension == 3) {
    throw SceneError(scene.file, 0,
                     "a spatial scene (dimension: 3) is not a planar mechanism: this command "
                     "handles planar scenes only");
  }
  engine::PlanarModelBuilder builder;
  std::size_t i = 0;
  try {
    builder.SetGravity(scene.gravity);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, 0, e.what());
  }
  try {
    for (i = 0; i < scene.bodies.size(); ++i) {
      const int index = builder.AddBody(scene.bodies[i]);
      if (index != static_cast<int>(i)) {
        // The loader resolved body names to list positions; the builder must agree.
        throw std::logic_error("PlanarModelBuilder::AddBody returned index " +
                               std::to_string(index) + " for body " + std::to_string(i));
      }
    }
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, LineAt(scene.lines.bodies, i), e.what());
  }
  try {
    for (i = 0; i < scene.joints.size(); ++i) builder.AddJoint(scene.joints[i]);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, LineAt(scene.lines.joints, i), e.what());
  }
  try {
    for (i = 0; i < scene.drivers.size(); ++i) builder.AddDriver(scene.drivers[i]);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, LineAt(scene.lines.drivers, i), e.what());
  }
  try {
    for (i = 0; i < scene.springs.size(); ++i) builder.AddSpringDamper(scene.springs[i]);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, LineAt(scene.lines.springs, i), e.what());
  }
  try {
    for (i = 0; i < scene.loads.size(); ++i) builder.AddLoad(scene.loads[i]);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, LineAt(scene.lines.loads, i), e.what());
  }
  try {
    for (i = 0; i < scene.torsional_springs.size(); ++i) {
      builder.AddTorsionalSpring(scene.torsional_springs[i]);
    }
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, LineAt(scene.lines.torsional_springs, i), e.what());
  }
  std::shared_ptr<const engine::PlanarModel> model;
  try {
    model = builder.Build();
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, 0, e.what());
  }

  auto system = std::make_shared<engine::PlanarMultibodySystem>(model);
  if (!scene.contacts.empty()) {
    // Validate contacts one by one first, for the line number; then build the one block.
    for (i = 0; i < scene.contacts.size(); ++i) {
      try {
        contact::PlanarContacts single(model, {scene.contacts[i]});
      } catch (const std::invalid_argument& e) {
        throw SceneError(scene.file, LineAt(scene.lines.contacts, i), e.what());
      }
    }
    try {
      system->AddConstraintBlock(
          std::make_shared<const contact::PlanarContacts>(model, scene.contacts));
    } catch (const std::invalid_argument& e) {
      throw SceneError(scene.file, 0, e.what());
    }
  }
  return system;
}

std::shared_ptr<engine::SpatialMultibodySystem> BuildSpatialSystem(const Scene& scene) {
  if (scene.dimension != 3) {
    throw SceneError(scene.file, 0, "not a spatial scene (dimension: 3)");
  }
  const SpatialScene& sp = scene.spatial;
  engine::SpatialModelBuilder builder;
  // Runs add(i) for every item, reporting a rejection at the item's line.
  const auto add_all = [&](std::size_t count, const std::vector<int>& lines, auto add) {
    for (std::size_t i = 0; i < count; ++i) {
      try {
        add(i);
      } catch (const std::invalid_argument& e) {
        throw SceneError(scene.file, LineAt(lines, i), e.what());
      }
    }
  };
  try {
    builder.SetGravity(sp.gravity);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, 0, e.what());
  }
  add_all(sp.bodies.size(), sp.body_lines, [&](std::size_t i) {
    const int index = builder.AddBody(sp.bodies[i]);
    if (index != static_cast<int>(i)) {
      // The loader resolved body names to list positions; the builder must agree.
      throw std::logic_error("SpatialModelBuilder::AddBody returned index " +
                             std::to_string(index) + " for body " + std::to_string(i));
    }
  });
  add_all(sp.joints.size(), sp.joint_lines, [&](std::size_t i) { builder.AddJoint(sp.joints[i]); });
  add_all(sp.drivers.size(), sp.driver_lines,
          [&](std::size_t i) { builder.AddDriver(sp.drivers[i]); });
  add_all(sp.springs.size(), sp.spring_lines,
          [&](std::size_t i) { builder.AddSpringDamper(sp.springs[i]); });
  add_all(sp.torsional_springs.size(), sp.torsional_lines,
          [&](std::size_t i) { builder.AddTorsionalSpring(sp.torsional_springs[i]); });
  add_all(sp.loads.size(), sp.load_lines, [&](std::size_t i) { builder.AddLoad(sp.loads[i]); });
  add_all(sp.prismatic_frictions.size(), sp.friction_lines,
          [&](std::size_t i) { builder.AddPrismaticFriction(sp.prismatic_frictions[i]); });
  std::shared_ptr<const engine::SpatialModel> model;
  std::shared_ptr<engine::SpatialMultibodySystem> system;
  try {
    model = builder.Build();
    system = std::make_shared<engine::SpatialMultibodySystem>(model);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, 0, e.what());
  }
  if (!sp.contact_pairs.empty()) {
    // Validate the pairs one by one first, for the line number; then build the one block.
    add_all(sp.contact_pairs.size(), sp.contact_pair_lines, [&](std::size_t i) {
      contact::SpatialContacts::CheckPair(*model, sp.contact_pairs[i], i);
    });
    try {
      system->AddConstraintBlock(
          std::make_shared<const contact::SpatialContacts>(model, sp.contact_pairs));
    } catch (const std::invalid_argument& e) {
      throw SceneError(scene.file, 0, e.what());
    }
  }
  if (!sp.limits.empty()) {
    // One by one first, for the line number (as the contact pairs); then the one block.
    add_all(sp.limits.size(), sp.limit_lines,
            [&](std::size_t k) { contact::JointLimits(model, {sp.limits[k]}); });
    system->AddConstraintBlock(std::make_shared<const contact::JointLimits>(model, sp.limits));
  }
  return system;
}

std::vector<contact::Shape> PerTriangleShapes(const contact::Shape& mesh, const std::string& name) {
  // One shape per planar face (coplanar edge-adjacent triangles merged): a flat diagonal of a
  // quad is then no handover between two rows (docs/contact-geometry.md, "Crease crossings").
  std::vector<contact::Shape> parts;
  std::vector<contact::PlanarFace> faces = contact::PlanarFaces(mesh.mesh());
  for (std::size_t k = 0; k < faces.size(); ++k) {
    parts.push_back(contact::Shape::TriangleMeshSurface(std::move(faces[k].mesh), mesh.pose(),
                                                        name + "." + std::to_string(k)));
  }
  return parts;
}

namespace {

// Whether shapes i and j of `sp` can form a pair: ContactPairObstacle without building the
// message (SelectContactPairs asks it for every pair of shapes).
bool CanPair(const SpatialScene& sp, std::size_t a, std::size_t b) {
  return sp.shape_bodies[a] != sp.shape_bodies[b] &&
         (sp.shapes[a].is_convex() || sp.shapes[b].is_convex());
}

}  // namespace

std::string ContactPairObstacle(const SpatialScene& sp, int i, int j) {
  const std::size_t a = static_cast<std::size_t>(i), b = static_cast<std::size_t>(j);
  if (CanPair(sp, a, b)) return {};
  if (sp.shape_bodies[a] == sp.shape_bodies[b]) {
    return sp.shape_bodies[a] == engine::kGround ? "both shapes are fixed to the ground"
                                                 : "both shapes are on the same body";
  }
  return "neither shape is convex (a pair needs a sphere, box, cylinder, capsule, ellipsoid "
         "or convex mesh on one side)";
}

void SelectContactPairs(const ContactPairChoice& choice, const std::vector<int>& shape_items,
                        SpatialScene* sp) {
  const int n = static_cast<int>(sp->shapes.size());
  const auto add = [&](int i, int j, const ContactPairChoice::Listed& given) {
    std::size_t a = static_cast<std::size_t>(i), b = static_cast<std::size_t>(j);
    // Shape A: the one fixed to the ground if any (the contact layer's convention).
    if (sp->shape_bodies[b] == engine::kGround) std::swap(a, b);
    contact::SpatialContactPair pair;
    pair.name = sp->shapes[a].name() + "-" + sp->shapes[b].name();
    pair.body_a = sp->shape_bodies[a];
    pair.shape_a = sp->shapes[a];
    pair.body_b = sp->shape_bodies[b];
    pair.shape_b = sp->shapes[b];
    pair.node_a = a < sp->shape_nodes.size() ? sp->shape_nodes[a] : -1;
    pair.node_b = b < sp->shape_nodes.size() ? sp->shape_nodes[b] : -1;
    pair.restitution = given.restitution;
    pair.friction = given.friction < 0.0 ? choice.friction : given.friction;
    // The simulation-wide resistance applies where the pair has resistance rows (a sphere).
    const bool sphere = pair.shape_a.type() == contact::ShapeType::kSphere ||
                        pair.shape_b.type() == contact::ShapeType::kSphere;
    const auto resistance = [&](double own, double global) {
      return own >= 0.0 ? own : sphere ? global : 0.0;
    };
    pair.rolling_friction = resistance(given.rolling_friction, choice.resistance.rolling_friction);
    pair.spinning_friction =
        resistance(given.spinning_friction, choice.resistance.spinning_friction);
    sp->contact_pairs.push_back(std::move(pair));
    sp->contact_pair_lines.push_back(given.line);
  };
  // A per-triangle mesh is a run of many shapes on one body: without a listed pair for shape i,
  // every shape j of a run on i's body has an obstacle and is skipped in one step (all pairs
  // would be O(shapes^2): 5e9 for a 100k-face terrain). run_end[j]: one past the run of j.
  std::vector<int> run_end(static_cast<std::size_t>(n));
  for (int j = n - 1; j >= 0; --j) {
    const std::size_t k = static_cast<std::size_t>(j);
    run_end[k] =
        j + 1 < n && sp->shape_bodies[k + 1] == sp->shape_bodies[k] ? run_end[k + 1] : j + 1;
  }
  std::vector<bool> item_listed;
  for (const ContactPairChoice::Listed& l : choice.listed) {
    for (const int item : {l.items.first, l.items.second}) {
      if (item < 0) continue;
      if (static_cast<std::size_t>(item) >= item_listed.size()) {
        item_listed.resize(static_cast<std::size_t>(item) + 1, false);
      }
      item_listed[static_cast<std::size_t>(item)] = true;
    }
  }
  for (int i = 0; i < n; ++i) {
    const std::size_t ki = static_cast<std::size_t>(i);
    const int gi = shape_items[ki];
    const bool may_skip_runs = gi < 0 || static_cast<std::size_t>(gi) >= item_listed.size() ||
                               !item_listed[static_cast<std::size_t>(gi)];
    for (int j = i + 1; j < n; ++j) {
      if (may_skip_runs && sp->shape_bodies[static_cast<std::size_t>(j)] == sp->shape_bodies[ki]) {
        j = run_end[static_cast<std::size_t>(j)] - 1;  // same body, not listed: no pair
        continue;
      }
      const int gj = shape_items[static_cast<std::size_t>(j)];
      const std::pair<int, int> item{std::min(gi, gj), std::max(gi, gj)};
      const auto it =
          std::find_if(choice.listed.begin(), choice.listed.end(),
                       [&](const ContactPairChoice::Listed& l) { return l.items == item; });
      if (it != choice.listed.end()) {
        add(i, j, *it);
        continue;
      }
      if (!choice.all_pairs ||
          std::find(choice.excluded.begin(), choice.excluded.end(), item) !=
              choice.excluded.end() ||
          !CanPair(*sp, ki, static_cast<std::size_t>(j))) {
        continue;
      }
      const contact::CollisionFilter& fa = sp->shape_filters[static_cast<std::size_t>(i)];
      const contact::CollisionFilter& fb = sp->shape_filters[static_cast<std::size_t>(j)];
      if ((fa.group & fb.mask) == 0 || (fb.group & fa.mask) == 0) continue;
      ContactPairChoice::Listed defaults;
      defaults.line = LineAt(sp->shape_lines, static_cast<std::size_t>(j));
      add(i, j, defaults);
    }
  }
}

namespace {

// A failed consistent initialization as a SceneError at the line of the first joint or driver
// the failure names (else at the first joint).
template <class Joint, class Driver>
[[noreturn]] void ThrowAssemblyFailure(const Scene& scene, const engine::AssemblyReport& assembly,
                                       const std::vector<Joint>& joints,
                                       const std::vector<int>& joint_lines,
                                       const std::vector<Driver>& drivers,
                                       const std::vector<int>& driver_lines) {
  int line = 0;
  for (const std::string& item : assembly.failing_items) {
    for (std::size_t j = 0; j < joints.size() && line == 0; ++j) {
      if (joints[j].name == item) line = LineAt(joint_lines, j);
    }
    for (std::size_t d = 0; d < drivers.size() && line == 0; ++d) {
      if (drivers[d].name == item) line = LineAt(driver_lines, d);
    }
  }
  if (line == 0 && !joint_lines.empty()) line = joint_lines.front();  // the joints section
  throw SceneError(
      scene.file, line,
      "the initial state cannot be assembled (consistent initialization): " + assembly.message);
}

}  // namespace

SceneSystem BuildSceneSystem(const Scene& scene) {
  SceneSystem out;
  if (scene.dimension != 3) {
    const std::shared_ptr<engine::PlanarMultibodySystem> planar = BuildSystem(scene);
    out.q0 = planar->model().InitialPositions();
    out.v0 = planar->model().InitialVelocities();
    out.system = planar;
    // An initial state that no correction can make consistent is refused here, naming the
    // joints and drivers left with a large residual. A consistent one is NOT replaced by the
    // assembled state: the event loop's projection (events::Simulation::SetState) makes the
    // planar state consistent as it always has, so planar results do not change.
    {
      Eigen::VectorXd q = out.q0, v = out.v0;
      std::vector<int> rows(static_cast<std::size_t>(planar->model().num_joint_rows()));
      for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<int>(r);
      const engine::AssemblyReport assembly =
          engine::Assemble(*planar, 0.0, rows, engine::AssemblyOptions{}, &q, &v);
      if (!assembly.ok) {
        ThrowAssemblyFailure(scene, assembly, scene.joints, scene.lines.joints, scene.drivers,
                             scene.lines.drivers);
      }
    }
    // The same topology report as for spatial scenes (summary.json keeps it for spatial ones).
    out.report =
        "topology: " + engine::AnalyzeTopology(*planar, 0.0, out.q0).Summary(planar->model());
    return out;
  }
  const std::shared_ptr<engine::SpatialMultibodySystem> system = BuildSpatialSystem(scene);
  const engine::SpatialModel& model = system->model();
  out.q0 = model.InitialPositions();
  out.v0 = model.InitialVelocities();
  std::vector<int> rows(static_cast<std::size_t>(system->num_joint_rows()));
  for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<int>(r);

  // Consistent initialization (|g| <= 1e-10; the event loop's SetState then projects to its
  // own tolerance).
  const engine::AssemblyReport assembly =
      engine::Assemble(*system, 0.0, rows, engine::AssemblyOptions{}, &out.q0, &out.v0);
  if (!assembly.ok) {
    ThrowAssemblyFailure(scene, assembly, scene.spatial.joints, scene.spatial.joint_lines,
                         scene.spatial.drivers, scene.spatial.driver_lines);
  }
  out.topology = engine::AnalyzeTopology(*system, 0.0, out.q0);
  std::ostringstream report;
  report << "topology: " << out.topology->Summary(model);
  report << "assembly: position correction " << assembly.position_correction
         << ", velocity correction " << assembly.velocity_correction << " (" << assembly.iterations
         << " iterations, |g|max " << assembly.position_residual << ")\n";
  out.report = report.str();
  out.system = system;
  return out;
}

}  // namespace saltus::tools
