// tools::VtkWriter: the .pvd collection and the .vtp frames of a run, parsed back as XML and
// compared with the states the simulation reported; bad paths; `saltus run --vtk` on a failed
// run (exit 3) still leaves a complete collection.
#include "tools/vtk_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/scratch_dir.h"
#include "tests/tools/vtp_reader.h"
#include "tools/cli.h"
#include "tools/scene.h"
#include "tools/vtk_polydata.h"

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
  return test_support::ScratchDir("saltus_vtk_writer_test", name);
}

// Values of the DataArray named `name` (the first with that name), decoded from the binary
// appended data.
std::vector<double> DataArray(const std::string& vtp, const std::string& name) {
  return test_support::VtpArray(vtp, name);
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
    VtkWriter writer(model, scene.contacts, dir, "ball", false, &simulation);
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
  ASSERT_GE(c.t.size(), 12u);                                   // 0, 0.05, ..., 0.6
  const double r = 0.1, g = 9.81, t1 = std::sqrt(2 * 0.9 / g);  // impact, e = 0: rests after
  int resting = 0;
  for (std::size_t i = 0; i < c.t.size(); ++i) {
    EXPECT_DOUBLE_EQ(c.t[i], rec.t[i]);  // %.17g round-trips exactly (4 ulp check)
    const std::string xml = ReadFile(dir / c.files[i]);
    ASSERT_FALSE(xml.empty()) << c.files[i];
    EXPECT_NE(xml.find("compressor=\"vtkZLibDataCompressor\""), std::string::npos);
    EXPECT_DOUBLE_EQ(DataArray(xml, "TimeValue").at(0), rec.t[i]);
    // 1 body centre (no links: the ball's only attachment is its centre), 24 outline points,
    // 2 ends of the floor segment, and the contact point once the ball rests.
    const bool closed = rec.t[i] > t1;
    resting += closed;
    const int points = 1 + kDiskOutlineSegments + 2 + (closed ? 1 : 0);
    ASSERT_EQ(Attribute(xml, "NumberOfPoints"), points);
    EXPECT_EQ(Attribute(xml, "NumberOfVerts"), closed ? 2 : 1);
    EXPECT_EQ(Attribute(xml, "NumberOfLines"), 2);
    const std::vector<double> p = DataArray(xml, "Points");
    const std::vector<double> orientation = DataArray(xml, "orientation");
    const std::vector<double> velocity = DataArray(xml, "velocity");
    const std::vector<double> body = DataArray(xml, "body");
    const std::vector<double> force = DataArray(xml, "force");
    ASSERT_EQ(p.size(), 3u * static_cast<std::size_t>(points));
    ASSERT_EQ(velocity.size(), p.size());
    ASSERT_EQ(force.size(), p.size());
    const Eigen::VectorXd& q = rec.q[i];
    const Eigen::VectorXd& v = rec.v[i];
    // The centre, the x axis and the velocity of the body, exactly (Float64).
    EXPECT_EQ(p[0], q[0]);
    EXPECT_EQ(p[1], q[1]);
    EXPECT_DOUBLE_EQ(orientation[0], std::cos(q[2]));
    EXPECT_DOUBLE_EQ(orientation[1], std::sin(q[2]));
    EXPECT_EQ(velocity[0], v[0]);
    EXPECT_EQ(velocity[1], v[1]);
    EXPECT_EQ(body[0], 0);
    // The outline: every point at distance r from the centre (round-off of cos/sin: 1e-14),
    // carried by the ball, moving with the rigid-body velocity v_r + ω J ρ.
    for (int k = 1; k <= kDiskOutlineSegments; ++k) {
      const double dx = p[3 * k] - q[0], dy = p[3 * k + 1] - q[1];
      EXPECT_NEAR(std::hypot(dx, dy), r, 1e-14) << k;
      EXPECT_NEAR(velocity[3 * k], v[0] - v[2] * dy, 1e-13) << k;
      EXPECT_NEAR(velocity[3 * k + 1], v[1] + v[2] * dx, 1e-13) << k;
    }
    // The floor segment lies on y = 0, centred under the ball, carried by the ground.
    const std::size_t seg = 3 * (1 + kDiskOutlineSegments);
    EXPECT_NEAR(p[seg + 1], 0.0, 1e-14);
    EXPECT_NEAR(p[seg + 4], 0.0, 1e-14);
    EXPECT_NEAR(0.5 * (p[seg] + p[seg + 3]), q[0], 1e-14);
    EXPECT_EQ(body[1 + kDiskOutlineSegments], -1);
    // Cell kinds: body (and contact) vertices, then disk and line.
    EXPECT_EQ(DataArray(xml, "kind"),
              closed ? std::vector<double>({0, 1, 2, 3}) : std::vector<double>({0, 2, 3}));
    const std::vector<double> offsets = DataArray(xml, "offsets");  // Verts' first
    EXPECT_EQ(offsets, closed ? std::vector<double>({1, 2}) : std::vector<double>({1}));
    if (!closed) continue;
    // The contact point is the lowest point of the disk, on the floor (within the event
    // loop's projection tolerance, 1e-8), and carries the resting force m g along +y: the
    // index-1 solve of m ÿ = −m g + λ, exact to round-off (1e-9).
    const std::size_t cp = seg + 6;
    EXPECT_NEAR(p[cp], q[0], 1e-14);
    EXPECT_NEAR(p[cp + 1], q[1] - r, 1e-14);
    EXPECT_NEAR(p[cp + 1], 0.0, 1e-8);
    EXPECT_NEAR(force[cp], 0.0, 1e-9);
    EXPECT_NEAR(force[cp + 1], g, 1e-9);
    EXPECT_EQ(DataArray(xml, "normal_force")[cp + 1], force[cp + 1]);
    EXPECT_EQ(DataArray(xml, "tangential_force")[cp + 1], 0.0);  // frictionless
    EXPECT_EQ(DataArray(xml, "item").at(1), 0);                  // the contact's row
  }
  EXPECT_GT(resting, 2);
}

