// tools::Hdf5Writer: written during a run, read back with the HDF5 C API and compared with what
// the simulation reported to an observer; contact forces against the statics of a resting ball;
// bad paths; `saltus run --hdf5` on a failed run (exit 3) still leaves a valid file.
#include "tools/hdf5_writer.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/scratch_dir.h"
#include "tools/build_info.h"
#include "tools/cli.h"
#include "tools/metadata.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

// A ball dropped from 1 m (gap 0.9 m) onto the ground with restitution 0: one impact at
// t1 = sqrt(2·0.9/g) with impulse m g t1, then it rests on the ground with λ = m g.
constexpr const char* kDroppedBall = R"(scene: dropped_ball
gravity: [0, -9.81]
bodies:
  - {name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}
contacts:
  - {name: floor, type: disk_line, body_a: ground, body_b: ball, point_a: [0, 0],
     normal_a: [0, 1], radius_b: 0.1, restitution: 0}
simulation:
  t_end: 1
  integrator: dopri5
  formulation: index1
  rtol: 1.0e-8
  atol: 1.0e-10
  output_step: 0.01
)";

struct Recorder : events::Observer {
  std::vector<double> t;
  std::vector<Eigen::VectorXd> q, v;
  std::vector<events::Event> events;
  std::vector<Eigen::VectorXd> e_q, e_v_minus, e_v_plus;
  void OnOutput(double time, const Eigen::VectorXd& qo, const Eigen::VectorXd& vo) override {
    if (!t.empty() && t.back() == time) return;  // the writer's rule for the initial state
    t.push_back(time), q.push_back(qo), v.push_back(vo);
  }
  void OnEvent(const events::Event& e, const Eigen::VectorXd& qe, const Eigen::VectorXd& vm,
               const Eigen::VectorXd& vp) override {
    events.push_back(e), e_q.push_back(qe), e_v_minus.push_back(vm), e_v_plus.push_back(vp);
  }
};

fs::path Scratch(const std::string& name) {
  return test_support::ScratchDir("saltus_hdf5_writer_test", name);
}

// ---- reading back with the C API -----------------------------------------------------------

template <typename T>
hid_t MemoryType();
template <>
hid_t MemoryType<double>() {
  return H5T_NATIVE_DOUBLE;
}
template <>
hid_t MemoryType<int>() {
  return H5T_NATIVE_INT;
}
template <>
hid_t MemoryType<long long>() {
  return H5T_NATIVE_LLONG;
}

template <typename T>
std::vector<T> Read(hid_t file, const char* path, std::vector<hsize_t>* dims) {
  const hid_t dataset = H5Dopen2(file, path, H5P_DEFAULT);
  EXPECT_GE(dataset, 0) << path;
  if (dataset < 0) return {};
  const hid_t space = H5Dget_space(dataset);
  const int rank = H5Sget_simple_extent_ndims(space);
  dims->assign(static_cast<std::size_t>(rank), 0);
  H5Sget_simple_extent_dims(space, dims->data(), nullptr);
  hsize_t n = 1;
  for (hsize_t d : *dims) n *= d;
  std::vector<T> values(n);
  if (n > 0) {
    EXPECT_GE(H5Dread(dataset, MemoryType<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0)
        << path;
  }
  H5Sclose(space);
  H5Dclose(dataset);
  return values;
}

std::vector<std::string> ReadNames(hid_t file, const char* path, const char* attribute) {
  const hid_t dataset = H5Dopen2(file, path, H5P_DEFAULT);
  const hid_t attr = H5Aopen(dataset, attribute, H5P_DEFAULT);
  EXPECT_GE(attr, 0) << path << " @" << attribute;
  const hid_t space = H5Aget_space(attr);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);  // as written
  std::vector<char*> raw(n, nullptr);
  std::vector<std::string> names;
  if (n > 0 && H5Aread(attr, type, raw.data()) >= 0) {
    for (char* s : raw) {
      names.emplace_back(s ? s : "");
      H5free_memory(s);
    }
  }
  H5Tclose(type);
  H5Sclose(space);
  H5Aclose(attr);
  H5Dclose(dataset);
  return names;
}

