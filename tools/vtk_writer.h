// VTK/ParaView time series of a planar run (VtkWriter) or a spatial one (SpatialVtkWriter,
// below), documented for users in docs/output-formats.md:
// DIR/<name>.pvd, a Collection of DIR/<name>/frame_NNNNNN.vtp, one per output time, so that
// File > Open <name>.pvd in ParaView plays the run. Frames are XML PolyData in binary appended
// form with zlib compression (tools/vtk_polydata.h; Float64 points and vectors).
//
// Both writers draw the same kinds of cells (cell data "kind"; "item" says which one):
//   0 body centre / origin (vertex; item: body)       4 body axis triad (line; item: body)
//   1 contact point (vertex; item: its row)           5 shape surface (triangle; item: shape)
//   2 disk outline (closed polyline; item: body)      6 inertia box (triangle; item: body)
//   3 contact line segment (line; item: contact)      7 link (line; item: body)
// Point data: "body" (Int32, −1 for the ground), "velocity" (of the material point), and the
// contact forces on body b at the contact points (zero at every other point; tools/
// contact_forces.h): "normal_force", "tangential_force" (with friction) and their sum "force",
// for a Glyph filter. Contact points and forces are those of the active contacts at each output
// time, and need the simulation (constructor argument; none: no contact points).
//
// Planar frames (z = 0). Points, in order:
//   - per body: its centre r = (x, y) (kind 0), then its links: a line from r to every point
//     of the body that a joint, a spring or a contact uses (kind 7), so that a mechanism of
//     bodies without disks is drawn as its bars;
//   - the outline of every disk of the contacts (kDiskOutlineSegments points on the circle
//     p + ρ (cos φ, sin φ), p = r + R(θ) s the disk centre, ρ its radius; kind 2);
//   - two per line of a point–line or disk–line contact: a segment of the line (which is
//     infinite) of half-length max(1 m, 5 r_b), centred at the projection of p_b (kind 3);
//   - one per active contact: its contact point (kind 1).
// Planar point data also has "orientation": the body's x axis (cos θ, sin θ, 0).
#pragma once

#include <Eigen/Dense>
#include <array>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "contact/planar_contacts.h"
#include "contact/shapes.h"
#include "engine/planar_model.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"
#include "tools/contact_forces.h"

namespace saltus::tools {

constexpr int kDiskOutlineSegments = 24;

// Removes the series DIR/<name>.pvd and its frames DIR/<name>/frame_*.vtp (of an earlier run),
// and the folder DIR/<name> if nothing else is in it. Errors are ignored (nothing to remove).
void RemoveVtkSeries(const std::filesystem::path& dir, const std::string& name);

// What both writers have in common (so that `saltus run --vtk` holds either).
class VtkSeries : public events::Observer {
 public:
  // Writes DIR/<name>.pvd listing every frame so far. May be called again after more frames.
  // Throws std::runtime_error naming the file if it cannot be written.
  virtual void Close() = 0;
};

class VtkWriter : public VtkSeries {
 public:
  // Creates DIR/<name>/ (removing stale frames of an earlier run) and an empty DIR/<name>.pvd.
  // frames_at_steps: also a frame at every accepted step (runs without an output grid).
  // Throws std::runtime_error naming the path when it cannot be created or written;
  // std::invalid_argument if `name` is empty or contains a path separator.
  // `simulation` (may be null: no contact points) gives the active contacts at each output;
  // it must outlive the writer.
  VtkWriter(std::shared_ptr<const engine::PlanarModel> model,
            std::vector<contact::PlanarContact> contacts, const std::filesystem::path& dir,
            const std::string& name = "frames", bool frames_at_steps = false,
            const events::Simulation* simulation = nullptr);
  // Writes the .pvd (errors swallowed; call Close() to see them).
  ~VtkWriter() override;
  VtkWriter(const VtkWriter&) = delete;
  VtkWriter& operator=(const VtkWriter&) = delete;

  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  // One frame; a second output at the t of the last frame is skipped. Throws
  // std::runtime_error if the frame cannot be written.
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;

  void Close() override;  // see VtkSeries

  long frames() const { return static_cast<long>(times_.size()); }
  std::filesystem::path pvd_path() const { return dir_ / (name_ + ".pvd"); }

