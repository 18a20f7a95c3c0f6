// A seeded mutation fuzzer of `saltus run` on scene files (issue 20 §6) and URDF robots.
//
//   scene_fuzzer --work DIR [--seconds S | --cases N] [--seed K] [--case-timeout T]
//                CORPUS.yaml|CORPUS.urdf|DIR...
//
// Each case takes a corpus scene (the examples), applies 1–4 random mutations — a YAML-aware
// one (a scalar replaced by an extreme or malformed value, a number scaled by 10^k, a key
// deleted or duplicated, a list item dropped or repeated, two values swapped, a YAML tag or an
// alias added) or a byte-level one (a byte flipped, inserted or deleted) — writes the result to
// DIR/case.yaml and runs tools::RunCli("run", case, --out DIR/out[, --t-end 0.05]) in a forked
// child (so a crash is a finding, not the end of the fuzzer). A child still running after T
// seconds gets SIGTERM, and must then stop at its next step boundary and write its results (the
// interruption path); one that does not end within a grace period is a hang. The invariants:
//   exit 0      summary.json, no last_state.json;
//   exit 2      the message names the file and line ("case.yaml:<line>:"), nothing written;
//   exit 3, 143 (SIGTERM from the fuzzer) summary.json and last_state.json complete;
//   always      CSV files end with a whole row, every row with the header's number of fields;
//               no other exit code, no signal death, no sanitizer report ("runtime error",
//               "AddressSanitizer") on stderr, and no internal function name ("Solve...:") in a
//               message.
// A URDF corpus file (.urdf) gets XML-aware mutations instead of the YAML-aware ones (a tag
// deleted, a line duplicated, an attribute value replaced, deleted or swapped, the text cut
// short, a markup fragment inserted: the XML reader's and the URDF reader's error paths) and is
// run as DIR/case.urdf under the same invariants. Directories contribute their .yaml and .urdf
// files; the .urdf, .obj, .stl and .csv files beside a corpus file are copied beside the case.
// A failing case is kept as DIR/failures/<n>.yaml (or .urdf) with <n>.txt (the invariant and
// stderr).
// Exit status: 0 when no case failed, 1 otherwise. Same seed and corpus: same cases.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tools/cli.h"

namespace fs = std::filesystem;

namespace {

struct Options {
  fs::path work;
  std::vector<fs::path> corpus;
  double seconds = 0;
  long cases = 0;
  unsigned long seed = 1;
  double case_timeout = 3.0;
};

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteText(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// ---- Mutations ---------------------------------------------------------------------------

using Rng = std::mt19937_64;

const std::vector<std::string> kInteresting = {
    "0",        "-1",     "1e308",  "1.8e19", "1e-320",    "-0",         "nan",         ".inf",
    "-.inf",    "1e15",   "1e16",   "1e-31",  "1e-30",     "2",          "0.5",         "''",
    "abc",      "[1, 2]", "{a: 1}", "true",   "1e7",       "-1e-9",      "99999999999", "1e-308",
    "4.9e-324", "[]",     "{}",     "~",      "[0, 0, 0]", "[1e308, 0]",
};

// All nodes of a document with their parent (maps and sequences) for structural mutations.
struct NodeRef {
  YAML::Node node, parent;
  std::string key;        // in a map parent
  std::size_t index = 0;  // in a sequence parent
};

void Collect(YAML::Node node, YAML::Node parent, const std::string& key, std::size_t index,
             std::vector<NodeRef>* out, int depth = 0) {
  if (depth > 50) return;
  out->push_back({node, parent, key, index});
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      Collect(it->second, node, it->first.as<std::string>(""), 0, out, depth + 1);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) Collect(node[i], node, "", i, out, depth + 1);
  }
}

std::string RandomNumber(Rng& rng) {
  std::uniform_int_distribution<int> exponent(-330, 310);
  std::uniform_real_distribution<double> mantissa(-9.99, 9.99);
  char text[64];
  std::snprintf(text, sizeof text, "%.6ge%d", mantissa(rng), exponent(rng));
  return text;
}

