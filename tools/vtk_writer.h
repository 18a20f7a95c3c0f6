// VTK/ParaView time series of a planar run (documented for users in docs/output-formats.md):
// DIR/<name>.pvd, a Collection of DIR/<name>/frame_NNNNNN.vtp (XML PolyData, ASCII, %.17g),
// one per output time, so that File > Open <name>.pvd in ParaView plays the run.
//
// Each frame has one piece. Points (z = 0), in this order:
//   - one per body: its centre r = (x, y);
//   - the outline of every disk of the contacts (kDiskOutlineSegments points on the circle
//     p + ρ (cos φ, sin φ), p = r + R(θ) s the disk centre, ρ its radius);
//   - one per contact: the contact point (point–line: p_b; disk–line: p_b − r_b n;
//     disk–disk: p_a + r_a (p_b − p_a)/‖p_b − p_a‖; see contact/planar_contacts.h);
//   - two per line of a point–line or disk–line contact: a segment of the line (which is
//     infinite) of half-length max(1 m, 5 r_b), centred at the projection of p_b.
// Point data: "body" (Int32, carrying body, −1 for the ground), "orientation" (the body's
// x axis (cos θ, sin θ, 0), for a Glyph filter), "velocity" (of the material point: ṙ + θ̇ J ρ).
// Cells: Verts for the body centres and the contact points, Lines for the disk outlines (closed
// polylines) and line segments. Cell data "kind": 0 body, 1 contact point, 2 disk, 3 line.
#pragma once

#include <Eigen/Dense>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "contact/planar_contacts.h"
#include "engine/planar_model.h"
#include "events/simulation.h"

namespace saltus::tools {

constexpr int kDiskOutlineSegments = 24;

class VtkWriter : public events::Observer {
 public:
  // Creates DIR/<name>/ (removing stale frames of an earlier run) and an empty DIR/<name>.pvd.
  // frames_at_steps: also a frame at every accepted step (runs without an output grid).
  // Throws std::runtime_error naming the path when it cannot be created or written;
  // std::invalid_argument if `name` is empty or contains a path separator.
  VtkWriter(std::shared_ptr<const engine::PlanarModel> model,
            std::vector<contact::PlanarContact> contacts, const std::filesystem::path& dir,
            const std::string& name = "frames", bool frames_at_steps = false);
  // Writes the .pvd (errors swallowed; call Close() to see them).
  ~VtkWriter() override;
  VtkWriter(const VtkWriter&) = delete;
  VtkWriter& operator=(const VtkWriter&) = delete;

  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  // One frame; a second output at the t of the last frame is skipped. Throws
  // std::runtime_error if the frame cannot be written.
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;

  // Writes DIR/<name>.pvd listing every frame so far. May be called again after more frames.
  // Throws std::runtime_error naming the file if it cannot be written.
  void Close();

  long frames() const { return static_cast<long>(times_.size()); }
  std::filesystem::path pvd_path() const { return dir_ / (name_ + ".pvd"); }

 private:
  void WriteFrame(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  std::shared_ptr<const engine::PlanarModel> model_;
  std::vector<contact::PlanarContact> contacts_;
  std::filesystem::path dir_;
  std::string name_;
  bool frames_at_steps_;
  std::vector<double> times_;
  std::string buffer_;
};

}  // namespace saltus::tools
