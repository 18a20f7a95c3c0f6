// siconos_event_driven: runs a Saltus scene file with Siconos 4.4's event-driven scheme, the
// reference that bench/compare_siconos.py compares Saltus with.
//
// Scenes: the subset of the Saltus scene format (docs/scene-format.md) in which every contact
// is linear in q — a vertical column of disks above a horizontal ground line, all disks on
// one vertical line and moving vertically (examples/bouncing_ball.yaml, examples/ball_stack.yaml).
// Anything else (joints, force elements, tilted lines, disks off the column, horizontal
// velocities or gravity) is rejected with a message naming the item and its line. Keys that
// only concern Saltus' own solver (integrator, rtol, output_step, ...) are ignored.
//
// Model, written with the Siconos kernel API:
//   each body     LagrangianLinearTIDS, q = (x, y, θ), M = diag(m, m, J), F_ext = (0, m g_y, 0)
//   each contact  LagrangianLinearTIR y = H q + b with NewtonImpactNSL(e), the gap of the scene:
//                   disk_line (ground, normal (0, 1), point c): y = y_b − c_y − r_b
//                   disk_disk:                                   y = s (y_b − y_a) − r_a − r_b,
//                   s = sign of the initial y_b − y_a (the order of the column never changes)
//                 e is the contact's `restitution`, else the simulation's, else 0 (as in Saltus)
//   simulation    EventDriven + LsodarOSI (ODEPACK's LSODAR, Adams/BDF with root finding), an
//                 LCP at impact level (SICONOS_OSNSP_ED_IMPACT) and one at acceleration level
//                 (SICONOS_OSNSP_ED_SMOOTH_ACC), both Lemke (Siconos' default LCP solver).
// The loop is hasNextEvent / advanceToEvent / processEvents. A processed non-smooth event is
// reported as an "impact" when the impact LCP gave a positive impulse λ₁ to some contact, else
// as "nonsmooth" (a contact closing or taking off without impulse).
//
// EventDriven's TOL_ED is the threshold on |y| and |ẏ| under which a contact counts as closed in
// position and velocity (indexSets 1 and 2): it is what ends an accumulation of impacts in
// Siconos. --tol-ed sets it; without it Siconos' default stays (1000·10·DBL_EPSILON ≈ 2.2e-12).
// LSODAR's tolerances default to Siconos' (rtol = 10 ε, atol = 100 ε); --rtol/--atol set them.
// The TimeDiscretisation step h (the times where advanceToEvent stops without an event)
// defaults to T/10: with h = T, Siconos 4.4 runs on to 2T.
//
// Usage:
//   siconos_event_driven SCENE.yaml [--tol-ed X] [--rtol R --atol A] [--h H] [--t-end T]
//                        [--events FILE] [--quiet] [--trace]
// stdout: "key=value" lines (engine, scene, status, message, t_end, t_reached, impacts, events,
// wall_seconds, cpu_seconds, then final y and ẏ of each body unless --quiet).
// --events writes FILE as CSV `t,kind,contacts,impulse` (%.17g; contacts and impulses joined
// by ';'), one row per non-smooth event, like the first columns of Saltus' events.csv.
// --trace prints every processed event (time, type, y and ẏ of each contact) to stderr.
// wall_seconds (steady_clock) and cpu_seconds (std::clock) cover building the Siconos model,
// initializing and running; not reading the scene nor writing the event file.
// Exit codes: 0 finished; 2 bad command line or scene; 3 Siconos stopped with an error (the
// events up to that point are still written).
#include <siconos/kernel/Event.hpp>
#include <siconos/kernel/EventDriven.hpp>
#include <siconos/kernel/EventsManager.hpp>
#include <siconos/kernel/Interaction.hpp>
#include <siconos/kernel/LCP.hpp>
#include <siconos/kernel/LagrangianLinearTIDS.hpp>
#include <siconos/kernel/LagrangianLinearTIR.hpp>
#include <siconos/kernel/LsodarOSI.hpp>
#include <siconos/kernel/NewtonImpactNSL.hpp>
#include <siconos/kernel/NonSmoothDynamicalSystem.hpp>
#include <siconos/kernel/SiconosVector.hpp>
#include <siconos/kernel/SimpleMatrix.hpp>
#include <siconos/kernel/TimeDiscretisation.hpp>

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/siconos_support.h"

