// BuildSystem (tools/scene.h): hands the validated scene items to engine::PlanarModelBuilder and
// contact::PlanarContacts one at a time, so that whatever those layers still reject is reported
// at the line of the offending item.
#include <stdexcept>
#include <string>

#include "tools/scene.h"

namespace saltus::tools {

namespace {

int LineAt(const std::vector<int>& lines, std::size_t i) { return i < lines.size() ? lines[i] : 0; }

}  // namespace

std::shared_ptr<engine::PlanarMultibodySystem> BuildSystem(const Scene& scene) {
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

}  // namespace saltus::tools
