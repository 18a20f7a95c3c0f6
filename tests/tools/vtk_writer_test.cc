// tools::VtkWriter: the .pvd collection and the .vtp frames of a run, parsed back as XML and
// compared with the states the simulation reported; bad paths; `saltus run --vtk` on a failed
// run (exit 3) still leaves a complete collection.
#include "tools/vtk_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

// A ball dropped from 1 m onto the ground line y = 0 with e = 0, then resting; it spins
// (θ̇ = 2 rad/s) so that orientations and point velocities vary.
constexpr const char* kDroppedBall = R"(scene: dropped_ball
gravity: [0, -9.81]
bodies:
  - {name: ball, mass: 1, inertia: 0.004, position: [0.5, 1, 0.3], velocity: [0, 0, 2]}
contacts:
  - {name: floor, type: disk_line, body_a: ground, body_b: ball, point_a: [0, 0],
     normal_a: [0, 1], radius_b: 0.1, restitution: 0}
simulation:
  t_end: 0.6
  output_step: 0.05
)";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path Scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("saltus_vtk_writer_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Values of the DataArray named `name` (whitespace-separated text).
std::vector<double> DataArray(const std::string& xml, const std::string& name) {
  const std::regex pattern("<DataArray[^>]*Name=\"" + name + "\"[^>]*>([^<]*)</DataArray>");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(xml, m, pattern)) << name;
  std::vector<double> values;
  std::istringstream in(m.size() > 1 ? m[1].str() : "");
  double x = 0;
  while (in >> x) values.push_back(x);
  return values;
}

int Attribute(const std::string& xml, const std::string& name) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(xml, m, std::regex(name + "=\"([0-9]+)\""))) << name;
  return m.size() > 1 ? std::stoi(m[1].str()) : -1;
}

struct Collection {
  std::vector<double> t;
  std::vector<std::string> files;
};

Collection ReadPvd(const fs::path& pvd) {
  const std::string xml = ReadFile(pvd);
  EXPECT_NE(xml.find("<VTKFile type=\"Collection\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("</Collection>\n</VTKFile>"), std::string::npos) << xml;
  Collection c;
  const std::regex entry("<DataSet timestep=\"([^\"]+)\"[^>]*file=\"([^\"]+)\"/>");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), entry); it != std::sregex_iterator();
       ++it) {
    c.t.push_back(std::stod((*it)[1].str()));
    c.files.push_back((*it)[2].str());
  }
  return c;
}

struct Recorder : events::Observer {
  std::vector<double> t;
  std::vector<Eigen::VectorXd> q, v;
  void OnOutput(double time, const Eigen::VectorXd& qo, const Eigen::VectorXd& vo) override {
    if (!t.empty() && t.back() == time) return;
    t.push_back(time), q.push_back(qo), v.push_back(vo);
  }
};

