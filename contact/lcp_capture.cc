#include "contact/lcp_capture.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace saltus::contact {
namespace {

std::string Format(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

enum class When { kOff, kHard, kFailed, kAll };

struct CaptureConfig {
  When when = When::kOff;
  std::string dir;
};

const CaptureConfig& Config() {
  static const CaptureConfig config = [] {
    CaptureConfig c;
    const char* dir = std::getenv("SALTUS_LCP_CAPTURE");
    if (dir == nullptr || *dir == '\0') return c;
    c.dir = dir;
    const char* when = std::getenv("SALTUS_LCP_CAPTURE_WHEN");
    const std::string w = when != nullptr ? when : "hard";
    c.when = w == "all" ? When::kAll : w == "failed" ? When::kFailed : When::kHard;
    return c;
  }();
  return config;
}

// Line-oriented reader: every item is "<key> <values...>" on one line.
class Reader {
 public:
  Reader(std::istream& in, std::string label) : in_(in), label_(std::move(label)) {}

  [[noreturn]] void Fail(const std::string& what) const {
    throw std::invalid_argument(label_ + ":" + std::to_string(line_) + ": " + what);
  }
  // The next non-comment line, split off its first word; fails at end of input.
  std::istringstream Next(const std::string& key) {
    std::string text;
    while (std::getline(in_, text)) {
      ++line_;
      if (!text.empty() && text[0] != '#') {
        std::istringstream s(text);
        std::string word;
        s >> word;
        if (word != key) Fail("expected '" + key + "', got '" + word + "'");
        return s;
      }
    }
    ++line_;
    Fail("unexpected end of input, expected '" + key + "'");
  }
  double Number(std::istringstream& s, const char* what) const {
    std::string token;
    if (!(s >> token)) Fail(std::string("missing ") + what);
    char* end = nullptr;
    const double x = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size() || !std::isfinite(x)) {
      Fail(std::string(what) + ": expected a finite number, got '" + token + "'");
    }
    return x;
  }
  long Integer(std::istringstream& s, const char* what, long low, long high) const {
    const double x = Number(s, what);
    if (x != std::floor(x) || x < static_cast<double>(low) || x > static_cast<double>(high)) {
      Fail(std::string(what) + ": expected an integer in [" + std::to_string(low) + ", " +
           std::to_string(high) + "], got " + Format(x));
    }
    return static_cast<long>(x);
  }
  void End(std::istringstream& s) const {
    std::string extra;
    if (s >> extra) Fail("unexpected '" + extra + "' at the end of the line");
  }

 private:
  std::istream& in_;
  std::string label_;
  int line_ = 0;
};

}  // namespace

void WriteCapturedLcp(const CapturedLcp& p, std::ostream& out) {
  const Eigen::Index n = p.b.size();
  if (p.W.rows() != n || p.W.cols() != n || static_cast<Eigen::Index>(p.rows.size()) != n ||
      (p.mu.size() > 0 && 3 * p.mu.size() != n)) {
    throw std::invalid_argument("WriteCapturedLcp: W is " + std::to_string(p.W.rows()) + " x " +
                                std::to_string(p.W.cols()) + ", b has " + std::to_string(n) +
                                " entries, rows " + std::to_string(p.rows.size()) + " and mu " +
                                std::to_string(p.mu.size()));
  }
  std::string note = p.note;
  for (char& c : note) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  const bool friction = p.mu.size() > 0;
  out << "# saltus contact problem (contact/lcp_capture.h): w = W z + b, "
      << (friction ? "Coulomb's law per contact (3 rows)" : "0 <= w _|_ z >= 0") << "\nsaltus_lcp "
      << (friction ? 2 : 1) << "\nkind " << (p.kind.empty() ? "unknown" : p.kind) << "\nt "
      << Format(p.t) << "\nnote " << note << "\nn " << n << "\nrows";
  for (int r : p.rows) out << ' ' << r;
  out << "\nb";
  for (Eigen::Index i = 0; i < n; ++i) out << ' ' << Format(p.b[i]);
  if (friction) {
    out << "\nmu";
    for (Eigen::Index i = 0; i < p.mu.size(); ++i) out << ' ' << Format(p.mu[i]);
  }
  std::vector<Eigen::Triplet<double>> upper;
  for (Eigen::Index k = 0; k < p.W.outerSize(); ++k) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(p.W, k); it; ++it) {
      if (it.row() <= it.col() && it.value() != 0.0) {
        upper.emplace_back(static_cast<int>(it.row()), static_cast<int>(it.col()), it.value());
      }
    }
  }
  out << "\nnnz " << upper.size() << '\n';
  for (const auto& e : upper)
    out << "w " << e.row() << ' ' << e.col() << ' ' << Format(e.value()) << '\n';
  out << "end\n";
}

