#include "tools/hdf5_writer.h"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace saltus::tools {

namespace {

template <typename T>
struct H5Types;
template <>
struct H5Types<double> {
  static hid_t Memory() { return H5T_NATIVE_DOUBLE; }
  static hid_t File() { return H5T_IEEE_F64LE; }
};
template <>
struct H5Types<std::int32_t> {
  static hid_t Memory() { return H5T_NATIVE_INT32; }
  static hid_t File() { return H5T_STD_I32LE; }
};
template <>
struct H5Types<std::int64_t> {
  static hid_t Memory() { return H5T_NATIVE_INT64; }
  static hid_t File() { return H5T_STD_I64LE; }
};

// Largest chunk, in bytes: keeps the chunks of wide datasets (many coordinates) moderate.
constexpr hsize_t kMaxChunkBytes = 256 * 1024;

// A dataset of `cols` columns (rank 1 when cols == 0 is requested as a vector) that grows along
// its first dimension; rows are buffered and appended a block at a time.
template <typename T>
class Extendible {
 public:
  // vector: rank 1 (cols = 1). Records failures in *failed.
  Extendible(hid_t group, const char* name, hsize_t cols, bool vector, hsize_t chunk_rows,
             std::string* failed)
      : cols_(cols), rank_(vector ? 1 : 2), failed_(failed) {
    chunk_rows_ =
        std::max<hsize_t>(1, std::min<hsize_t>(chunk_rows, kMaxChunkBytes / (sizeof(T) * cols_)));
    const hsize_t dims[2] = {0, cols_};
    const hsize_t max_dims[2] = {H5S_UNLIMITED, cols_};
    const hsize_t chunk[2] = {chunk_rows_, cols_};
    const hid_t space = H5Screate_simple(rank_, dims, max_dims);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank_, chunk);
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {  // byte shuffle helps deflate on numbers
      H5Pset_shuffle(dcpl);
      H5Pset_deflate(dcpl, 4);
    }
    dataset_ = H5Dcreate2(group, name, H5Types<T>::File(), space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (dataset_ < 0) Fail(std::string("cannot create dataset ") + name);
    name_ = name;
    buffer_.reserve(static_cast<std::size_t>(chunk_rows_ * cols_));
  }
  ~Extendible() {
    if (dataset_ >= 0) H5Dclose(dataset_);
  }
  Extendible(const Extendible&) = delete;
  Extendible& operator=(const Extendible&) = delete;

  hid_t id() const { return dataset_; }

  // Appends one row of cols values.
  template <typename Getter>
  void Append(Getter value) {
    for (hsize_t j = 0; j < cols_; ++j) buffer_.push_back(value(static_cast<Eigen::Index>(j)));
    if (buffer_.size() >= chunk_rows_ * cols_) Flush();
  }
  void Append1(T value) {
    buffer_.push_back(value);
    if (buffer_.size() >= chunk_rows_ * cols_) Flush();
  }

  void Flush() {
    if (buffer_.empty() || dataset_ < 0) return;
    const hsize_t count[2] = {buffer_.size() / cols_, cols_};
    const hsize_t start[2] = {rows_, 0};
    const hsize_t extent[2] = {rows_ + count[0], cols_};
    bool ok = H5Dset_extent(dataset_, extent) >= 0;
    const hid_t file_space = H5Dget_space(dataset_);
    const hid_t memory_space = H5Screate_simple(rank_, count, nullptr);
    ok = ok && file_space >= 0 && memory_space >= 0 &&
         H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0 &&
         H5Dwrite(dataset_, H5Types<T>::Memory(), memory_space, file_space, H5P_DEFAULT,
                  buffer_.data()) >= 0;
    if (memory_space >= 0) H5Sclose(memory_space);
    if (file_space >= 0) H5Sclose(file_space);
    if (!ok) Fail("cannot write dataset " + name_);
    rows_ += count[0];
    buffer_.clear();
  }

 private:
  void Fail(const std::string& what) {
    if (failed_->empty()) *failed_ = what;
  }

