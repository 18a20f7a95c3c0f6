// HDF5 results file of a run (documented for users in docs/output-formats.md), for long runs:
// every dataset is chunked, compressed (shuffle + deflate level 4, when the HDF5 library has the
// deflate filter) and extendible along its first dimension, and rows are buffered and appended in
// blocks, so memory stays bounded whatever the length of the run.
//
//   /trajectory/t          (n)        output times (and accepted steps when rows_at_steps)
//   /trajectory/q          (n × nq)   attribute "names": MechanicalSystem::PositionName
//   /trajectory/v          (n × nv)   attribute "names": MechanicalSystem::VelocityName
//   /forces/row_start      (n)        int64: first entry of output row i in rows / lambda
//   /forces/row_count      (n)        int32: its number of entries
//   /forces/rows           (k)        int32: the active constraint rows at that time (joints,
//                                     closed contacts; attribute "names": every row's name)
//   /forces/lambda         (k)        their multipliers from the index-1 solve (Haddouni et al.
//                                     2017, eq. 8-9) at (t, q, v) (tools/contact_forces.h); the
//                                     rows left out (open contacts) have λ = 0
//   /contacts/row_start, row_count (n)   as above, into the per-contact datasets:
//   /contacts/row          (c)        int32: the contact's unilateral row
//   /contacts/point        (c × 3)    contact point, world (z = 0 in the plane)
//   /contacts/normal_force, tangential_force (c × 3)   forces on the contact's body b, world
//   /events/t, kind        (e)        kind is an int32 code; attribute "kinds" lists the names
//                                     ("impact", "takeoff", "contact_closed", "time") by code
//   /events/energy_before, energy_after (e)   T + V (J) at t*⁻ and t*⁺
//   /events/row_start      (e)        int64: first entry of the event in rows / impulses
//   /events/row_count      (e)        int32: its number of entries
//   /events/rows           (r)        int32: global constraint rows (names in /forces/rows)
//   /events/impulses       (r)        N·s, per row (0 for events that are not impacts)
//   /events/q, v_minus, v_plus (e × nq, e × nv, e × nv)   state at t*, velocities before/after
//
// Root attributes: nq, nv, m (int) and, after WriteProvenance, the strings saltus_version,
// saltus_commit, scene_sha256, command_line and host (tools/metadata.h). Written with the HDF5 C
// API (stable across 1.10-1.14); the file format is HDF5 1.8's (dense storage of the name
// attributes, which outgrow 64 KiB on piles).
#pragma once

#include <Eigen/Dense>
#include <filesystem>
#include <memory>
#include <vector>

#include "engine/mechanical_system.h"
#include "events/simulation.h"
#include "tools/contact_forces.h"
#include "tools/metadata.h"

namespace saltus::tools {

class Hdf5Writer : public events::Observer {
 public:
  // Creates (or truncates) `path`. `simulation` (may be null: /forces and /contacts are then not
  // written) gives the active rows at each output. rows_at_steps: also a row at every accepted step
  // (runs without an output grid). Throws std::runtime_error naming the path if the file
  // cannot be created. `system` and `simulation` must outlive the writer.
  Hdf5Writer(const engine::MechanicalSystem& system, const std::filesystem::path& path,
             const events::Simulation* simulation = nullptr, bool rows_at_steps = false,
             int chunk_rows = 1024);
  // Closes the file (errors are swallowed here; call Close() to see them).
  ~Hdf5Writer() override;
  Hdf5Writer(const Hdf5Writer&) = delete;
  Hdf5Writer& operator=(const Hdf5Writer&) = delete;

  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  // A second output at the same t as the last row (the initial state written by the caller and
  // again by the simulation) is skipped.
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  void OnEvent(const events::Event& e, const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
               const Eigen::VectorXd& v_plus) override;

  // Root attributes naming the Saltus build, the scene file, the command line and the host.
  // Throws std::runtime_error naming the file if they cannot be written.
  void WriteProvenance(const Provenance& provenance);

  // Writes the buffered rows and closes the file; later calls do nothing. Throws
  // std::runtime_error naming the file if a write failed (here or earlier).
  void Close();

  long rows() const { return rows_; }
  long events() const { return events_; }

 private:
  struct File;
  void WriteRow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  const events::Simulation* simulation_;
  bool rows_at_steps_;
  std::unique_ptr<File> file_;
  std::unique_ptr<ContactForces> forces_;  // with a simulation
  long rows_ = 0, events_ = 0, event_entries_ = 0;
  long force_entries_ = 0, contact_entries_ = 0;
  bool have_last_ = false;
  double last_t_ = 0;
};

}  // namespace saltus::tools
