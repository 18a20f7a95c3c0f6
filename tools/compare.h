// `saltus compare`: a study of integrators and formulations over a set of scenes, from the runs
// to work-precision diagrams and performance profiles (docs/compare.md).
//
//   saltus compare [--scenes F...] [--set NAME|FILE ...] [--integrators N...]
//                  [--formulations F...] [--rtol R1,R2,...] [--out DIR] [--time-limit S]
//                  [--jobs N] [--repeat N] [--reference-integrator N] [--reference-rtol R]
//                  [--no-plots]
//
// 1. Everything that can be bad input is checked before any run, and reported with exit code 2
//    naming the item: the arguments, every scene (tools/scene.h; also built with BuildSystem),
//    the set files, integrator and formulation names (integrators::IntegratorTable()), the
//    tolerance list, and the scenes' reference files and closed forms (tools/reference.h).
// 2. Reference solutions: the scene's `reference:` section (file, analytic, or a run), else a
//    tight-tolerance run of --reference-integrator at --reference-rtol (atol = rtol/100). Runs
//    are made in child processes and written to DIR/references/<scene>.csv; a failed reference
//    run leaves that scene's errors empty.
// 3. The study runs every valid combination scene × integrator × formulation × rtol (atol = rtol)
//    with the scene's other options, each in its own forked process killed after the time limit,
//    at most --jobs at once (default: the cores available). A run that fails, crashes or times
//    out is recorded as such; the study goes on. One line per finished run goes to stderr.
//    --repeat N runs the simulation up to N times in the child (while it has used < 1 s) and
//    keeps the smallest wall time, to tame timer noise on millisecond runs.
// 4. DIR/results.csv: one row per run (columns: kResultColumns, documented in docs/compare.md).
// 5. Unless --no-plots, tools/plots/compare_plots.py draws the PNGs and DIR/report.md from
//    results.csv with $SALTUS_PYTHON, else /usr/bin/python3 (Debian's, with matplotlib), else
//    python3 on the PATH; if it cannot, a warning is printed and the exit code stays 0.
// Reference runs get five times the time limit of the study's runs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace saltus::tools {

// The text of `saltus compare --help`.
std::string_view CompareHelp();

// Columns of results.csv, in order.
extern const std::vector<std::string> kResultColumns;

// One row of results.csv: column name → text (empty when not applicable).
using ResultRow = std::map<std::string, std::string>;

// Runs `saltus compare` with `args` (after the word compare). Returns an exit code of
// tools/cli.h. Throws std::invalid_argument on bad input (the CLI turns it into exit code 2).
int RunCompare(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// Test seam, reachable from C++ only (no option, no environment variable): `in_child`, when set,
// is called in every run's child process (reference runs included) just before its simulation,
// with the scene name, integrator and rtol. Tests use it to make a child crash (raise a signal)
// and check that the run is recorded as failed and the study goes on.
struct CompareHooks {
  std::function<void(const std::string& scene, const std::string& integrator, double rtol)>
      in_child;
};
int RunCompare(std::span<const std::string> args, std::ostream& out, std::ostream& err,
               const CompareHooks& hooks);

// Parses "1e-2,1e-4" into tolerances (each finite and > 0). Throws std::invalid_argument naming
// the bad item.
std::vector<double> ParseToleranceList(const std::string& text);

// One scene of a set file: a file name, or a map {file: F, name: N, t_end: T, analytic: NAME}
// that renames the scene (results are keyed by scene name), overrides its t_end and names a
// closed-form reference (tools/reference.h) for it, so that shipped scenes can be used in a set
// without editing them.
struct SceneSetEntry {
  std::string file;             // resolved against the set file's folder
  std::string name;             // replaces the scene's name when not empty
  std::optional<double> t_end;  // overrides the scene's (--t-end overrides both)
  std::string analytic;         // replaces the scene's `reference:` section when not empty
  std::string set_file;         // the set file and the entry's line, for messages
  int line = 0;
};

// The entries of a set file (YAML: `set: NAME`, optional `description`, `scenes:` a list of
// entries, paths relative to the set file); `name_or_path` as for SceneSetFiles. Throws
// std::invalid_argument naming the set file and line.
std::vector<SceneSetEntry> SceneSet(const std::string& name_or_path, std::string* set_name);

// Scene files listed by a set file (YAML: `set: NAME`, optional `description`, `scenes:` a list
// of paths relative to the set file). `name_or_path` is a file path, or the name of a set shipped
// in examples/sets/ (impacts, joints, stiff, flexible). Throws std::invalid_argument naming the
// set.
std::vector<std::string> SceneSetFiles(const std::string& name_or_path, std::string* set_name);

// Writes a CSV line of `row` in kResultColumns order (fields quoted when needed).
void WriteResultRow(const ResultRow& row, std::ostream& out);

}  // namespace saltus::tools