std::string ReadString(hid_t file, const char* attribute) {
  const hid_t attr = H5Aopen(file, attribute, H5P_DEFAULT);
  EXPECT_GE(attr, 0) << attribute;
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  char* raw = nullptr;
  std::string value;
  if (H5Aread(attr, type, &raw) >= 0 && raw != nullptr) value = raw;
  H5free_memory(raw);
  H5Tclose(type);
  H5Aclose(attr);
  return value;
}

struct RunOutput {
  std::shared_ptr<engine::PlanarMultibodySystem> system;
  Recorder recorder;
  long rows = 0, events = 0;
};

// Runs the dropped ball to `t_end` with an Hdf5Writer of small chunks (several appends).
void RunDroppedBall(const fs::path& file, RunOutput* run) {
  const Scene scene = ParseScene(kDroppedBall, "dropped_ball.yaml");
  run->system = BuildSystem(scene);
  events::Simulation simulation(run->system, scene.options);
  Hdf5Writer writer(*run->system, file, &simulation, false, /*chunk_rows=*/16);
  simulation.AddObserver(&writer);
  simulation.AddObserver(&run->recorder);
  simulation.SetState(0.0, run->system->model().InitialPositions(),
                      run->system->model().InitialVelocities());
  writer.OnOutput(simulation.t(), simulation.q(), simulation.v());
  run->recorder.OnOutput(simulation.t(), simulation.q(), simulation.v());
  ASSERT_EQ(simulation.AdvanceTo(scene.t_end).status, events::RunStatus::kFinished);
  run->rows = writer.rows();
  run->events = writer.events();
  writer.Close();
}