// A planar mechanism without disks is drawn as its links: a line from each body's centre to
// every joint point on it (the crank of the slider-crank: its two pins).
TEST(VtkWriterTest, PlanarLinksAreDrawn) {
  const fs::path dir = Scratch("links");
  const Scene scene =
      LoadSceneFile(std::string(SALTUS_EXAMPLES_DIR) + "/planar/driven_slider_crank.yaml");
  const auto system = BuildSystem(scene);
  const auto model = std::shared_ptr<const engine::PlanarModel>(system, &system->model());
  VtkWriter writer(model, scene.contacts, dir, "crank");
  const Eigen::VectorXd q = model->InitialPositions(), v = model->InitialVelocities();
  writer.OnOutput(0.0, q, v);
  writer.Close();
  const std::string xml = ReadFile(dir / ReadPvd(dir / "crank.pvd").files.at(0));
  const std::vector<double> kind = DataArray(xml, "kind");
  const std::vector<double> p = DataArray(xml, "Points");
  const std::vector<double> conn = DataArray(xml, "connectivity");  // Verts' first
  EXPECT_GT(std::count(kind.begin(), kind.end(), 7.0), 0);
  // Every joint point of every joint is the end of a link of its bodies: its world position
  // appears among the points.
  for (const engine::PlanarJoint& j : model->joints()) {
    for (const auto& [body, s] : {std::pair{j.body_a, j.point_a}, std::pair{j.body_b, j.point_b}}) {
      if (body == engine::kGround || s.isZero() ||
          j.type == engine::PlanarJointType::kAngleDriver) {
        continue;
      }
      const double c = std::cos(q[3 * body + 2]), sn = std::sin(q[3 * body + 2]);
      const Eigen::Vector2d x(q[3 * body] + c * s.x() - sn * s.y(),
                              q[3 * body + 1] + sn * s.x() + c * s.y());
      bool found = false;
      for (std::size_t k = 0; k + 2 < p.size(); k += 3) {
        found = found || (std::abs(p[k] - x.x()) < 1e-12 && std::abs(p[k + 1] - x.y()) < 1e-12);
      }
      EXPECT_TRUE(found) << j.name;
    }
  }
}