// One YAML-aware mutation of `root` (in place). False when it could not apply.
bool MutateTree(YAML::Node& root, Rng& rng) {
  std::vector<NodeRef> nodes;
  Collect(root, YAML::Node(), "", 0, &nodes);
  if (nodes.size() < 2) return false;
  std::uniform_int_distribution<std::size_t> pick(1, nodes.size() - 1);
  NodeRef& n = nodes[pick(rng)];
  const int kind = std::uniform_int_distribution<int>(0, 6)(rng);
  switch (kind) {
    case 0: {  // an interesting value
      n.node = YAML::Load(kInteresting[std::uniform_int_distribution<std::size_t>(
          0, kInteresting.size() - 1)(rng)]);
      return true;
    }
    case 1: {  // a number scaled by 10^k or negated, or a random one
      if (!n.node.IsScalar()) return false;
      double x = 0;
      try {
        x = n.node.as<double>();
      } catch (const YAML::Exception&) {
        n.node = RandomNumber(rng);
        return true;
      }
      const int k = std::uniform_int_distribution<int>(-40, 40)(rng);
      n.node = (k == 0 ? -x : x * std::pow(10.0, k));
      return true;
    }
    case 2: {  // delete a key or a list item
      if (n.parent.IsMap()) return n.parent.remove(n.key);
      if (n.parent.IsSequence()) {
        YAML::Node copy(YAML::NodeType::Sequence);
        for (std::size_t i = 0; i < n.parent.size(); ++i) {
          if (i != n.index) copy.push_back(n.parent[i]);
        }
        n.parent = copy;
        return true;
      }
      return false;
    }
    case 3: {  // repeat a list item (duplicate names, doubled bodies)
      if (!n.parent.IsSequence()) return false;
      n.parent.push_back(YAML::Clone(n.node));
      return true;
    }
    case 4: {  // swap two values
      NodeRef& other = nodes[pick(rng)];
      const YAML::Node a = YAML::Clone(n.node), b = YAML::Clone(other.node);
      n.node = b;
      other.node = a;
      return true;
    }
    case 5: {  // a text value replaced (types, names, integrators)
      static const std::vector<std::string> kWords = {
          "revolute", "prismatic", "disk_line", "disk_disk", "point_line", "sphere", "box",
          "mesh",     "ground",    "bdf",       "hem5",      "ggl",        "index3", "lemke",
          "pgs",      "x",         "ball",      "crank",     "floor"};
      n.node = kWords[std::uniform_int_distribution<std::size_t>(0, kWords.size() - 1)(rng)];
      return true;
    }
    default: {  // a tagged value
      n.node = YAML::Load(std::uniform_int_distribution<int>(0, 1)(rng) ? "!!binary aGVsbG8="
                                                                        : "!custom 3");
      return true;
    }
  }
}

// A mutation of URDF text that keeps most of it XML: the reader's error paths past the first
// element.
const std::vector<std::string> kXmlFragments = {
    "<!--",
    "-->",
    "]]>",
    "<![CDATA[x]]>",
    "&amp;",
    "&bogus;",
    "&#0;",
    "&#x110000;",
    "</robot>",
    "<link/>",
    "<",
    ">",
    "\"",
    "'",
    "=",
    "<?pi?>",
    "<link name=\"x\"/>",
    "<joint name=\"j\" type=\"fixed\"><parent link=\"base\"/><child link=\"x\"/></joint>",
    "<mimic joint=\"a\"/>",
    "<axis xyz=\"0 0 0\"/>",
    "<limit/>",
    "<geometry/>"};

