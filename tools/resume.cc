#include "tools/resume.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace saltus::tools {

namespace {

double FiniteNumber(const YAML::Node& node, const std::string& where) {
  double x = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, x) || !std::isfinite(x)) {
    throw std::invalid_argument(where + ": expected a finite number");
  }
  return x;
}

// The values of a {name: number} object in the system's coordinate order.
Eigen::VectorXd NamedValues(const YAML::Node& root, const std::string& key, int n,
                            std::string (*name_of)(const engine::MechanicalSystem&, int),
                            const engine::MechanicalSystem& system, const std::string& file) {
  const YAML::Node map = root[key];
  if (!map || !map.IsMap()) throw std::invalid_argument(file + ": '" + key + "' missing");
  std::vector<std::string> names;
  for (const auto& item : map) names.push_back(item.first.Scalar());
  Eigen::VectorXd values(n);
  for (int i = 0; i < n; ++i) {
    const std::string name = name_of(system, i);
    if (i >= static_cast<int>(names.size()) || names[i] != name) {
      throw std::invalid_argument(
          file + ": " + key + ": coordinate " + std::to_string(i + 1) + " is '" +
          (i < static_cast<int>(names.size()) ? names[i] : std::string("(none)")) +
          "', the scene's is '" + name + "' (a state saved from another scene?)");
    }
    values[i] = FiniteNumber(map[name], file + ": " + key + "." + name);
  }
  if (static_cast<int>(names.size()) != n) {
    throw std::invalid_argument(file + ": " + key + " has " + std::to_string(names.size()) +
                                " coordinates, the scene " + std::to_string(n));
  }
  return values;
}

// The "hybrid" object of a hybrid run's saved state (tools/writers.h WriteLastStateJson).
HybridState ReadHybridState(const YAML::Node& node, const std::string& file) {
  const auto where = [&](const YAML::Node& n, const std::string& key) {
    return file + ":" + std::to_string(n.Mark().line + 1) + ": hybrid." + key;
  };
  if (!node.IsMap()) throw std::invalid_argument(where(node, "") + " is not an object");
  const auto item = [&](const std::string& key) {
    const YAML::Node n = node[key];
    if (!n) throw std::invalid_argument(where(node, key) + " missing");
    return n;
  };
  HybridState s;
  const YAML::Node phase = item("phase");
  if (!phase.IsScalar() || (phase.Scalar() != "event_driven" && phase.Scalar() != "time_stepping"))
    throw std::invalid_argument(where(phase, "phase") + ": expected event_driven or time_stepping");
  s.time_stepping = phase.Scalar() == "time_stepping";
  const YAML::Node recent = item("recent_events");
  if (!recent.IsSequence())
    throw std::invalid_argument(where(recent, "recent_events") + ": expected an array");
  for (const auto& t : recent)
    s.recent_events.push_back(FiniteNumber(t, where(t, "recent_events")));
  s.calm_since = FiniteNumber(item("calm_since"), where(node, "calm_since"));
  s.phase_start = FiniteNumber(item("phase_start"), where(node, "phase_start"));
  s.next_output = FiniteNumber(item("next_output"), where(node, "next_output"));
  const YAML::Node last = item("last_output");  // null: no output yet
  if (!last.IsNull()) s.last_output = FiniteNumber(last, where(last, "last_output"));
  return s;
}

}  // namespace

SavedState ReadLastStateJson(const std::string& path, const engine::MechanicalSystem& system) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);  // JSON is YAML
  } catch (const YAML::BadFile&) {
    throw std::invalid_argument(path + ": cannot read the saved state");
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(path + ":" + std::to_string(e.mark.line + 1) +
                                ": malformed JSON: " + e.msg);
  }
  if (!root.IsMap()) throw std::invalid_argument(path + ": not a saved state (a JSON object)");
  SavedState s;
  if (!root["t"]) throw std::invalid_argument(path + ": 't' missing");
  s.t = FiniteNumber(root["t"], path + ": t");
  s.q = NamedValues(
      root, "q", system.nq(),
      [](const engine::MechanicalSystem& sys, int i) { return sys.PositionName(i); }, system, path);
  s.v = NamedValues(
      root, "v", system.nv(),
      [](const engine::MechanicalSystem& sys, int i) { return sys.VelocityName(i); }, system, path);
  if (root["scene"] && root["scene"].IsScalar()) s.scene = root["scene"].Scalar();
  const YAML::Node provenance = root["provenance"];
  if (provenance && provenance.IsMap() && provenance["scene_sha256"]) {
    s.scene_sha256 = provenance["scene_sha256"].Scalar();
  }
  if (root["hybrid"]) s.hybrid = ReadHybridState(root["hybrid"], path);
  return s;
}

}  // namespace saltus::tools
