// BuildSystem, BuildSpatialSystem and BuildSceneSystem (tools/scene.h): hand the validated scene
// items to engine::PlanarModelBuilder and contact::PlanarContacts, or to
// engine::SpatialModelBuilder, one at a time, so that whatever those layers still reject is
// reported at the line of the offending item; spatial scenes are then analysed
// (engine/topology.h) and assembled (engine/assembly.h).
#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

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
    for (i = 0; i < scene.springs.size(); ++i) builder.AddSpringDamper(scene.springs[i]);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, LineAt(scene.lines.springs, i), e.what());
  }
  try {
    for (i = 0; i < scene.loads.size(); ++i) builder.AddLoad(scene.loads[i]);
  } catch (const std::invalid_argument& e) {
    throw SceneError(scene.file, LineAt(scene.lines.loads, i), e.what());
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
    add_all(sp.contact_pairs.size(), sp.contact_pair_lines,
            [&](std::size_t i) { contact::SpatialContacts single(model, {sp.contact_pairs[i]}); });
    try {
      system->AddConstraintBlock(
          std::make_shared<const contact::SpatialContacts>(model, sp.contact_pairs));
    } catch (const std::invalid_argument& e) {
      throw SceneError(scene.file, 0, e.what());
    }
  }
  return system;
}

SceneSystem BuildSceneSystem(const Scene& scene) {
  SceneSystem out;
  if (scene.dimension != 3) {
    const std::shared_ptr<engine::PlanarMultibodySystem> planar = BuildSystem(scene);
    out.q0 = planar->model().InitialPositions();
    out.v0 = planar->model().InitialVelocities();
    out.system = planar;
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
    // Point at the first joint or driver named in the failure, else at the joints section.
    int line = 0;
    for (const std::string& item : assembly.failing_items) {
      for (std::size_t j = 0; j < scene.spatial.joints.size() && line == 0; ++j) {
        if (scene.spatial.joints[j].name == item) line = LineAt(scene.spatial.joint_lines, j);
      }
      for (std::size_t d = 0; d < scene.spatial.drivers.size() && line == 0; ++d) {
        if (scene.spatial.drivers[d].name == item) line = LineAt(scene.spatial.driver_lines, d);
      }
    }
    throw SceneError(
        scene.file, line,
        "the initial state cannot be assembled (consistent initialization): " + assembly.message);
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