std::string MutateXml(std::string out, Rng& rng) {
  const auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  // [begin, end) of every attribute value (between its quotes).
  std::vector<std::pair<std::size_t, std::size_t>> values;
  for (std::size_t at = out.find("=\""); at != std::string::npos; at = out.find("=\"", at + 1)) {
    const std::size_t end = out.find('"', at + 2);
    if (end == std::string::npos) break;
    values.emplace_back(at + 2, end);
  }
  switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
    case 0: {  // a tag deleted
      const std::size_t lt = out.find('<', pick(out.size()));
      const std::size_t gt = lt == std::string::npos ? lt : out.find('>', lt);
      if (gt != std::string::npos) out.erase(lt, gt - lt + 1);
      break;
    }
    case 1: {  // a line duplicated
      const std::size_t at = pick(out.size());
      const std::size_t begin =
          out.rfind('\n', at) == std::string::npos ? 0 : out.rfind('\n', at) + 1;
      const std::size_t end = out.find('\n', at);
      if (end != std::string::npos) out.insert(begin, out.substr(begin, end - begin + 1));
      break;
    }
    case 2: {  // an attribute value replaced
      if (values.empty()) break;
      const auto [begin, end] = values[pick(values.size())];
      std::string v = std::uniform_int_distribution<int>(0, 1)(rng)
                          ? kInteresting[pick(kInteresting.size())]
                          : RandomNumber(rng);
      if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) v = v + " " + v + " " + v;
      out.replace(begin, end - begin, v);
      break;
    }
    case 3: {  // an attribute deleted (name="value" with the space before it)
      if (values.empty()) break;
      const auto [begin, end] = values[pick(values.size())];
      const std::size_t space = out.rfind(' ', begin);
      if (space != std::string::npos && space < begin) out.erase(space, end + 1 - space);
      break;
    }
    case 4: {  // two attribute values swapped
      if (values.size() < 2) break;
      auto a = values[pick(values.size())], b = values[pick(values.size())];
      if (a.first > b.first) std::swap(a, b);
      if (a.second >= b.first) break;
      const std::string va = out.substr(a.first, a.second - a.first);
      const std::string vb = out.substr(b.first, b.second - b.first);
      out.replace(b.first, vb.size(), va);
      out.replace(a.first, va.size(), vb);
      break;
    }
    case 5:  // cut short
      out.resize(pick(out.size() + 1));
      break;
    default:  // a fragment inserted
      out.insert(pick(out.size() + 1), kXmlFragments[pick(kXmlFragments.size())]);
      break;
  }
  return out;
}

std::string Mutate(const std::string& text, bool urdf, Rng& rng) {
  std::string out = text;
  const int count = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int m = 0; m < count; ++m) {
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    if (kind < 7 && urdf) {
      if (!out.empty()) out = MutateXml(std::move(out), rng);
      continue;
    }
    if (kind < 7) {  // YAML-aware
      try {
        YAML::Node root = YAML::Load(out);
        if (MutateTree(root, rng)) {
          YAML::Emitter e;
          e << root;
          out = e.c_str();
          out += '\n';
        }
      } catch (const YAML::Exception&) {
        // Not YAML any more (an earlier byte mutation): byte mutations only.
      }
      continue;
    }
    if (out.empty()) continue;
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, out.size() - 1)(rng);
    const char c = static_cast<char>(std::uniform_int_distribution<int>(0, 127)(rng));
    if (kind == 7) {
      out[at] = c;
    } else if (kind == 8) {
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), c);
    } else {
      // A duplicated line (duplicate keys) or a deleted byte.
      const std::size_t begin =
          out.rfind('\n', at) == std::string::npos ? 0 : out.rfind('\n', at) + 1;
      const std::size_t end = out.find('\n', at);
      if (end != std::string::npos && std::uniform_int_distribution<int>(0, 1)(rng)) {
        out.insert(begin, out.substr(begin, end - begin + 1));
      } else {
        out.erase(at, 1);
      }
    }
  }
  return out;
}

// ---- Running a case ------------------------------------------------------------------------

struct Outcome {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;
  bool sent_sigterm = false;
  bool hang = false;
  std::string err;
};

Outcome RunCase(const fs::path& scene, const fs::path& out_dir, bool short_run, double timeout,
                const fs::path& err_file) {
  Outcome o;
  const pid_t pid = fork();
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_WRONLY);
    const int err_fd = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(null_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    std::vector<std::string> args = {"run", scene.string(), "--out", out_dir.string()};
    if (short_run) args.insert(args.end(), {"--t-end", "0.05"});
    std::ostringstream out, err;
    const int code = saltus::tools::RunCli(args, out, err);
    const std::string e = err.str();
    if (write(STDERR_FILENO, e.data(), e.size()) < 0) _exit(99);
    _exit(code);
  }
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (!o.sent_sigterm && elapsed() > timeout) {
      kill(pid, SIGTERM);
      o.sent_sigterm = true;
    } else if (o.sent_sigterm && elapsed() > 4 * timeout + 10) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      o.hang = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  o.err = ReadText(err_file);
  return o;
}