// `saltus run examples/friction/sliding_block.yaml --vtk` (closed form in its header): the force
// glyphs at the two corners sum to the normal force m g ŷ and, while the block slides (t <
// t* = v₀/(μ g)), to the friction force −μ m g x̂ against its motion; after the stop, to zero.
TEST(VtkWriterTest, CliFrictionGlyphsFollowTheSlidingBlock) {
  const fs::path dir = Scratch("friction");
  const std::string scene = std::string(SALTUS_EXAMPLES_DIR) + "/friction/sliding_block.yaml";
  std::ostringstream out, err;
  ASSERT_EQ(
      RunCli(std::vector<std::string>{"run", scene, "--vtk", "--out", dir.string()}, out, err),
      kExitOk)
      << err.str();
  const Collection c = ReadPvd(dir / "vtk.pvd");
  const double m = 1, g = 9.81, mu = 0.3, t_stop = 2.0 / (mu * g);
  int checked = 0;
  for (std::size_t i = 0; i < c.t.size(); i += 10) {
    if (std::abs(c.t[i] - t_stop) < 0.01) continue;
    const std::string xml = ReadFile(dir / c.files[i]);
    const std::vector<double> normal = DataArray(xml, "normal_force");
    const std::vector<double> tangential = DataArray(xml, "tangential_force");
    Eigen::Vector3d n = Eigen::Vector3d::Zero(), f = Eigen::Vector3d::Zero();
    for (std::size_t k = 0; k + 2 < normal.size(); k += 3) {
      n += Eigen::Vector3d(normal[k], normal[k + 1], normal[k + 2]);
      f += Eigen::Vector3d(tangential[k], tangential[k + 1], tangential[k + 2]);
    }
    // Index-1 solves of forces ~10 N: round-off, 1e-9.
    EXPECT_LT((n - Eigen::Vector3d(0, m * g, 0)).norm(), 1e-9) << c.t[i];
    const double friction = c.t[i] < t_stop ? -mu * m * g : 0.0;
    EXPECT_LT((f - Eigen::Vector3d(friction, 0, 0)).norm(), 1e-9) << c.t[i];
    ++checked;
  }
  EXPECT_GE(checked, 14);  // 151 frames, every 10th
}