CapturedLcp ReadCapturedLcp(std::istream& in, const std::string& label) {
  Reader r(in, label);
  CapturedLcp p;
  long version = 0;
  {
    auto s = r.Next("saltus_lcp");
    version = r.Integer(s, "version", 0, 1000);
    if (version != 1 && version != 2) r.Fail("unsupported version (this reader knows 1 and 2)");
    r.End(s);
  }
  {
    auto s = r.Next("kind");
    if (!(s >> p.kind)) r.Fail("missing kind");
    r.End(s);
  }
  {
    auto s = r.Next("t");
    p.t = r.Number(s, "t");
    r.End(s);
  }
  {
    auto s = r.Next("note");
    std::getline(s, p.note);
    if (!p.note.empty() && p.note[0] == ' ') p.note.erase(0, 1);
  }
  long n = 0;
  {
    auto s = r.Next("n");
    n = r.Integer(s, "n", 0, 100000000);
    r.End(s);
  }
  {
    auto s = r.Next("rows");
    p.rows.resize(static_cast<std::size_t>(n));
    for (int& row : p.rows) row = static_cast<int>(r.Integer(s, "row", 0, 2147483647));
    r.End(s);
  }
  {
    auto s = r.Next("b");
    p.b.resize(n);
    for (long i = 0; i < n; ++i) p.b[i] = r.Number(s, "b entry");
    r.End(s);
  }
  if (version == 2) {
    if (n % 3 != 0)
      r.Fail("a frictional problem has 3 unknowns per contact, n = " + std::to_string(n));
    auto s = r.Next("mu");
    p.mu.resize(n / 3);
    for (long i = 0; i < n / 3; ++i) {
      p.mu[i] = r.Number(s, "mu entry");
      if (p.mu[i] < 0.0) r.Fail("mu entry: expected >= 0, got " + Format(p.mu[i]));
    }
    r.End(s);
  }
  long nnz = 0;
  {
    auto s = r.Next("nnz");
    nnz = r.Integer(s, "nnz", 0, n * n);
    r.End(s);
  }
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(static_cast<std::size_t>(2 * nnz));
  for (long k = 0; k < nnz; ++k) {
    auto s = r.Next("w");
    const long i = r.Integer(s, "row index", 0, n - 1);
    const long j = r.Integer(s, "column index", 0, n - 1);
    if (i > j) r.Fail("W entries are the upper triangle (i <= j)");
    const double value = r.Number(s, "W entry");
    r.End(s);
    entries.emplace_back(static_cast<int>(i), static_cast<int>(j), value);
    if (i != j) entries.emplace_back(static_cast<int>(j), static_cast<int>(i), value);
  }
  p.W.resize(n, n);
  p.W.setFromTriplets(entries.begin(), entries.end());
  {
    auto s = r.Next("end");
    r.End(s);
  }
  return p;
}

CapturedLcp ReadCapturedLcpFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot be read");
  return ReadCapturedLcp(in, path);
}

bool CaptureWanted(bool ok, int failed_stages, bool empty) {
  switch (Config().when) {
    case When::kOff:
      return false;
    case When::kAll:
      return !empty;
    case When::kFailed:
      return !ok;
    case When::kHard:
      return !ok || failed_stages > 0;
  }
  return false;
}

bool LcpCaptureWanted(const LcpResult& result) {
  return CaptureWanted(result.ok, result.failed_stages, result.z.size() == 0);
}

std::string CaptureLcp(const std::function<void(CapturedLcp*)>& make) {
  const CaptureConfig& config = Config();
  if (config.when == When::kOff) return "";
  static std::mutex mutex;
  static long count = 0;
  CapturedLcp p;
  make(&p);
  const std::lock_guard<std::mutex> lock(mutex);
  std::error_code ec;
  std::filesystem::create_directories(config.dir, ec);
  const std::filesystem::path path =
      std::filesystem::path(config.dir) /
      ((p.kind.empty() ? std::string("unknown") : p.kind) + "_" + std::to_string(::getpid()) + "_" +
       std::to_string(count) + ".lcp");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return "";
  try {
    WriteCapturedLcp(p, out);
  } catch (const std::invalid_argument&) {
    return "";
  }
  if (!out.flush()) return "";
  ++count;
  return path.string();
}

}  // namespace saltus::contact