namespace {

using saltus::bench::ExceptionMessage;

// ---- The scene -------------------------------------------------------------------------------

struct Body {
  std::string name;
  double mass = 1.0, inertia = 1.0;  // kg, kg·m²
  double x = 0, y = 0, theta = 0;    // initial position
  double vx = 0, vy = 0, omega = 0;  // initial velocity
};

// y = sign · (y_b − y_a) − offset, with y_a = 0 for the ground (a = −1).
struct Contact {
  std::string name;
  int a = -1, b = 0;
  double sign = 1.0, offset = 0.0;
  double restitution = 0.0;
};

struct Scene {
  std::string name;
  double gravity_y = -9.81;  // m/s²
  double t_end = 0.0;
  std::vector<Body> bodies;
  std::vector<Contact> contacts;
};

class SceneReader {
 public:
  explicit SceneReader(std::string file) : file_(std::move(file)) {}

  Scene Read() {
    YAML::Node root;
    try {
      root = YAML::LoadFile(file_);
    } catch (const YAML::Exception& e) {
      throw std::invalid_argument(file_ + ": " + e.what());
    }
    Scene s;
    s.name = root["scene"] ? root["scene"].as<std::string>() : file_;
    for (const char* unsupported : {"joints", "forces"}) {
      if (root[unsupported] && root[unsupported].size() > 0) {
        Fail(root[unsupported], unsupported, "not supported by the Siconos driver (contacts only)");
      }
    }
    if (root["gravity"]) {
      const std::vector<double> g = Numbers(root["gravity"], "gravity", 2);
      if (g[0] != 0.0) Fail(root["gravity"], "gravity", "must be vertical ([0, g_y])");
      s.gravity_y = g[1];
    }
    const YAML::Node bodies = root["bodies"];
    if (!bodies || !bodies.IsSequence()) Fail(root, "bodies", "a list of bodies is required");
    for (const YAML::Node& node : bodies) s.bodies.push_back(ReadBody(node));
    const YAML::Node sim = root["simulation"];
    if (!sim || !sim["t_end"]) Fail(root, "simulation", "t_end is required");
    s.t_end = Number(sim["t_end"], "simulation.t_end");
    const double e_global = sim["restitution"] ? Number(sim["restitution"], "restitution") : 0.0;
    const YAML::Node contacts = root["contacts"];
    if (contacts) {
      for (const YAML::Node& node : contacts) s.contacts.push_back(ReadContact(node, s, e_global));
    }
    // The column: every body on one vertical line, moving vertically.
    for (std::size_t i = 0; i < s.bodies.size(); ++i) {
      const Body& body = s.bodies[i];
      if (std::abs(body.x - s.bodies[0].x) > 1e-12 || body.vx != 0.0) {
        Fail(bodies[i], "body '" + body.name + "'",
             "must lie on the vertical line of the first body and move vertically");
      }
    }
    return s;
  }

 private:
  [[noreturn]] void Fail(const YAML::Node& node, const std::string& item,
                         const std::string& what) const {
    const int line = node.Mark().is_null() ? 0 : node.Mark().line + 1;
    throw std::invalid_argument(file_ + ":" + std::to_string(line) + ": " + item + ": " + what);
  }

  double Number(const YAML::Node& node, const std::string& item) const {
    try {
      return node.as<double>();
    } catch (const YAML::Exception&) {
      Fail(node, item, "expected a number");
    }
  }

  std::vector<double> Numbers(const YAML::Node& node, const std::string& item,
                              std::size_t size) const {
    if (!node.IsSequence() || node.size() != size) {
      Fail(node, item, "expected a list of " + std::to_string(size) + " numbers");
    }
    std::vector<double> out;
    for (const YAML::Node& x : node) out.push_back(Number(x, item));
    return out;
  }

