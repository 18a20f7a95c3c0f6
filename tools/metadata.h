// Provenance of a result: which Saltus (version, commit), which input (SHA-256 of the scene
// file), how it was asked for (the command line) and where it ran (host name). `saltus run`
// writes it into summary.json ("provenance") and results.h5 (root attributes); `saltus compare`
// into its report.md (docs/output-formats.md).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace saltus::tools {

class JsonWriter;

// One input file of a study (saltus compare): its scene name, path and SHA-256.
struct SceneDigest {
  std::string name, file, sha256;
};

struct Provenance {
  std::string version;       // tools::Version()
  std::string commit;        // tools::Commit()
  std::string scene_sha256;  // hex digest of the scene file's bytes; "" without a scene
  std::string command_line;  // "saltus <args>" with shell quoting where needed
  std::string host;          // gethostname(), "" if unavailable
  // Studies only (written when not empty): every scene file, and the `saltus compare --collect`
  // command that merged emitted jobs (command_line is then the study's own).
  std::vector<SceneDigest> scenes;
  std::string collect_command_line;
};

// SHA-256 (FIPS 180-4) of `data`, as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view data);
// SHA-256 of a file's bytes. Throws std::runtime_error naming the file if it cannot be read.
std::string FileSha256(const std::string& path);

// `args` without the program name; "saltus" is put in front. Arguments with characters other
// than letters, digits and -_./=,:+@% are single-quoted (POSIX shell), so the line can be pasted.
std::string CommandLine(std::span<const std::string> args);

// Version, commit and host of this process, the command line of `args`, and the hash of
// `scene_file` when not empty (throws std::runtime_error when it cannot be read).
Provenance CollectProvenance(std::span<const std::string> args, const std::string& scene_file);

// Writes the fields as one JSON object at the writer's current position.
void WriteProvenanceJson(const Provenance& p, JsonWriter* w);

}  // namespace saltus::tools