TEST(Hdf5WriterTest, TrajectoryAndEventsReadBackAsReported) {
  const fs::path file = Scratch("roundtrip") / "run.h5";
  RunOutput run;
  RunDroppedBall(file, &run);
  const Recorder& rec = run.recorder;
  ASSERT_EQ(run.rows, static_cast<long>(rec.t.size()));
  ASSERT_GT(rec.t.size(), 90u);  // 0, 0.01, ..., 1: 101 output times
  ASSERT_GE(rec.events.size(), 1u);

  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  std::vector<hsize_t> dims;
  const std::vector<double> t = Read<double>(f, "/trajectory/t", &dims);
  ASSERT_EQ(dims, std::vector<hsize_t>({rec.t.size()}));
  const std::vector<double> q = Read<double>(f, "/trajectory/q", &dims);
  ASSERT_EQ(dims, std::vector<hsize_t>({rec.t.size(), 3}));
  const std::vector<double> v = Read<double>(f, "/trajectory/v", &dims);
  ASSERT_EQ(dims, std::vector<hsize_t>({rec.t.size(), 3}));
  // Binary doubles round-trip exactly; EXPECT_DOUBLE_EQ (4 ulp) is the strictest double check.
  for (std::size_t i = 0; i < rec.t.size(); ++i) {
    EXPECT_DOUBLE_EQ(t[i], rec.t[i]);
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_DOUBLE_EQ(q[3 * i + j], rec.q[i][static_cast<Eigen::Index>(j)]) << i << ' ' << j;
      EXPECT_DOUBLE_EQ(v[3 * i + j], rec.v[i][static_cast<Eigen::Index>(j)]) << i << ' ' << j;
    }
  }
  EXPECT_EQ(ReadNames(f, "/trajectory/q", "names"),
            std::vector<std::string>({"ball.x", "ball.y", "ball.theta"}));
  EXPECT_EQ(ReadNames(f, "/trajectory/v", "names"),
            std::vector<std::string>({"ball.vx", "ball.vy", "ball.vtheta"}));

  const std::size_t ne = rec.events.size();
  const std::vector<double> et = Read<double>(f, "/events/t", &dims);
  ASSERT_EQ(dims, std::vector<hsize_t>({ne}));
  const std::vector<int> kind = Read<int>(f, "/events/kind", &dims);
  const std::vector<long long> start = Read<long long>(f, "/events/row_start", &dims);
  const std::vector<int> count = Read<int>(f, "/events/row_count", &dims);
  const std::vector<int> rows = Read<int>(f, "/events/rows", &dims);
  const std::vector<double> impulses = Read<double>(f, "/events/impulses", &dims);
  const std::vector<double> eq = Read<double>(f, "/events/q", &dims);
  ASSERT_EQ(dims, std::vector<hsize_t>({ne, 3}));
  const std::vector<double> evp = Read<double>(f, "/events/v_plus", &dims);
  const std::vector<double> evm = Read<double>(f, "/events/v_minus", &dims);
  EXPECT_EQ(
      ReadNames(f, "/events/kind", "kinds"),
      std::vector<std::string>({"impact", "takeoff", "contact_closed", "time", "stick", "slip",
                                "tangential_impact", "to_time_stepping", "to_event_driven"}));
  EXPECT_EQ(ReadNames(f, "/events/rows", "names"), std::vector<std::string>({"floor"}));
  for (std::size_t k = 0; k < ne; ++k) {
    const events::Event& e = rec.events[k];
    EXPECT_DOUBLE_EQ(et[k], e.t);
    EXPECT_EQ(kind[k], static_cast<int>(e.kind));
    ASSERT_EQ(count[k], static_cast<int>(e.rows.size()));
    for (std::size_t r = 0; r < e.rows.size(); ++r) {
      const auto at = static_cast<std::size_t>(start[k]) + r;
      EXPECT_EQ(rows[at], e.rows[r]);
      EXPECT_DOUBLE_EQ(impulses[at], e.impulses[r]);
    }
    for (Eigen::Index j = 0; j < 3; ++j) {
      const auto at = 3 * k + static_cast<std::size_t>(j);
      EXPECT_DOUBLE_EQ(eq[at], rec.e_q[k][j]);
      EXPECT_DOUBLE_EQ(evm[at], rec.e_v_minus[k][j]);
      EXPECT_DOUBLE_EQ(evp[at], rec.e_v_plus[k][j]);
    }
  }
  // The physics of the first event: the impact at t1 = sqrt(2·0.9/g) with impulse m g t1.
  const double g = 9.81, t1 = std::sqrt(2 * 0.9 / g);
  ASSERT_EQ(kind[0], static_cast<int>(events::EventKind::kImpact));
  EXPECT_NEAR(et[0], t1, 1e-6);  // event location at rtol 1e-8: far below 1e-6 s
  ASSERT_EQ(count[0], 1);
  EXPECT_NEAR(impulses[0], g * t1, 1e-5);  // impulse = m |v⁻|, v⁻ accurate to ~1e-8·g t1

  // Constraint forces, stored sparsely: no active row in flight, the floor's row with m g =
  // 9.81 N at rest (statics), and the row names.
  const std::vector<long long> f_start = Read<long long>(f, "/forces/row_start", &dims);
  ASSERT_EQ(dims, std::vector<hsize_t>({rec.t.size()}));
  const std::vector<int> f_count = Read<int>(f, "/forces/row_count", &dims);
  const std::vector<int> f_rows = Read<int>(f, "/forces/rows", &dims);
  const std::vector<double> lambda = Read<double>(f, "/forces/lambda", &dims);
  EXPECT_EQ(ReadNames(f, "/forces/rows", "names"), std::vector<std::string>({"floor"}));
  const std::vector<long long> c_start = Read<long long>(f, "/contacts/row_start", &dims);
  const std::vector<int> c_count = Read<int>(f, "/contacts/row_count", &dims);
  const std::vector<int> c_row = Read<int>(f, "/contacts/row", &dims);
  const std::vector<double> c_point = Read<double>(f, "/contacts/point", &dims);
  const std::vector<double> c_normal = Read<double>(f, "/contacts/normal_force", &dims);
  ASSERT_EQ(c_count.size(), rec.t.size());
  int resting = 0;
  for (std::size_t i = 0; i < rec.t.size(); ++i) {
    if (rec.t[i] < t1 - 0.01) {
      EXPECT_EQ(f_count[i], 0) << rec.t[i];
      EXPECT_EQ(c_count[i], 0) << rec.t[i];
    } else if (rec.t[i] > t1 + 0.01) {
      ASSERT_EQ(f_count[i], 1) << rec.t[i];
      const auto k = static_cast<std::size_t>(f_start[i]);
      EXPECT_EQ(f_rows[k], 0);
      EXPECT_NEAR(lambda[k], g, 1e-9) << rec.t[i];  // index-1 solve of m ÿ = −m g + λ: round-off
      ASSERT_EQ(c_count[i], 1);
      const auto c = static_cast<std::size_t>(c_start[i]);
      EXPECT_EQ(c_row[c], 0);
      EXPECT_NEAR(c_point[3 * c], rec.q[i][0], 1e-14);  // under the centre, on the floor
      EXPECT_NEAR(c_point[3 * c + 1], 0.0, 1e-8);       // projection tolerance
      EXPECT_NEAR(c_normal[3 * c + 1], g, 1e-9);        // +y on the ball
      ++resting;
    }
  }
  EXPECT_GT(resting, 40);
  EXPECT_EQ(f_start.back() + f_count.back(), static_cast<long long>(lambda.size()));

  // Every dataset is chunked, extendible (bounded memory for long runs) and compressed.
  for (const char* path :
       {"/trajectory/t", "/trajectory/q", "/forces/lambda", "/events/rows", "/contacts/point"}) {
    const hid_t dataset = H5Dopen2(f, path, H5P_DEFAULT);
    const hid_t dcpl = H5Dget_create_plist(dataset);
    EXPECT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED) << path;
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
      for (const H5Z_filter_t filter : {H5Z_FILTER_DEFLATE, H5Z_FILTER_SHUFFLE}) {
        unsigned flags = 0, values[8] = {};
        std::size_t n = 8;
        EXPECT_GE(H5Pget_filter_by_id2(dcpl, filter, &flags, &n, values, 0, nullptr, nullptr), 0)
            << path << " filter " << filter;
      }
    }
    const hid_t space = H5Dget_space(dataset);
    hsize_t max_dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space, nullptr, max_dims);
    EXPECT_EQ(max_dims[0], H5S_UNLIMITED) << path;
    H5Sclose(space);
    H5Pclose(dcpl);
    H5Dclose(dataset);
  }
  H5Fclose(f);
}