  int BodyIndex(const YAML::Node& node, const std::string& item,
                const std::vector<Body>& bodies) const {
    const std::string name = node ? node.as<std::string>() : "";
    if (name == "ground") return -1;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies[i].name == name) return static_cast<int>(i);
    }
    Fail(node, item, "unknown body '" + name + "'");
  }

  Body ReadBody(const YAML::Node& node) const {
    Body b;
    b.name = node["name"] ? node["name"].as<std::string>() : "";
    const std::string item = "body '" + b.name + "'";
    if (node["mass"]) b.mass = Number(node["mass"], item + ".mass");
    if (node["inertia"]) b.inertia = Number(node["inertia"], item + ".inertia");
    if (node["position"]) {
      const auto p = Numbers(node["position"], item + ".position", 3);
      b.x = p[0], b.y = p[1], b.theta = p[2];
    }
    if (node["velocity"]) {
      const auto v = Numbers(node["velocity"], item + ".velocity", 3);
      b.vx = v[0], b.vy = v[1], b.omega = v[2];
    }
    return b;
  }

  Contact ReadContact(const YAML::Node& node, const Scene& s, double e_global) const {
    Contact c;
    c.name = node["name"] ? node["name"].as<std::string>() : "";
    const std::string item = "contact '" + c.name + "'";
    const std::string type = node["type"] ? node["type"].as<std::string>() : "";
    c.a = BodyIndex(node["body_a"], item + ".body_a", s.bodies);
    c.b = BodyIndex(node["body_b"], item + ".body_b", s.bodies);
    if (c.b < 0) Fail(node, item, "body_b must be a body");
    if (node["point_b"] &&
        Numbers(node["point_b"], item + ".point_b", 2) != std::vector{0.0, 0.0}) {
      Fail(node["point_b"], item + ".point_b", "must be [0, 0] (disk centred on its body)");
    }
    const double r_b = node["radius_b"] ? Number(node["radius_b"], item + ".radius_b") : 0.0;
    if (type == "disk_line") {
      if (c.a != -1) Fail(node, item, "the line must belong to the ground");
      if (node["normal_a"]) {
        const auto n = Numbers(node["normal_a"], item + ".normal_a", 2);
        if (n[0] != 0.0 || !(n[1] > 0.0)) Fail(node["normal_a"], item, "normal must be [0, 1]");
      }
      const std::vector<double> p =
          node["point_a"] ? Numbers(node["point_a"], item + ".point_a", 2) : std::vector{0.0, 0.0};
      c.offset = p[1] + r_b;
    } else if (type == "disk_disk") {
      if (c.a < 0) Fail(node, item, "body_a must be a body");
      if (node["point_a"] &&
          Numbers(node["point_a"], item + ".point_a", 2) != std::vector{0.0, 0.0}) {
        Fail(node["point_a"], item + ".point_a", "must be [0, 0] (disk centred on its body)");
      }
      const double r_a = node["radius_a"] ? Number(node["radius_a"], item + ".radius_a") : 0.0;
      c.sign = s.bodies[c.b].y >= s.bodies[c.a].y ? 1.0 : -1.0;
      c.offset = r_a + r_b;
    } else {
      Fail(node, item, "type '" + type + "' is not supported (disk_line, disk_disk)");
    }
    c.restitution = e_global;
    if (node["restitution"]) c.restitution = Number(node["restitution"], item + ".restitution");
    return c;
  }

  std::string file_;
};

// ---- Command line ----------------------------------------------------------------------------

struct Options {
  std::string scene_file;
  std::optional<double> tol_ed;      // EventDriven TOL_ED; Siconos' default when absent
  std::optional<double> rtol, atol;  // LSODAR tolerances; Siconos' defaults when absent
  std::optional<double> h;           // TimeDiscretisation step; T/10 when absent
  std::optional<double> t_end;       // the scene's when absent
  std::string events_file;
  bool quiet = false;
  bool trace = false;
};

[[noreturn]] void Usage(const std::string& error) {
  std::cerr << "siconos_event_driven: " << error << "\n"
            << "usage: siconos_event_driven SCENE.yaml [--tol-ed X] [--rtol R --atol A] [--h H]\n"
               "         [--t-end T] [--events FILE] [--quiet] [--trace]\n";
  std::exit(2);
}