 private:
  void WriteFrame(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  std::shared_ptr<const engine::PlanarModel> model_;
  std::vector<contact::PlanarContact> contacts_;
  std::unique_ptr<ContactForces> forces_;
  std::vector<std::vector<Eigen::Vector2d>> link_points_;  // per body, in its frame
  std::filesystem::path dir_;
  std::string name_;
  bool frames_at_steps_;
  std::vector<double> times_;
};

// ---- Spatial scenes -------------------------------------------------------------------------
// The same series (.pvd + one .vtp per output time, see above) for a spatial model
// (engine/spatial_model.h; body i has q_i = (r, Q), r the body-frame origin, Q = (w, x, y, z)
// the unit quaternion of R, and v_i = (ṙ world, ω body frame)). A point s of the body frame is
// at p = r + R s, with velocity ṗ = ṙ + R (ω × s). Each frame has one piece; points, in order:
//   - per body: its origin r (a vertex, kind 0) and the tips r + ℓ R e_x, r + ℓ R e_y,
//     r + ℓ R e_z of its axis triad (three lines from r, kind 4; ℓ = kTriadScale times the
//     body's size, the largest half side of its inertia box below, at least 1 cm);
//   - per shape (contact/shapes.h, pose X_WS = X_WB X_BS; world shapes use X_WB = I): its
//     surface as triangles (kind 5): sphere, ellipsoid and capsule as latitude-longitude grids
//     (kSurfaceRings × kSurfaceSegments), cylinder with kSurfaceSegments sides and two capped
//     ends, box (12 triangles), meshes as given, a plane as a square patch of half side
//     kPlanePatchHalfSize around the point of the plane nearest the origin of S;
//   - per body without shapes: the box of uniform density with its mass and principal moments
//     (sides a_k = √(6 (I_i + I_j − I_k)/m), centred at the centre of mass along the principal
//     axes; 12 triangles, kind 6). A degenerate moment (I_i + I_j ≤ I_k) gives a flat side;
//   - one per active contact: its contact point (kind 1).
constexpr int kSurfaceRings = 8;
constexpr int kSurfaceSegments = 16;
constexpr double kTriadScale = 1.5;
constexpr double kPlanePatchHalfSize = 2.0;

class SpatialVtkWriter : public VtkSeries {
 public:
  // shapes[k] is attached to body shape_bodies[k] (engine::kGround: fixed in the world), as in
  // tools::SpatialScene. Throws std::invalid_argument on a null model, sizes that differ, a
  // body index outside [kGround, num_bodies) or a bad name; std::runtime_error naming the path
  // when the directory cannot be created (as VtkWriter).
  SpatialVtkWriter(std::shared_ptr<const engine::SpatialModel> model,
                   std::vector<contact::Shape> shapes, std::vector<int> shape_bodies,
                   const std::filesystem::path& dir, const std::string& name = "frames",
                   bool frames_at_steps = false, const events::Simulation* simulation = nullptr);
  ~SpatialVtkWriter() override;
  SpatialVtkWriter(const SpatialVtkWriter&) = delete;
  SpatialVtkWriter& operator=(const SpatialVtkWriter&) = delete;

  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  void Close() override;  // see VtkSeries

  long frames() const { return static_cast<long>(times_.size()); }
  std::filesystem::path pvd_path() const { return dir_ / (name_ + ".pvd"); }

  // A closed or open triangle surface in some frame.
  struct Surface {
    std::vector<Eigen::Vector3d> vertices;
    std::vector<std::array<int, 3>> triangles;
  };
  // The tessellation of a shape in its own frame S (as described above).
  static Surface Tessellate(const contact::Shape& shape);

 private:
  void WriteFrame(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  std::shared_ptr<const engine::SpatialModel> model_;
  std::unique_ptr<ContactForces> forces_;
  std::vector<int> shape_bodies_;
  std::vector<Surface> surfaces_;       // per shape, in the body frame B (X_BS applied)
  std::vector<Surface> inertia_boxes_;  // per body, empty for bodies with shapes
  std::vector<double> triad_length_;    // per body
  std::filesystem::path dir_;
  std::string name_;
  bool frames_at_steps_;
  std::vector<double> times_;
};

}  // namespace saltus::tools