// Binary appended and compressed: the 60-sphere frame of `saltus generate sphere_pile` is a
// fraction of its ASCII size (0.85 MB before); the exact figure is printed.
TEST(VtkWriterTest, FramesAreCompressed) {
  const std::vector<double> ramp = [] {
    std::vector<double> x(100000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 7);
    return x;
  }();
  const std::string block = CompressVtkArray(ramp.data(), ramp.size() * sizeof(double));
  EXPECT_LT(block.size(), ramp.size() * sizeof(double) / 20);  // a repetitive array
  PolyData frame({"body"}, {"velocity"});
  frame.AddVert(frame.AddPoint(Eigen::Vector3d(1, 2, 3), {5}, {Eigen::Vector3d(4, 5, 6)}), 0, 5);
  const std::string vtp = frame.Encode(0.25, "velocity");
  EXPECT_EQ(DataArray(vtp, "Points"), std::vector<double>({1, 2, 3}));
  EXPECT_EQ(DataArray(vtp, "velocity"), std::vector<double>({4, 5, 6}));
  EXPECT_EQ(DataArray(vtp, "body"), std::vector<double>({5}));
  EXPECT_EQ(DataArray(vtp, "TimeValue"), std::vector<double>({0.25}));
  EXPECT_EQ(DataArray(vtp, "item"), std::vector<double>({5}));
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

// ---- SpatialVtkWriter ------------------------------------------------------------------------

// Values of the DataArray `name` inside the first <section>...</section> (e.g. "Polys").
std::vector<double> SectionArray(const std::string& xml, const std::string& section,
                                 const std::string& name) {
  const std::size_t a = xml.find("<" + section + ">");
  EXPECT_TRUE(a != std::string::npos) << section;
  if (a == std::string::npos) return {};
  return test_support::VtpArray(xml, name, a);
}

// Every edge of the closed surface is shared by exactly two triangles, in opposite directions
// (a consistently oriented, watertight surface); returns the enclosed volume (divergence
// theorem: Σ (x₀ · (x₁ × x₂)) / 6, positive for outward normals).
double ClosedVolume(const SpatialVtkWriter::Surface& s) {
  std::map<std::pair<int, int>, int> directed;
  double volume = 0;
  for (const auto& t : s.triangles) {
    for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
    volume += s.vertices[t[0]].dot(s.vertices[t[1]].cross(s.vertices[t[2]])) / 6;
  }
  for (const auto& [edge, count] : directed) {
    EXPECT_EQ(count, 1) << edge.first << "-" << edge.second;
    EXPECT_EQ(directed.count({edge.second, edge.first}), 1u) << edge.first << "-" << edge.second;
  }
  return volume;
}

TEST(SpatialVtkWriterTest, ShapesAreTessellatedAsClosedOutwardSurfaces) {
  using contact::Shape;
  const double pi = std::numbers::pi;
  // Inscribed polyhedra: their volume is below the exact one, and within 15 % of it at
  // 8 rings × 16 segments (a sphere's lat-long grid loses ~6 %).
  const auto check = [](const Shape& shape, double exact) {
    const SpatialVtkWriter::Surface s = SpatialVtkWriter::Tessellate(shape);
    const double v = ClosedVolume(s);
    EXPECT_LT(v, exact * (1 + 1e-12)) << shape.Label();
    EXPECT_GT(v, 0.85 * exact) << shape.Label();
    return s;
  };
  const auto sphere = check(Shape::Sphere(0.3), 4.0 / 3 * pi * 0.027);
  for (const auto& x : sphere.vertices) EXPECT_NEAR(x.norm(), 0.3, 1e-15);
  const auto box = check(Shape::Box({0.1, 0.2, 0.3}), 0.048);
  EXPECT_NEAR(ClosedVolume(box), 0.048, 1e-15);  // a box is exact
  const auto cyl = check(Shape::Cylinder(0.2, 1.0), pi * 0.04);
  for (const auto& x : cyl.vertices) {
    EXPECT_TRUE(std::abs(x.head<2>().norm() - 0.2) < 1e-15 || x.head<2>().norm() < 1e-15);
    EXPECT_NEAR(std::abs(x.z()), 0.5, 1e-15);
  }
  const auto cap = check(Shape::Capsule(0.1, 0.6), pi * 0.01 * 0.6 + 4.0 / 3 * pi * 1e-3);
  for (const auto& x : cap.vertices) {  // distance r from the segment |z| ≤ L/2 on the axis
    const Eigen::Vector3d axis(0, 0, std::clamp(x.z(), -0.3, 0.3));
    EXPECT_NEAR((x - axis).norm(), 0.1, 1e-15);
  }
  check(Shape::Ellipsoid({0.1, 0.2, 0.4}), 4.0 / 3 * pi * 0.008);
  const auto plane = SpatialVtkWriter::Tessellate(Shape::Plane({0, 0, 2}, 0.5));
  ASSERT_EQ(plane.vertices.size(), 4u);
  // {x : (0, 0, 2)·x ≤ 0.5} is {z ≤ 0.25} once the normal is normalized.
  for (const auto& x : plane.vertices) EXPECT_NEAR(x.z(), 0.25, 1e-15);
}

TEST(SpatialVtkWriterTest, FramesMatchTheReportedPosesAndVelocities) {
  const fs::path dir = Scratch("spatial");
  // Two free bodies, tumbling under gravity: `ball` carries a sphere (offset in its frame),
  // `brick` has no shape (drawn as its inertia box); a box is fixed in the world.
  engine::SpatialModelBuilder builder;
  builder.SetGravity({0, 0, -9.81});
  engine::SpatialBody ball;
  ball.name = "ball";
  ball.mass = 2;
  ball.inertia = Eigen::Vector3d(0.02, 0.03, 0.04).asDiagonal();
  ball.position = {0.5, 0, 1};
  ball.quaternion = Eigen::Vector4d(std::cos(0.3), std::sin(0.3), 0, 0);
  ball.velocity = {1, 0, 2};
  ball.angular_velocity = {3, -1, 2};
  builder.AddBody(ball);
  engine::SpatialBody brick;  // uniform box 0.2 × 0.4 × 0.6 of 3 kg: I = m (b² + c²)/12, ...
  brick.name = "brick";
  brick.mass = 3;
  brick.inertia = Eigen::Vector3d(0.13, 0.1, 0.05).asDiagonal();
  brick.com = {0.1, 0, 0};
  brick.angular_velocity = {0, 0, 1};
  builder.AddBody(brick);
  const auto model = builder.Build();
  auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
  Eigen::Isometry3d offset = Eigen::Isometry3d::Identity();
  offset.translation() = Eigen::Vector3d(0, 0.2, 0);
  std::vector<contact::Shape> shapes = {
      contact::Shape::Sphere(0.25, offset, "ball_shape"),
      contact::Shape::Box({1, 1, 0.1}, Eigen::Isometry3d::Identity(), "table")};
  const std::vector<int> shape_bodies = {0, engine::kGround};
  const int sphere_points =
      static_cast<int>(SpatialVtkWriter::Tessellate(shapes[0]).vertices.size());
  events::SimulationOptions options;
  options.output_step = 0.1;
  Recorder rec;
  {
    events::Simulation simulation(system, options);
    SpatialVtkWriter writer(model, shapes, shape_bodies, dir, "tumble");
    simulation.AddObserver(&writer);
    simulation.AddObserver(&rec);
    simulation.SetState(0.0, model->InitialPositions(), model->InitialVelocities());
    writer.OnOutput(simulation.t(), simulation.q(), simulation.v());
    rec.OnOutput(simulation.t(), simulation.q(), simulation.v());
    ASSERT_EQ(simulation.AdvanceTo(0.5).status, events::RunStatus::kFinished);
    writer.Close();
  }
  const Collection c = ReadPvd(dir / "tumble.pvd");
  ASSERT_EQ(c.t.size(), rec.t.size());
  ASSERT_EQ(c.t.size(), 6u);  // 0, 0.1, ..., 0.5
  // The brick's box: half sides √(6 (I_i + I_j − I_k)/m)/2 = (0.1, 0.2, 0.3).
  const double brick_half_diagonal = std::sqrt(0.01 + 0.04 + 0.09);
  for (std::size_t i = 0; i < c.t.size(); ++i) {
    EXPECT_DOUBLE_EQ(c.t[i], rec.t[i]);
    const std::string xml = ReadFile(dir / c.files[i]);
    // 2 × (origin + 3 triad tips), the sphere, the table (8), the brick's box (8).
    const int n = 8 + sphere_points + 8 + 8;
    ASSERT_EQ(Attribute(xml, "NumberOfPoints"), n);
    EXPECT_EQ(Attribute(xml, "NumberOfVerts"), 2);
    EXPECT_EQ(Attribute(xml, "NumberOfLines"), 6);
    const std::vector<double> p = DataArray(xml, "Points");
    const std::vector<double> vel = DataArray(xml, "velocity");
    const std::vector<double> body = DataArray(xml, "body");
    ASSERT_EQ(p.size(), 3u * static_cast<std::size_t>(n));
    ASSERT_EQ(vel.size(), p.size());
    const auto point = [&](int k) { return Eigen::Vector3d(p[3 * k], p[3 * k + 1], p[3 * k + 2]); };
    const auto velocity = [&](int k) {
      return Eigen::Vector3d(vel[3 * k], vel[3 * k + 1], vel[3 * k + 2]);
    };
    for (int b = 0; b < 2; ++b) {
      const Eigen::VectorXd& q = rec.q[i];
      const Eigen::VectorXd& v = rec.v[i];
      const Eigen::Vector3d r = q.segment<3>(7 * b);
      const Eigen::Matrix3d R =
          Eigen::Quaterniond(q[7 * b + 3], q[7 * b + 4], q[7 * b + 5], q[7 * b + 6])
              .normalized()
              .toRotationMatrix();
      const Eigen::Vector3d rdot = v.segment<3>(6 * b), omega = v.segment<3>(6 * b + 3);
      // Origin and velocity as printed (%.17g); the triad tips along the columns of R, at a
      // common length ℓ (round-off: 1e-14).
      EXPECT_DOUBLE_EQ(point(4 * b).x(), r.x());
      EXPECT_DOUBLE_EQ(point(4 * b).z(), r.z());
      EXPECT_DOUBLE_EQ(velocity(4 * b).y(), rdot.y());
      EXPECT_EQ(body[4 * b], b);
      const double l = (point(4 * b + 1) - r).norm();
      EXPECT_GT(l, 0.0);
      for (int k = 0; k < 3; ++k) {
        EXPECT_LT((point(4 * b + 1 + k) - (r + l * R.col(k))).norm(), 1e-14) << b << k;
        // ṗ = ṙ + R (ω × s), s = ℓ e_k.
        const Eigen::Vector3d s = l * Eigen::Vector3d::Unit(k);
        EXPECT_LT((velocity(4 * b + 1 + k) - (rdot + R * omega.cross(s))).norm(), 1e-13);
      }
      if (b == 0) {  // the sphere: centre r + R (0, 0.2, 0), radius 0.25
        const Eigen::Vector3d centre = r + R * Eigen::Vector3d(0, 0.2, 0);
        for (int k = 8; k < 8 + sphere_points; ++k) {
          EXPECT_NEAR((point(k) - centre).norm(), 0.25, 1e-14) << k;
          EXPECT_EQ(body[static_cast<std::size_t>(k)], 0);
        }
      } else {  // the brick's inertia box: corners at the half diagonal from the centre of mass
        const Eigen::Vector3d com = r + R * Eigen::Vector3d(0.1, 0, 0);
        for (int k = n - 8; k < n; ++k) {
          EXPECT_NEAR((point(k) - com).norm(), brick_half_diagonal, 1e-14) << k;
        }
      }
    }
    // The table stays where it is: z = ±0.1, carried by the ground (−1).
    for (int k = 8 + sphere_points; k < 8 + sphere_points + 8; ++k) {
      EXPECT_NEAR(std::abs(point(k).z()), 0.1, 1e-15);
      EXPECT_EQ(body[static_cast<std::size_t>(k)], -1);
      EXPECT_DOUBLE_EQ(velocity(k).norm(), 0.0);  // the ground does not move
    }
    // Cells: 2 verts (kind 0), 6 axes (4), the sphere's and the table's triangles (5), the
    // brick's 12 (6); "item" gives the body or the shape.
    const std::vector<double> kind = DataArray(xml, "kind");
    const std::vector<double> item = DataArray(xml, "item");
    const std::size_t polys = static_cast<std::size_t>(Attribute(xml, "NumberOfPolys"));
    ASSERT_EQ(kind.size(), 8 + polys);
    ASSERT_EQ(item.size(), kind.size());
    EXPECT_EQ(std::count(kind.begin(), kind.end(), 6.0), 12);
    EXPECT_EQ(std::count(kind.begin(), kind.end(), 4.0), 6);
    EXPECT_EQ(item.back(), 1);  // the brick
    EXPECT_EQ(SectionArray(xml, "Polys", "connectivity").size(), 3 * polys);
    EXPECT_EQ(SectionArray(xml, "Lines", "offsets").back(), 12);
  }
  EXPECT_THROW(SpatialVtkWriter(model, shapes, {0}, dir, "x"), std::invalid_argument);
  EXPECT_THROW(SpatialVtkWriter(model, shapes, {0, 2}, dir, "x"), std::invalid_argument);
  EXPECT_THROW(SpatialVtkWriter(model, {}, {}, dir, "a/b"), std::invalid_argument);
}

TEST(SpatialVtkWriterTest, CliWritesTheSeriesOfASpatialScene) {
  const fs::path dir = Scratch("cli_spatial");
  const char* source = std::getenv("SALTUS_SOURCE_DIR");  // set by ctest
  ASSERT_NE(source, nullptr);
  const std::string scene = std::string(source) + "/examples/spatial/double_pendulum.yaml";
  const std::vector<std::string> args = {"run",     scene, "--vtk", "--out", (dir / "out").string(),
                                         "--t-end", "0.05"};
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(args, out, err), kExitOk) << out.str() << err.str();
  const Collection c = ReadPvd(dir / "out" / "vtk.pvd");
  ASSERT_EQ(c.t.size(), 6u);  // output_step 0.01
  const std::string xml = ReadFile(dir / "out" / c.files.back());
  EXPECT_EQ(Attribute(xml, "NumberOfVerts"), 2);
  EXPECT_EQ(Attribute(xml, "NumberOfPolys"), 24);  // two inertia boxes (no shapes)
  // bar1 turns about the pin at the origin: its origin stays 2 m from it.
  const std::vector<double> p = DataArray(xml, "Points");
  EXPECT_NEAR(std::hypot(p[0], p[1]), 2.0, 1e-6);  // joint projection tolerance
  EXPECT_LT(p[1], 0.0);                            // and falls
}

}  // namespace
}  // namespace saltus::tools