double ParsePositive(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(x > 0) || !std::isfinite(x)) {
    Usage("option " + flag + ": expected a positive number, got '" + text + "'");
  }
  return x;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quiet") {
      o.quiet = true;
    } else if (arg == "--trace") {
      o.trace = true;
    } else if (arg.rfind("--", 0) != 0) {
      if (!o.scene_file.empty()) Usage("more than one scene file ('" + arg + "')");
      o.scene_file = arg;
    } else {
      if (i + 1 >= argc) Usage("option " + arg + ": missing value");
      const std::string value = argv[++i];
      if (arg == "--tol-ed") {
        o.tol_ed = ParsePositive(arg, value);
      } else if (arg == "--rtol") {
        o.rtol = ParsePositive(arg, value);
      } else if (arg == "--atol") {
        o.atol = ParsePositive(arg, value);
      } else if (arg == "--h") {
        o.h = ParsePositive(arg, value);
      } else if (arg == "--t-end") {
        o.t_end = ParsePositive(arg, value);
      } else if (arg == "--events") {
        o.events_file = value;
      } else {
        Usage("unknown option '" + arg + "'");
      }
    }
  }
  if (o.scene_file.empty()) Usage("no scene file");
  if (o.rtol.has_value() != o.atol.has_value()) Usage("give both --rtol and --atol, or neither");
  return o;
}

// ---- The run ---------------------------------------------------------------------------------

struct LoggedEvent {
  double t = 0;
  std::string kind;
  std::vector<int> rows;
  std::vector<double> impulses;
};

std::shared_ptr<NonSmoothDynamicalSystem> BuildSystem(
    const Scene& scene, double t_end, std::vector<std::shared_ptr<LagrangianLinearTIDS>>* bodies,
    std::vector<std::shared_ptr<Interaction>>* contacts) {
  auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, t_end);
  for (const Body& b : scene.bodies) {
    auto q0 = std::make_shared<SiconosVector>(3);
    (*q0)(0) = b.x, (*q0)(1) = b.y, (*q0)(2) = b.theta;
    auto v0 = std::make_shared<SiconosVector>(3);
    (*v0)(0) = b.vx, (*v0)(1) = b.vy, (*v0)(2) = b.omega;
    auto mass = std::make_shared<SimpleMatrix>(3, 3);
    mass->zero();
    (*mass)(0, 0) = b.mass, (*mass)(1, 1) = b.mass, (*mass)(2, 2) = b.inertia;
    auto weight = std::make_shared<SiconosVector>(3);
    weight->zero();
    (*weight)(1) = b.mass * scene.gravity_y;
    auto ds = std::make_shared<LagrangianLinearTIDS>(q0, v0, mass);
    ds->setFExtPtr(weight);
    nsds->insertDynamicalSystem(ds);
    bodies->push_back(ds);
  }
  for (const Contact& c : scene.contacts) {
    // Columns of H: (x, y, θ) of body_a, then of body_b (only body_b for the ground).
    auto H = std::make_shared<SimpleMatrix>(1, c.a < 0 ? 3 : 6);
    H->zero();
    if (c.a < 0) {
      (*H)(0, 1) = 1.0;
    } else {
      (*H)(0, 1) = -c.sign;
      (*H)(0, 4) = c.sign;
    }
    auto b = std::make_shared<SiconosVector>(1);
    (*b)(0) = -c.offset;
    auto relation = std::make_shared<LagrangianLinearTIR>(H, b);
    auto interaction =
        std::make_shared<Interaction>(std::make_shared<NewtonImpactNSL>(c.restitution), relation);
    if (c.a < 0) {
      nsds->link(interaction, (*bodies)[c.b]);
    } else {
      nsds->link(interaction, (*bodies)[c.a], (*bodies)[c.b]);
    }
    contacts->push_back(interaction);
  }
  return nsds;
}