  hsize_t cols_, chunk_rows_ = 1, rows_ = 0;
  int rank_;
  std::string* failed_;
  std::string name_;
  hid_t dataset_ = -1;
  std::vector<T> buffer_;
};

// A variable-length UTF-8 string array attribute (of no elements for an empty list: a system
// without constraint rows has no row names, and HDF5 refuses to write from no buffer).
bool WriteNames(hid_t object, const char* attribute, const std::vector<std::string>& names) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hsize_t n = names.size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t attr = H5Acreate2(object, attribute, type, space, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<const char*> pointers;
  for (const std::string& s : names) pointers.push_back(s.c_str());
  const bool ok = attr >= 0 && (names.empty() || H5Awrite(attr, type, pointers.data()) >= 0);
  if (attr >= 0) H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
  return ok;
}

bool WriteString(hid_t object, const char* attribute, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(object, attribute, type, space, H5P_DEFAULT, H5P_DEFAULT);
  const char* text = value.c_str();
  const bool ok = attr >= 0 && H5Awrite(attr, type, &text) >= 0;
  if (attr >= 0) H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
  return ok;
}

bool WriteInt(hid_t object, const char* attribute, int value) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(object, attribute, H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
  const bool ok = attr >= 0 && H5Awrite(attr, H5T_NATIVE_INT, &value) >= 0;
  if (attr >= 0) H5Aclose(attr);
  H5Sclose(space);
  return ok;
}

// Names of contact::ContactMode values, indexed by value (the `modes` attributes).
std::vector<std::string> ModeNames() {
  std::vector<std::string> names;
  for (auto m : {contact::ContactMode::kOpen, contact::ContactMode::kClosed,
                 contact::ContactMode::kStick, contact::ContactMode::kSlip}) {
    names.emplace_back(contact::ToString(m));
  }
  return names;
}

}  // namespace

struct Hdf5Writer::File {
  std::string path;
  std::string failed;  // first error, empty while all is well
  hid_t file = -1, trajectory = -1, forces = -1, contacts = -1, events = -1;
  std::unique_ptr<Extendible<double>> t, q, v, lambda, c_point, c_normal, c_tangential, c_lambda_n,
      c_lambda_t;
  std::unique_ptr<Extendible<std::int32_t>> f_count, f_rows, c_count, c_row, c_mode;
  std::unique_ptr<Extendible<std::int64_t>> f_start, c_start;
  std::unique_ptr<Extendible<double>> e_t, e_before, e_after, e_impulses, e_tangential, e_q,
      e_v_minus, e_v_plus;
  std::unique_ptr<Extendible<std::int32_t>> e_kind, e_count, e_rows, e_mode, e_gain,
      e_indeterminate;
  std::unique_ptr<Extendible<std::int64_t>> e_start;

  // Flushes and closes everything; returns false if anything failed.
  bool CloseAll() {
    for (auto* d :
         {&t, &q, &v, &lambda, &c_point, &c_normal, &c_tangential, &c_lambda_n, &c_lambda_t, &e_t,
          &e_before, &e_after, &e_impulses, &e_tangential, &e_q, &e_v_minus, &e_v_plus}) {
      if (*d) (*d)->Flush();
      d->reset();
    }
    for (auto* d : {&f_count, &f_rows, &c_count, &c_row, &c_mode, &e_kind, &e_count, &e_rows,
                    &e_mode, &e_gain, &e_indeterminate}) {
      if (*d) (*d)->Flush();
      d->reset();
    }
    for (auto* d : {&f_start, &c_start, &e_start}) {
      if (*d) (*d)->Flush();
      d->reset();
    }
    for (hid_t* g : {&trajectory, &forces, &contacts, &events}) {
      if (*g >= 0) H5Gclose(*g);
      *g = -1;
    }
    if (file >= 0 && H5Fclose(file) < 0 && failed.empty()) failed = "cannot close the file";
    file = -1;
    return failed.empty();
  }
};