TEST(VtkWriterTest, FramesMatchTheReportedStates) {
  const fs::path dir = Scratch("frames");
  const Scene scene = ParseScene(kDroppedBall, "dropped_ball.yaml");
  const auto system = BuildSystem(scene);
  const auto model = std::shared_ptr<const engine::PlanarModel>(system, &system->model());
  Recorder rec;
  {
    events::Simulation simulation(system, scene.options);
    VtkWriter writer(model, scene.contacts, dir, "ball");
    simulation.AddObserver(&writer);
    simulation.AddObserver(&rec);
    simulation.SetState(0.0, model->InitialPositions(), model->InitialVelocities());
    writer.OnOutput(simulation.t(), simulation.q(), simulation.v());
    rec.OnOutput(simulation.t(), simulation.q(), simulation.v());
    ASSERT_EQ(simulation.AdvanceTo(scene.t_end).status, events::RunStatus::kFinished);
    EXPECT_EQ(writer.frames(), static_cast<long>(rec.t.size()));
    writer.Close();
  }
  const Collection c = ReadPvd(dir / "ball.pvd");
  ASSERT_EQ(c.t.size(), rec.t.size());
  ASSERT_GE(c.t.size(), 12u);  // 0, 0.05, ..., 0.6
  const double r = 0.1;
  for (std::size_t i = 0; i < c.t.size(); ++i) {
    EXPECT_DOUBLE_EQ(c.t[i], rec.t[i]);  // %.17g round-trips exactly (4 ulp check)
    const std::string xml = ReadFile(dir / c.files[i]);
    ASSERT_FALSE(xml.empty()) << c.files[i];
    // 1 body centre, 24 outline points, 1 contact point, 2 ends of the floor segment.
    ASSERT_EQ(Attribute(xml, "NumberOfPoints"), 1 + kDiskOutlineSegments + 1 + 2);
    EXPECT_EQ(Attribute(xml, "NumberOfVerts"), 2);
    EXPECT_EQ(Attribute(xml, "NumberOfLines"), 2);
    const std::vector<double> p = DataArray(xml, "Points");
    const std::vector<double> orientation = DataArray(xml, "orientation");
    const std::vector<double> velocity = DataArray(xml, "velocity");
    const std::vector<double> body = DataArray(xml, "body");
    ASSERT_EQ(p.size(), 3u * 28u);
    ASSERT_EQ(velocity.size(), p.size());
    const Eigen::VectorXd& q = rec.q[i];
    const Eigen::VectorXd& v = rec.v[i];
    // The centre, the x axis and the velocity of the body, exactly as printed (%.17g).
    EXPECT_DOUBLE_EQ(p[0], q[0]);
    EXPECT_DOUBLE_EQ(p[1], q[1]);
    EXPECT_DOUBLE_EQ(orientation[0], std::cos(q[2]));
    EXPECT_DOUBLE_EQ(orientation[1], std::sin(q[2]));
    EXPECT_DOUBLE_EQ(velocity[0], v[0]);
    EXPECT_DOUBLE_EQ(velocity[1], v[1]);
    EXPECT_EQ(body[0], 0);
    // The outline: every point at distance r from the centre (round-off of cos/sin: 1e-14),
    // carried by the ball, moving with the rigid-body velocity v_r + ω J ρ.
    for (int k = 1; k <= kDiskOutlineSegments; ++k) {
      const double dx = p[3 * k] - q[0], dy = p[3 * k + 1] - q[1];
      EXPECT_NEAR(std::hypot(dx, dy), r, 1e-14) << k;
      EXPECT_NEAR(velocity[3 * k], v[0] - v[2] * dy, 1e-13) << k;
      EXPECT_NEAR(velocity[3 * k + 1], v[1] + v[2] * dx, 1e-13) << k;
    }
    // The contact point is the lowest point of the disk, x of the centre, y − r.
    const std::size_t cp = 3 * (1 + kDiskOutlineSegments);
    EXPECT_NEAR(p[cp], q[0], 1e-14);
    EXPECT_NEAR(p[cp + 1], q[1] - r, 1e-14);
    // The floor segment lies on y = 0, centred under the ball, carried by the ground.
    EXPECT_NEAR(p[cp + 4], 0.0, 1e-14);
    EXPECT_NEAR(p[cp + 7], 0.0, 1e-14);
    EXPECT_NEAR(0.5 * (p[cp + 3] + p[cp + 6]), q[0], 1e-14);
    EXPECT_EQ(body[1 + kDiskOutlineSegments + 1], -1);
    // Cell kinds: body and contact vertices, then disk and line.
    EXPECT_EQ(DataArray(xml, "kind"), std::vector<double>({0, 1, 2, 3}));
    const std::vector<double> offsets = DataArray(xml, "offsets");  // Verts' first
    EXPECT_EQ(offsets, std::vector<double>({1, 2}));
  }
  // Resting at the end: the contact point on the floor.
  const std::string last = ReadFile(dir / c.files.back());
  EXPECT_NEAR(DataArray(last, "Points")[1], r, 1e-8);  // projection tolerance of the event loop
}

TEST(VtkWriterTest, BadPathsThrowNamingThem) {
  const fs::path dir = Scratch("bad");
  const Scene scene = ParseScene(kDroppedBall, "dropped_ball.yaml");
  const auto system = BuildSystem(scene);
  const auto model = std::shared_ptr<const engine::PlanarModel>(system, &system->model());
  std::ofstream(dir / "file") << "not a directory";
  try {
    VtkWriter writer(model, scene.contacts, dir / "file", "frames");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(VtkWriter(model, scene.contacts, dir, "a/b"), std::invalid_argument);
  EXPECT_THROW(VtkWriter(model, scene.contacts, dir, ""), std::invalid_argument);
}

TEST(VtkWriterTest, CliFailedRunStillLeavesACompleteCollection) {
  // Zeno guard: 3 events per 100 s, the 4th impact stops the run (exit 3, as in cli_test).
  const fs::path dir = Scratch("cli");
  std::ofstream(dir / "zeno.yaml") << R"(scene: zeno_ball
gravity: [0, -9.81]
bodies:
  - {name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}
contacts:
  - {name: floor, type: disk_line, body_a: ground, body_b: ball, point_a: [0, 0],
     normal_a: [0, 1], radius_b: 0.1, restitution: 0.9}
simulation:
  t_end: 10
  output_step: 0.1
  zeno: {max_events: 3, window: 100}
)";
  const std::vector<std::string> args = {"run", (dir / "zeno.yaml").string(), "--vtk", "--out",
                                         (dir / "out").string()};
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(args, out, err), kExitRunFailure) << out.str() << err.str();
  const Collection c = ReadPvd(dir / "out" / "vtk.pvd");
  ASSERT_GT(c.t.size(), 20u);  // the run stops after 2.5 s: > 25 frames
  EXPECT_LT(c.t.back(), 10.0);
  for (const std::string& file : c.files) {
    EXPECT_NE(ReadFile(dir / "out" / file).find("</VTKFile>"), std::string::npos) << file;
  }
  EXPECT_FALSE(fs::exists(dir / "out" / "vtk.pvd.partial"));
}

}  // namespace
}  // namespace saltus::tools