void WriteEvents(const std::string& path, const Scene& scene,
                 const std::vector<LoggedEvent>& events) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::cerr << "siconos_event_driven: cannot write '" << path << "'\n";
    std::exit(2);
  }
  std::fprintf(f, "t,kind,contacts,impulse\n");
  for (const LoggedEvent& e : events) {
    std::string names, impulses;
    char number[32];
    for (std::size_t k = 0; k < e.rows.size(); ++k) {
      if (k > 0) names += ';', impulses += ';';
      names += scene.contacts[e.rows[k]].name;
      std::snprintf(number, sizeof number, "%.17g", e.impulses[k]);
      impulses += number;
    }
    std::fprintf(f, "%.17g,%s,%s,%s\n", e.t, e.kind.c_str(), names.c_str(), impulses.c_str());
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);
  Scene scene;
  try {
    scene = SceneReader(options.scene_file).Read();
  } catch (const std::invalid_argument& e) {
    std::cerr << "siconos_event_driven: " << e.what() << "\n";
    return 2;
  }
  const double t_end = options.t_end.value_or(scene.t_end);
  const double h = options.h.value_or(t_end / 10.0);

  std::vector<LoggedEvent> events;
  long impacts = 0;
  std::string status = "finished", message;
  double t_reached = 0.0;
  std::vector<std::shared_ptr<LagrangianLinearTIDS>> bodies;
  std::vector<std::shared_ptr<Interaction>> contacts;

  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  try {
    auto nsds = BuildSystem(scene, t_end, &bodies, &contacts);
    auto simulation =
        std::make_shared<EventDriven>(nsds, std::make_shared<TimeDiscretisation>(0.0, h));
    auto lsodar = std::make_shared<LsodarOSI>();
    if (options.rtol) lsodar->setTol(1, *options.rtol, *options.atol);
    // Not associate(lsodar, ds) for each body: with several bodies, LsodarOSI initializes the
    // first one by evaluating the right-hand side of all its bodies, the others not yet
    // initialized, and crashes (Siconos 4.4). With one integrator inserted, Siconos associates
    // each body with it as the body is initialized.
    simulation->insertIntegrator(lsodar);
    simulation->insertNonSmoothProblem(std::make_shared<LCP>(), SICONOS_OSNSP_ED_IMPACT);
    simulation->insertNonSmoothProblem(std::make_shared<LCP>(), SICONOS_OSNSP_ED_SMOOTH_ACC);
    if (options.tol_ed) simulation->setToleranceED(*options.tol_ed);
    simulation->initialize();

    const std::shared_ptr<EventsManager> manager = simulation->eventsManager();
    while (simulation->hasNextEvent()) {
      simulation->advanceToEvent();
      const bool nonsmooth = manager->nextEvent()->getType() == NS_EVENT;
      const double t_event = manager->nextTime();
      simulation->processEvents();
      t_reached = t_event;
      if (options.trace) {
        std::fprintf(stderr, "%.17g %s", t_event, nonsmooth ? "NS" : "TD");
        for (const auto& c : contacts) {
          std::fprintf(stderr, " y=%.3e ydot=%.3e", (*c->y(0))(0), (*c->y(1))(0));
        }
        std::fprintf(stderr, "\n");
      }
      if (!nonsmooth) continue;
      LoggedEvent e;
      e.t = t_event;
      for (std::size_t i = 0; i < contacts.size(); ++i) {
        const double p = (*contacts[i]->lambda(1))(0);
        if (p > 0.0) {
          e.rows.push_back(static_cast<int>(i));
          e.impulses.push_back(p);
        }
      }
      e.kind = e.rows.empty() ? "nonsmooth" : "impact";
      if (!e.rows.empty()) ++impacts;
      events.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    status = "error";
    message = ExceptionMessage(e);
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;

  if (!options.events_file.empty()) WriteEvents(options.events_file, scene, events);
  std::printf("engine=siconos\nscene=%s\nstatus=%s\nmessage=%s\n", scene.name.c_str(),
              status.c_str(), message.c_str());
  std::printf("t_end=%.17g\nt_reached=%.17g\nimpacts=%ld\nevents=%zu\n", t_end, t_reached, impacts,
              events.size());
  std::printf("wall_seconds=%.9g\ncpu_seconds=%.9g\n", wall, cpu);
  if (!options.quiet) {
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      std::printf("final_y.%s=%.17g\nfinal_vy.%s=%.17g\n", scene.bodies[i].name.c_str(),
                  (*bodies[i]->q())(1), scene.bodies[i].name.c_str(), (*bodies[i]->velocity())(1));
    }
  }
  return status == "finished" ? 0 : 3;
}