TEST(Hdf5WriterTest, BadPathThrowsNamingIt) {
  const Scene scene = ParseScene(kDroppedBall, "dropped_ball.yaml");
  const auto system = BuildSystem(scene);
  const std::string bad = "/nonexistent_saltus_dir/sub/run.h5";
  try {
    Hdf5Writer writer(*system, bad);
    FAIL() << "no exception for " << bad;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  EXPECT_THROW(Hdf5Writer(*system, Scratch("chunk") / "x.h5", nullptr, false, 0),
               std::invalid_argument);
}

// `saltus run examples/friction/sliding_block.yaml --hdf5` (its header has the closed form): both
// corners slide (mode slip, |Σ λ_T| = μ m g, Σ tangential_force = −μ m g x̂) until t* = v₀/(μ g),
// then stick with no tangential force; the stick event lists both corners with mode stick.
TEST(Hdf5WriterTest, CliFrictionForcesFollowTheSlidingBlocksClosedForm) {
  const fs::path dir = Scratch("friction");
  const std::string scene = std::string(SALTUS_EXAMPLES_DIR) + "/friction/sliding_block.yaml";
  std::ostringstream out, err;
  ASSERT_EQ(
      RunCli(std::vector<std::string>{"run", scene, "--hdf5", "--out", (dir / "out").string()}, out,
             err),
      kExitOk)
      << out.str() << err.str();
  const hid_t f = H5Fopen((dir / "out" / "results.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  std::vector<hsize_t> dims;
  const std::vector<double> t = Read<double>(f, "/trajectory/t", &dims);
  const std::vector<long long> start = Read<long long>(f, "/contacts/row_start", &dims);
  const std::vector<int> count = Read<int>(f, "/contacts/row_count", &dims);
  const std::vector<int> mode = Read<int>(f, "/contacts/mode", &dims);
  const std::vector<double> normal = Read<double>(f, "/contacts/normal", &dims);
  const std::vector<double> tangential = Read<double>(f, "/contacts/tangential", &dims);
  ASSERT_EQ(dims, std::vector<hsize_t>({normal.size(), 2}));
  const std::vector<double> force_t = Read<double>(f, "/contacts/tangential_force", &dims);
  EXPECT_EQ(ReadNames(f, "/contacts/mode", "modes"),
            std::vector<std::string>({"open", "closed", "stick", "slip"}));
  const double m = 1, g = 9.81, mu = 0.3, t_stop = 2.0 / (mu * g);
  int sliding = 0, stuck = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (std::abs(t[i] - t_stop) < 0.01) continue;  // the output row at the stop itself
    ASSERT_EQ(count[i], 2) << t[i];
    const int expected = static_cast<int>(t[i] < t_stop ? contact::ContactMode::kSlip
                                                        : contact::ContactMode::kStick);
    double sum_n = 0, sum_t = 0, sum_fx = 0;
    for (auto c = static_cast<std::size_t>(start[i]); c < static_cast<std::size_t>(start[i]) + 2;
         ++c) {
      EXPECT_EQ(mode[c], expected) << t[i];
      sum_n += normal[c], sum_t += tangential[2 * c], sum_fx += force_t[3 * c];
    }
    // Index-1 solves of forces ~10 N: round-off, 1e-9.
    EXPECT_NEAR(sum_n, m * g, 1e-9) << t[i];
    EXPECT_NEAR(std::abs(sum_t), t[i] < t_stop ? mu * m * g : 0.0, 1e-9) << t[i];
    EXPECT_NEAR(sum_fx, t[i] < t_stop ? -mu * m * g : 0.0, 1e-9) << t[i];  // against the motion
    ++(t[i] < t_stop ? sliding : stuck);
  }
  EXPECT_GT(sliding, 60);  // output_step 0.01 over [0, 0.68) and [0.68, 1.5]
  EXPECT_GT(stuck, 70);
  const std::vector<int> kind = Read<int>(f, "/events/kind", &dims);
  const std::vector<int> e_mode = Read<int>(f, "/events/modes", &dims);
  const std::vector<long long> e_start = Read<long long>(f, "/events/row_start", &dims);
  const std::vector<int> e_count = Read<int>(f, "/events/row_count", &dims);
  const std::vector<double> e_t = Read<double>(f, "/events/t", &dims);
  int sticks = 0;
  for (std::size_t k = 0; k < kind.size(); ++k) {
    if (kind[k] != static_cast<int>(events::EventKind::kStick)) continue;
    ++sticks;
    EXPECT_NEAR(e_t[k], t_stop, 1e-9);  // located on the linear slip speed to round-off
    ASSERT_EQ(e_count[k], 2);
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(e_mode[static_cast<std::size_t>(e_start[k] + r)],
                static_cast<int>(contact::ContactMode::kStick));
    }
  }
  EXPECT_EQ(sticks, 1);
  H5Fclose(f);
}

// The four-corner woodpecker's jammed sleeve makes indeterminate impacts (docs/friction.md,
// "Indeterminate impacts"; the first at t = 0.0708 s): /events/indeterminate of one `--hdf5` run
// flags the same events as events.csv's last column, only impacts, as many as summary.json counts.
TEST(Hdf5WriterTest, CliIndeterminateImpactsAreFlaggedAsInEventsCsv) {
  const fs::path dir = Scratch("indeterminate");
  const std::string scene = std::string(SALTUS_TEST_SCENES_DIR) + "/woodpecker_four_corners.yaml";
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(std::vector<std::string>{"run", scene, "--t-end", "0.2", "--hdf5", "--out",
                                            (dir / "out").string()},
                   out, err),
            kExitOk)
      << out.str() << err.str();
  const hid_t f = H5Fopen((dir / "out" / "results.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  std::vector<hsize_t> dims;
  const std::vector<int> kind = Read<int>(f, "/events/kind", &dims);
  const std::vector<int> flag = Read<int>(f, "/events/indeterminate", &dims);
  H5Fclose(f);
  ASSERT_EQ(flag.size(), kind.size());
  std::ifstream csv(dir / "out" / "events.csv");
  std::string line;
  std::getline(csv, line);  // header; the flag is the last column
  std::vector<int> csv_flag;
  while (std::getline(csv, line)) csv_flag.push_back(line.back() == '1' ? 1 : 0);
  EXPECT_EQ(flag, csv_flag);
  long flagged = 0;
  for (std::size_t k = 0; k < kind.size(); ++k) {
    if (flag[k] == 0) continue;
    ++flagged;
    EXPECT_EQ(kind[k], static_cast<int>(events::EventKind::kImpact)) << k;
  }
  EXPECT_GE(flagged, 1);
  std::ifstream summary(dir / "out" / "summary.json");
  const std::string json((std::istreambuf_iterator<char>(summary)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"indeterminate_impacts\": " + std::to_string(flagged)), std::string::npos);
}

// A pile's row names outgrow an object header's 64 KiB: 90 spheres have m = N(N-1)/2 + 5N = 4455
// rows (pairs and the box's five walls). The file must still be created, with every name.
TEST(Hdf5WriterTest, CliPileWithThousandsOfRowsWritesEveryName) {
  const fs::path dir = Scratch("pile");
  const fs::path scene = dir / "pile90.yaml";
  std::ostringstream gout, gerr;
  ASSERT_EQ(RunCli(std::vector<std::string>{"generate", "sphere_pile", "--n", "90", "--out",
                                            scene.string()},
                   gout, gerr),
            kExitOk)
      << gerr.str();
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(std::vector<std::string>{"run", scene.string(), "--t-end", "0.001", "--hdf5",
                                            "--out", (dir / "out").string()},
                   out, err),
            kExitOk)
      << out.str() << err.str();
  const hid_t f = H5Fopen((dir / "out" / "results.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const std::vector<std::string> names = ReadNames(f, "/forces/rows", "names");
  EXPECT_EQ(names.size(), 90u * 89u / 2u + 5u * 90u);
  EXPECT_EQ(ReadNames(f, "/events/rows", "names"), names);
  H5Fclose(f);
}

// A system without constraint rows (a free body: no joints, no contacts) has no row names; the
// file is still written, with an empty list of event row names (the free-tumbling spatial beam
// failed here).
TEST(Hdf5WriterTest, CliFreeBodyWithoutConstraintRowsWritesEmptyNameLists) {
  const fs::path dir = Scratch("free");
  std::ofstream(dir / "free.yaml") << R"(scene: free_disk
gravity: [0, -9.81]
bodies:
  - {name: disk, mass: 1, inertia: 0.004, position: [0, 1, 0], velocity: [1, 0, 2]}
simulation:
  t_end: 0.1
  output_step: 0.01
)";
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(std::vector<std::string>{"run", (dir / "free.yaml").string(), "--hdf5",
                                            "--reactions", "--out", (dir / "out").string()},
                   out, err),
            kExitOk)
      << out.str() << err.str();
  const hid_t f = H5Fopen((dir / "out" / "results.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  EXPECT_TRUE(ReadNames(f, "/events/rows", "names").empty());
  std::vector<hsize_t> dims;
  const std::vector<double> y = Read<double>(f, "/trajectory/q", &dims);
  ASSERT_EQ(dims.size(), 2u);
  ASSERT_EQ(dims[1], 3u);
  // Free fall from y = 1 with vy = 0 (closed form y = 1 − g t²/2) at the last row, t = 0.1: DOPRI5
  // (order 5) is exact on a parabola, so 1e-12 is round-off with margin.
  EXPECT_NEAR(y[(dims[0] - 1) * 3 + 1], 1.0 - 0.5 * 9.81 * 0.01, 1e-12);
  H5Fclose(f);
}

TEST(Hdf5WriterTest, CliFailedRunStillLeavesAValidFile) {
  // The bouncing ball with a Zeno guard allowing 3 events per 100 s: the 4th impact stops the
  // run (exit 3, as in cli_test).
  const fs::path dir = Scratch("cli");
  std::string text = R"(scene: zeno_ball
gravity: [0, -9.81]
bodies:
  - {name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}
contacts:
  - {name: floor, type: disk_line, body_a: ground, body_b: ball, point_a: [0, 0],
     normal_a: [0, 1], radius_b: 0.1, restitution: 0.9}
simulation:
  t_end: 10
  output_step: 0.01
  zeno: {max_events: 3, window: 100}
)";
  std::ofstream(dir / "zeno.yaml") << text;
  const std::vector<std::string> args = {"run", (dir / "zeno.yaml").string(), "--hdf5", "--out",
                                         (dir / "out").string()};
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(args, out, err), kExitRunFailure) << out.str() << err.str();
  const fs::path file = dir / "out" / "results.h5";
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  std::vector<hsize_t> dims;
  const std::vector<double> t = Read<double>(f, "/trajectory/t", &dims);
  ASSERT_GT(t.size(), 100u);  // the 4th impact is after 2.5 s: > 250 rows
  EXPECT_GT(t.back(), 2.0);
  EXPECT_LT(t.back(), 10.0);
  const std::vector<double> et = Read<double>(f, "/events/t", &dims);
  EXPECT_GE(et.size(), 3u);
  // Provenance as root attributes (tools/metadata.h).
  EXPECT_EQ(ReadString(f, "saltus_version"), std::string(Version()));
  EXPECT_EQ(ReadString(f, "saltus_commit"), std::string(Commit()));
  EXPECT_EQ(ReadString(f, "scene_sha256"), FileSha256((dir / "zeno.yaml").string()));
  EXPECT_EQ(ReadString(f, "command_line").rfind("saltus run ", 0), 0u);
  H5Fclose(f);

  // results.h5 cannot be created (a directory of that name): an output error (exit 1) that
  // names the file.
  fs::create_directories(dir / "out2" / "results.h5");
  std::ostringstream out2, err2;
  EXPECT_EQ(RunCli(std::vector<std::string>{"run", (dir / "zeno.yaml").string(), "--hdf5", "--out",
                                            (dir / "out2").string()},
                   out2, err2),
            kExitError);
  EXPECT_NE(err2.str().find("results.h5"), std::string::npos) << err2.str();

  // --hdf5 is a switch.
  std::ostringstream out3, err3;
  EXPECT_EQ(RunCli(std::vector<std::string>{"run", (dir / "zeno.yaml").string(), "--hdf5=yes",
                                            "--out", (dir / "out3").string()},
                   out3, err3),
            kExitBadInput);
  EXPECT_NE(err3.str().find("--hdf5: takes no value"), std::string::npos) << err3.str();
  EXPECT_FALSE(fs::exists(dir / "out3"));
}

}  // namespace
}  // namespace saltus::tools