// Every line of a CSV ends with '\n' and has the header's number of fields.
std::string CheckCsv(const fs::path& p) {
  if (!fs::exists(p)) return "";
  const std::string text = ReadText(p);
  if (text.empty()) return p.filename().string() + " is empty (no header)";
  if (text.back() != '\n') return p.filename().string() + " ends inside a row";
  std::istringstream in(text);
  std::string line;
  long fields = -1, row = 0;
  while (std::getline(in, line)) {
    const long n = static_cast<long>(std::count(line.begin(), line.end(), ',')) + 1;
    if (fields < 0) fields = n;
    if (n != fields) {
      return p.filename().string() + " row " + std::to_string(row) + " has " + std::to_string(n) +
             " fields, the header " + std::to_string(fields);
    }
    ++row;
  }
  return "";
}

bool CompleteJson(const fs::path& p) {
  if (!fs::exists(p)) return false;
  const std::string text = ReadText(p);
  return text.size() >= 2 && text.front() == '{' &&
         text.find_last_not_of(" \n") != std::string::npos &&
         text[text.find_last_not_of(" \n")] == '}';
}

// A word like "SolveLcpByComponents:" (capitalized, another capital and two lower-case letters
// inside, then ": ") at the start of a message part: an internal function's name.
bool NamesInternalFunction(const std::string& text) {
  const auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  const auto lower = [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!upper(text[i])) continue;
    if (i > 0 && std::string_view(" '\"(\n").find(text[i - 1]) == std::string_view::npos) continue;
    std::size_t j = i;
    int capitals = 0, lowers = 0;
    while (j < text.size()) {
      if (text.compare(j, 2, "::") == 0) {
        j += 2;
      } else if (upper(text[j]) || lower(text[j])) {
        capitals += upper(text[j]);
        lowers += lower(text[j]);
        ++j;
      } else {
        break;
      }
    }
    // At least two lower-case letters: "NaN: " (the advice after a non-finite state) is no name.
    if (capitals >= 2 && lowers > 1 && text.compare(j, 2, ": ") == 0) return true;
  }
  return false;
}

// "<file>:<digits>: " somewhere in the text.
bool NamesLine(const std::string& text, const std::string& file) {
  for (std::size_t at = text.find(file + ":"); at != std::string::npos;
       at = text.find(file + ":", at + 1)) {
    std::size_t j = at + file.size() + 1, digits = 0;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) != 0) ++j, ++digits;
    if (digits > 0 && text.compare(j, 2, ": ") == 0) return true;
  }
  return false;
}