Hdf5Writer::Hdf5Writer(const engine::MechanicalSystem& system, const std::filesystem::path& path,
                       const events::Simulation* simulation, bool rows_at_steps, int chunk_rows)
    : simulation_(simulation), rows_at_steps_(rows_at_steps), file_(std::make_unique<File>()) {
  if (chunk_rows < 1) {
    throw std::invalid_argument("Hdf5Writer: chunk_rows must be >= 1, got " +
                                std::to_string(chunk_rows));
  }
  File& f = *file_;
  f.path = path.string();
  // The row names are attributes, and a pile's rows outgrow an object header's 64 KiB (a
  // sphere pile of 90 spheres has 4455 rows). The 1.8 file format stores large attributes
  // densely (in a heap), without that limit; every HDF5 since 1.8 reads it.
  const hid_t access = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(access, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  H5E_BEGIN_TRY { f.file = H5Fcreate(f.path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access); }
  H5E_END_TRY;
  H5Pclose(access);
  if (f.file < 0) {
    throw std::runtime_error("cannot create the HDF5 file '" + f.path +
                             "' (missing directory or no permission)");
  }
  const int nq = system.nq(), nv = system.nv(), m = system.num_constraints();
  const auto rows = static_cast<hsize_t>(chunk_rows);
  std::vector<std::string> q_names, v_names, row_names;
  for (int i = 0; i < nq; ++i) q_names.push_back(system.PositionName(i));
  for (int i = 0; i < nv; ++i) v_names.push_back(system.VelocityName(i));
  for (int i = 0; i < m; ++i) row_names.push_back(system.constraint_info(i).name);
  bool ok = WriteInt(f.file, "nq", nq) && WriteInt(f.file, "nv", nv) && WriteInt(f.file, "m", m);

  f.trajectory = H5Gcreate2(f.file, "trajectory", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  f.events = H5Gcreate2(f.file, "events", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ok = ok && f.trajectory >= 0 && f.events >= 0;
  std::string* failed = &f.failed;
  const auto nqh = static_cast<hsize_t>(nq), nvh = static_cast<hsize_t>(nv);
  f.t = std::make_unique<Extendible<double>>(f.trajectory, "t", 1, true, rows, failed);
  f.q = std::make_unique<Extendible<double>>(f.trajectory, "q", nqh, false, rows, failed);
  f.v = std::make_unique<Extendible<double>>(f.trajectory, "v", nvh, false, rows, failed);
  ok = ok && WriteNames(f.q->id(), "names", q_names) && WriteNames(f.v->id(), "names", v_names);
  if (simulation_ != nullptr && m > 0) {
    forces_ = std::make_unique<ContactForces>(system, *simulation_);
    f.forces = H5Gcreate2(f.file, "forces", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    f.contacts = H5Gcreate2(f.file, "contacts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok = ok && f.forces >= 0 && f.contacts >= 0;
    const hsize_t entries = 4 * rows;  // several active rows per output row
    f.f_start =
        std::make_unique<Extendible<std::int64_t>>(f.forces, "row_start", 1, true, rows, failed);
    f.f_count =
        std::make_unique<Extendible<std::int32_t>>(f.forces, "row_count", 1, true, rows, failed);
    f.f_rows =
        std::make_unique<Extendible<std::int32_t>>(f.forces, "rows", 1, true, entries, failed);
    f.lambda = std::make_unique<Extendible<double>>(f.forces, "lambda", 1, true, entries, failed);
    f.c_start =
        std::make_unique<Extendible<std::int64_t>>(f.contacts, "row_start", 1, true, rows, failed);
    f.c_count =
        std::make_unique<Extendible<std::int32_t>>(f.contacts, "row_count", 1, true, rows, failed);
    f.c_row =
        std::make_unique<Extendible<std::int32_t>>(f.contacts, "row", 1, true, entries, failed);
    f.c_point =
        std::make_unique<Extendible<double>>(f.contacts, "point", 3, false, entries, failed);
    f.c_normal =
        std::make_unique<Extendible<double>>(f.contacts, "normal_force", 3, false, entries, failed);
    f.c_tangential = std::make_unique<Extendible<double>>(f.contacts, "tangential_force", 3, false,
                                                          entries, failed);
    f.c_mode =
        std::make_unique<Extendible<std::int32_t>>(f.contacts, "mode", 1, true, entries, failed);
    f.c_lambda_n =
        std::make_unique<Extendible<double>>(f.contacts, "normal", 1, true, entries, failed);
    f.c_lambda_t =
        std::make_unique<Extendible<double>>(f.contacts, "tangential", 2, false, entries, failed);
    ok = ok && WriteNames(f.f_rows->id(), "names", row_names) &&
         WriteNames(f.c_mode->id(), "modes", ModeNames());
  }
  // Events are rarer than output rows: smaller chunks.
  const hsize_t event_rows = std::max<hsize_t>(1, rows / 8);
  f.e_t = std::make_unique<Extendible<double>>(f.events, "t", 1, true, event_rows, failed);
  f.e_kind =
      std::make_unique<Extendible<std::int32_t>>(f.events, "kind", 1, true, event_rows, failed);
  f.e_before =
      std::make_unique<Extendible<double>>(f.events, "energy_before", 1, true, event_rows, failed);
  f.e_after =
      std::make_unique<Extendible<double>>(f.events, "energy_after", 1, true, event_rows, failed);
  f.e_start = std::make_unique<Extendible<std::int64_t>>(f.events, "row_start", 1, true, event_rows,
                                                         failed);
  f.e_count = std::make_unique<Extendible<std::int32_t>>(f.events, "row_count", 1, true, event_rows,
                                                         failed);
  f.e_rows =
      std::make_unique<Extendible<std::int32_t>>(f.events, "rows", 1, true, event_rows, failed);
  f.e_impulses =
      std::make_unique<Extendible<double>>(f.events, "impulses", 1, true, event_rows, failed);
  f.e_tangential = std::make_unique<Extendible<double>>(f.events, "tangential_impulses", 2, false,
                                                        event_rows, failed);
  f.e_mode =
      std::make_unique<Extendible<std::int32_t>>(f.events, "modes", 1, true, event_rows, failed);
  f.e_gain = std::make_unique<Extendible<std::int32_t>>(f.events, "energy_gain", 1, true,
                                                        event_rows, failed);
  f.e_indeterminate = std::make_unique<Extendible<std::int32_t>>(f.events, "indeterminate", 1, true,
                                                                 event_rows, failed);
  f.e_q = std::make_unique<Extendible<double>>(f.events, "q", nqh, false, event_rows, failed);
  f.e_v_minus =
      std::make_unique<Extendible<double>>(f.events, "v_minus", nvh, false, event_rows, failed);
  f.e_v_plus =
      std::make_unique<Extendible<double>>(f.events, "v_plus", nvh, false, event_rows, failed);
  std::vector<std::string> kinds;
  for (int k = 0; k < events::kNumEventKinds; ++k) {
    kinds.emplace_back(events::ToString(static_cast<events::EventKind>(k)));
  }
  ok = ok && WriteNames(f.e_kind->id(), "kinds", kinds) &&
       WriteNames(f.e_rows->id(), "names", row_names) &&
       WriteNames(f.e_mode->id(), "modes", ModeNames());
  if (!ok || !f.failed.empty()) {
    const std::string what = f.failed.empty() ? "cannot create its layout" : f.failed;
    f.CloseAll();
    throw std::runtime_error("HDF5 file '" + f.path + "': " + what);
  }
}

Hdf5Writer::~Hdf5Writer() {
  if (file_) file_->CloseAll();
}

void Hdf5Writer::Close() {
  if (!file_) return;
  const bool ok = file_->CloseAll();
  const std::string message = "HDF5 file '" + file_->path + "': " + file_->failed;
  file_.reset();
  if (!ok) throw std::runtime_error(message);
}

void Hdf5Writer::WriteRow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (!file_) throw std::logic_error("Hdf5Writer: write after Close()");
  File& f = *file_;
  f.t->Append1(t);
  f.q->Append([&](Eigen::Index i) { return i < q.size() ? q[i] : std::nan(""); });
  f.v->Append([&](Eigen::Index i) { return i < v.size() ? v[i] : std::nan(""); });
  if (forces_) {
    forces_->Evaluate(t, q, v);
    const std::vector<int>& active = forces_->rows();
    f.f_start->Append1(static_cast<std::int64_t>(force_entries_));
    f.f_count->Append1(static_cast<std::int32_t>(active.size()));
    for (std::size_t k = 0; k < active.size(); ++k) {
      f.f_rows->Append1(static_cast<std::int32_t>(active[k]));
      f.lambda->Append1(forces_->lambda()[static_cast<Eigen::Index>(k)]);
    }
    force_entries_ += static_cast<long>(active.size());
    const std::vector<ContactForces::Arrow>& arrows = forces_->arrows();
    f.c_start->Append1(static_cast<std::int64_t>(contact_entries_));
    f.c_count->Append1(static_cast<std::int32_t>(arrows.size()));
    for (const ContactForces::Arrow& a : arrows) {
      f.c_row->Append1(static_cast<std::int32_t>(a.row));
      f.c_point->Append([&](Eigen::Index i) { return a.point[i]; });
      f.c_normal->Append([&](Eigen::Index i) { return a.normal_force[i]; });
      f.c_tangential->Append([&](Eigen::Index i) { return a.tangential_force[i]; });
      f.c_mode->Append1(static_cast<std::int32_t>(a.mode));
      f.c_lambda_n->Append1(a.normal);
      f.c_lambda_t->Append([&](Eigen::Index i) { return a.tangential[i]; });
    }
    contact_entries_ += static_cast<long>(arrows.size());
  }
  ++rows_;
  have_last_ = true;
  last_t_ = t;
}

void Hdf5Writer::WriteProvenance(const Provenance& p) {
  if (!file_) throw std::logic_error("Hdf5Writer: write after Close()");
  const hid_t root = file_->file;
  const bool ok = WriteString(root, "saltus_version", p.version) &&
                  WriteString(root, "saltus_commit", p.commit) &&
                  WriteString(root, "scene_sha256", p.scene_sha256) &&
                  WriteString(root, "command_line", p.command_line) &&
                  WriteString(root, "host", p.host);
  if (!ok) throw std::runtime_error("HDF5 file '" + file_->path + "': cannot write its attributes");
}

void Hdf5Writer::OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (rows_at_steps_) WriteRow(t, q, v);
}

void Hdf5Writer::OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (have_last_ && t == last_t_) return;
  WriteRow(t, q, v);
}

void Hdf5Writer::OnEvent(const events::Event& e, const Eigen::VectorXd& q,
                         const Eigen::VectorXd& v_minus, const Eigen::VectorXd& v_plus) {
  if (!file_) throw std::logic_error("Hdf5Writer: write after Close()");
  File& f = *file_;
  f.e_t->Append1(e.t);
  f.e_kind->Append1(static_cast<std::int32_t>(e.kind));
  f.e_before->Append1(e.energy_before);
  f.e_after->Append1(e.energy_after);
  f.e_gain->Append1(e.energy_gain ? 1 : 0);
  f.e_indeterminate->Append1(e.indeterminate ? 1 : 0);
  f.e_start->Append1(static_cast<std::int64_t>(event_entries_));
  f.e_count->Append1(static_cast<std::int32_t>(e.rows.size()));
  for (std::size_t k = 0; k < e.rows.size(); ++k) {
    f.e_rows->Append1(static_cast<std::int32_t>(e.rows[k]));
    f.e_impulses->Append1(k < e.impulses.size() ? e.impulses[k] : 0.0);
    const Eigen::Vector2d p_t =
        k < e.tangential_impulses.size() ? e.tangential_impulses[k] : Eigen::Vector2d::Zero();
    f.e_tangential->Append([&](Eigen::Index i) { return p_t[i]; });
    f.e_mode->Append1(
        static_cast<std::int32_t>(k < e.modes.size() ? e.modes[k] : contact::ContactMode::kOpen));
  }
  event_entries_ += static_cast<long>(e.rows.size());
  f.e_q->Append([&](Eigen::Index i) { return q[i]; });
  f.e_v_minus->Append([&](Eigen::Index i) { return v_minus[i]; });
  f.e_v_plus->Append([&](Eigen::Index i) { return v_plus[i]; });
  ++events_;
}

}  // namespace saltus::tools
