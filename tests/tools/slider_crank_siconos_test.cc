// The clearance slider-crank with the data of Siconos' example Mechanics/SliderCrank
// (tests/tools/data/slider_crank_siconos_data.yaml: free crank, corners at (±0.05, ±0.025),
// walls at y = ±0.026) against the features of its published reference trajectory
// (SliderCrankMoreauJeanCombinedProjectionOSI.ref: Moreau–Jean with combined projection,
// h = 1e-4 s) that do not depend on the reference's O(h) error. That trajectory gains energy in
// flight (+0.05 J of 7.50 J in the first 2 ms; +1.08 J over 0.2 s), so later impact times and
// the crank's phase drift from the event loop's; with h = 1e-5 Siconos agrees with the event
// loop to 0.011 crank revolutions at 0.2 s (bench/compare_slider_crank.py; docs/friction.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/tools/friction_scene_run.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;
using events::EventKind;

const fs::path kData = fs::path(SALTUS_TEST_DATA_DIR);

std::vector<std::string> ContactNames(const SceneRun& run, const events::Event& e) {
  std::vector<std::string> names;
  for (int row : e.rows) names.push_back(run.built.system->constraint_info(row).name);
  return names;
}

TEST(SliderCrankSiconosTest, FirstImpactsOfEachWallFallInTheReferenceSteps) {
  SceneRun run(kData, "slider_crank_siconos_data.yaml");
  double largest_rotation = 0;
  const int theta3 = 8;  // q = (x, y, θ) of crank, rod, slider
  run.rec.on_output = [&](double, const Eigen::VectorXd& q) {
    largest_rotation = std::max(largest_rotation, std::abs(q[theta3]));
  };
  const events::RunResult res = run.Advance(0.03);
  ASSERT_EQ(res.status, events::RunStatus::kFinished) << res.message;
  const auto impacts = run.rec.Of(EventKind::kImpact);
  ASSERT_FALSE(impacts.empty());

  // The first impact: both upper corners at once. The reference's impulses turn positive in the
  // step [0.0027, 0.0028] s; the bound is that step widened by one step h = 1e-4 s for the
  // reference's drift (its h = 1e-5 run has the step [0.00269, 0.00270]).
  EXPECT_EQ(ContactNames(run, *impacts.front()),
            (std::vector<std::string>{"top_left", "top_right"}));
  EXPECT_GT(impacts.front()->t, 0.0027 - 1e-4);
  EXPECT_LT(impacts.front()->t, 0.0028 + 1e-4);

  // The first impact on the lower wall: both lower corners, in the reference's step
  // [0.0258, 0.0259] s (same widening).
  const events::Event* first_lower = nullptr;
  for (const events::Event* e : impacts) {
    if (ContactNames(run, *e).front().rfind("bottom", 0) == 0) {
      first_lower = e;
      break;
    }
  }
  ASSERT_NE(first_lower, nullptr);
  EXPECT_EQ(ContactNames(run, *first_lower),
            (std::vector<std::string>{"bottom_left", "bottom_right"}));
  EXPECT_GT(first_lower->t, 0.0258 - 1e-4);
  EXPECT_LT(first_lower->t, 0.0259 + 1e-4);

  // Symmetric data: the slider never rotates (the reference's θ₃ stays below 1e-15 rad); the
  // bound is the integration tolerance on an angle (rtol 1e-8 · O(1)).
  EXPECT_LT(largest_rotation, 1e-8);
  // Newton's law with e = 0.4 and friction only dissipate here (bound: round-off of T + V).
  for (const events::Event* e : impacts) EXPECT_LE(e->energy_after, e->energy_before * (1 + 1e-12));
}

}  // namespace
}  // namespace saltus::tools