// The invariants of the header; "" when they hold.
std::string Check(const Outcome& o, const fs::path& out_dir, const std::string& case_name) {
  if (o.hang) return "hang: still running long after SIGTERM";
  if (o.signal != 0) return "killed by signal " + std::to_string(o.signal);
  for (const char* report : {"runtime error", "AddressSanitizer", "LeakSanitizer"}) {
    if (o.err.find(report) != std::string::npos) return std::string("sanitizer report: ") + report;
  }
  if (NamesInternalFunction(o.err)) return "a message names an internal function";
  const int code = o.exit_code;
  const bool interrupted = o.sent_sigterm && code == 128 + SIGTERM;
  if (code != 0 && code != 2 && code != 3 && !interrupted) {
    return "exit code " + std::to_string(code);
  }
  if (code == 2) {
    if (o.err.find(case_name + ":") == std::string::npos) return "exit 2 without the file";
    if (!NamesLine(o.err, case_name)) return "exit 2 without a line number";
    if (fs::exists(out_dir)) return "exit 2 but the output directory was created";
    return "";
  }
  for (const char* csv : {"trajectory.csv", "events.csv", "reactions.csv"}) {
    if (std::string problem = CheckCsv(out_dir / csv); !problem.empty()) return problem;
  }
  if (!CompleteJson(out_dir / "summary.json")) return "summary.json missing or incomplete";
  const bool last_state = fs::exists(out_dir / "last_state.json");
  if (code == 0 && last_state) return "exit 0 with a last_state.json";
  if (code != 0 && !CompleteJson(out_dir / "last_state.json")) {
    return "exit " + std::to_string(code) + " without a complete last_state.json";
  }
  return "";
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + ": missing value");
      return argv[++i];
    };
    if (a == "--work") {
      o.work = value();
    } else if (a == "--seconds") {
      o.seconds = std::stod(value());
    } else if (a == "--cases") {
      o.cases = std::stol(value());
    } else if (a == "--seed") {
      o.seed = std::stoul(value());
    } else if (a == "--case-timeout") {
      o.case_timeout = std::stod(value());
    } else if (fs::is_directory(a)) {
      for (const auto& e : fs::recursive_directory_iterator(a)) {
        const std::string ext = e.path().extension().string();
        if (ext == ".yaml" || ext == ".urdf") o.corpus.push_back(e.path());
      }
    } else {
      o.corpus.emplace_back(a);
    }
  }
  if (o.work.empty() || o.corpus.empty() || (o.seconds <= 0 && o.cases <= 0)) {
    throw std::invalid_argument(
        "usage: scene_fuzzer --work DIR (--seconds S | --cases N) [--seed K] "
        "[--case-timeout T] CORPUS...");
  }
  std::sort(o.corpus.begin(), o.corpus.end());
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  try {
    opt = ParseArgs(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  fs::create_directories(opt.work / "failures");
  // Files the corpus scenes refer to by relative path (meshes, reference CSVs) beside the case.
  for (const fs::path& p : opt.corpus) {
    for (const auto& e : fs::directory_iterator(p.parent_path().empty() ? "." : p.parent_path())) {
      const std::string ext = e.path().extension().string();
      if (ext == ".obj" || ext == ".stl" || ext == ".csv" || ext == ".urdf") {
        fs::copy_file(e.path(), opt.work / e.path().filename(),
                      fs::copy_options::overwrite_existing);
      }
    }
  }
  Rng rng(opt.seed);
  std::vector<std::string> corpus;
  for (const fs::path& p : opt.corpus) corpus.push_back(ReadText(p));
  const auto start = std::chrono::steady_clock::now();
  long cases = 0, failures = 0;
  long by_code[256] = {};
  const fs::path out_dir = opt.work / "out";
  for (;; ++cases) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if ((opt.cases > 0 && cases >= opt.cases) || (opt.seconds > 0 && elapsed >= opt.seconds)) {
      break;
    }
    const std::size_t which = std::uniform_int_distribution<std::size_t>(0, corpus.size() - 1)(rng);
    const std::string extension = opt.corpus[which].extension() == ".urdf" ? ".urdf" : ".yaml";
    const fs::path scene = opt.work / ("case" + extension);
    const std::string text = Mutate(corpus[which], extension == ".urdf", rng);
    const bool short_run = std::uniform_int_distribution<int>(0, 3)(rng) != 0;
    WriteText(scene, text);
    std::error_code ec;
    fs::remove_all(out_dir, ec);
    const Outcome o = RunCase(scene, out_dir, short_run, opt.case_timeout, opt.work / "stderr.txt");
    if (o.exit_code >= 0) ++by_code[o.exit_code];
    const std::string problem = Check(o, out_dir, scene.string());
    if (problem.empty()) continue;
    ++failures;
    const fs::path base = opt.work / "failures" / std::to_string(failures);
    WriteText(base.string() + extension, text);
    WriteText(base.string() + ".txt", "case " + std::to_string(cases) + " (from " +
                                          opt.corpus[which].string() +
                                          (short_run ? ", --t-end 0.05" : "") + "): " + problem +
                                          "\n--- stderr ---\n" + o.err);
    std::cerr << "scene_fuzzer: case " << cases << ": " << problem << " (kept as " << base
              << extension << ")\n";
  }
  std::cout << "scene_fuzzer: " << cases << " cases, " << failures << " failures; exit codes:";
  for (int c = 0; c < 256; ++c) {
    if (by_code[c] > 0) std::cout << ' ' << c << "×" << by_code[c];
  }
  std::cout << '\n';
  return failures == 0 ? 0 : 1;
}
