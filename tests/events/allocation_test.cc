// Heap allocations of the event loop in steady state (issue 19 §1: "no allocation in a step",
// as Drake's LimitMalloc checks). This binary replaces malloc, calloc, realloc and the aligned
// allocators by counting wrappers around glibc's own (__libc_malloc & co.): Eigen's dynamic
// matrices allocate through std::malloc and operator new goes through malloc in libstdc++, so
// every heap allocation of the library is counted. Counting is switched on only around the
// measured calls.
//
// The scene is examples/bouncing_ball.yaml (the Siconos BouncingBallED benchmark): first impact
// at t₁ = √(2·0.9/9.81) = 0.428353 s, the next flight lasts 2 e v₁/g = 0.771 s.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "contact/siconos_loader.h"
#include "events/simulation.h"
#include "tools/scene.h"

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* p);
}

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
void Count() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(std::size_t size) {
  Count();
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  Count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  Count();
  return __libc_realloc(p, size);
}
void free(void* p) { __libc_free(p); }
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
void* memalign(std::size_t alignment, std::size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  Count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}

namespace saltus::events {
namespace {

// Heap allocations made by f().
template <class F>
long AllocationsOf(F&& f) {
  allocations.store(0);
  counting.store(true);
  f();
  counting.store(false);
  return allocations.load();
}

std::string ExamplePath(const std::string& name) {
  const char* root = std::getenv("SALTUS_SOURCE_DIR");
  return (std::filesystem::path(root != nullptr ? root : ".") / "examples" / name).string();
}

class BouncingBallAllocations : public ::testing::Test {
 protected:
  void SetUp() override {
    contact::LoadSiconosNumerics();
    tools::Scene scene = tools::LoadSceneFile(ExamplePath("bouncing_ball.yaml"));
    scene.options.output_step = 0.0;
    system_ = tools::BuildSystem(scene);
    sim_ = std::make_unique<Simulation>(system_, scene.options);
    sim_->SetState(0.0, system_->model().InitialPositions(), system_->model().InitialVelocities());
  }
  std::shared_ptr<engine::PlanarMultibodySystem> system_;
  std::unique_ptr<Simulation> sim_;
};

// The counter sees the allocations it is meant to see (else the tests below prove nothing).
// (The pointers escape through a volatile sink: a new/delete or malloc/free pair that does not
// escape may be elided by the compiler.)
void* volatile sink = nullptr;
TEST(AllocationCounter, CountsMallocAndOperatorNew) {
  const long n = AllocationsOf([] {
    sink = std::malloc(16);
    std::free(sink);
    auto* q = new double[8];
    sink = q;
    delete[] q;
    Eigen::VectorXd v(40);
    sink = v.data();
  });
  EXPECT_EQ(n, 3);
}

// Free flight: after the first steps have sized every workspace (warm-up to 0.2 s), the steps
// up to 0.42 s (before the first impact at 0.4284 s) allocate nothing.
TEST_F(BouncingBallAllocations, StepsOfAFreeFlightAllocateNothing) {
  ASSERT_EQ(sim_->AdvanceTo(0.2).status, RunStatus::kFinished);
  const long steps_before = sim_->stats().integrator.accepted_steps;
  RunResult r;
  const long n = AllocationsOf([&] { r = sim_->AdvanceTo(0.42); });
  ASSERT_EQ(r.status, RunStatus::kFinished);
  EXPECT_GT(sim_->stats().integrator.accepted_steps, steps_before);
  EXPECT_EQ(n, 0);
}

// One impact (the second, at t = 1.1994 s) with its switch and the restart of the integrator
// allocates nothing: everything works in workspaces sized by the first impact (the state at t*,
// the fired witnesses, I₁, the impact problem's assembly with M's factor kept and its result, the
// integrator's Reset), the event records the observers receive are reused with their lists
// (SwitchHandler::Recycle, NewEvent), and so is the Zeno guard's window of recent switches (a
// ring whose entries keep their row lists). History: 41 when this test was written, 33 with
// ResolveImpacts' workspaces (thirteenth session), 7 in the fourteenth, 0 in the fifteenth
// (docs/benchmarks.md).
TEST_F(BouncingBallAllocations, AnImpactAllocatesNothingAfterTheFirst) {
  ASSERT_EQ(sim_->AdvanceTo(1.0).status, RunStatus::kFinished);
  const long impacts_before = sim_->stats().events[static_cast<int>(EventKind::kImpact)];
  RunResult r;
  const long n = AllocationsOf([&] { r = sim_->AdvanceTo(1.5); });
  ASSERT_EQ(r.status, RunStatus::kFinished);
  EXPECT_EQ(sim_->stats().events[static_cast<int>(EventKind::kImpact)], impacts_before + 1);
  RecordProperty("allocations", static_cast<int>(n));
  EXPECT_EQ(n, 0);
}
}  // namespace
}  // namespace saltus::events
