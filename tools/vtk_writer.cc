#include "tools/vtk_writer.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <stdexcept>
#include <system_error>

#include "tools/json_writer.h"

namespace saltus::tools {

namespace {

using Eigen::Vector2d;

struct Pose {
  Vector2d r = Vector2d::Zero();
  double theta = 0;
  Vector2d r_dot = Vector2d::Zero();
  double omega = 0;
};

Pose PoseOf(int body, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  Pose p;
  if (body == engine::kGround) return p;
  const Eigen::Index i = 3 * static_cast<Eigen::Index>(body);
  p.r = q.segment<2>(i);
  p.theta = q[i + 2];
  p.r_dot = v.segment<2>(i);
  p.omega = v[i + 2];
  return p;
}

Vector2d Rotate(double theta, const Vector2d& s) {
  const double c = std::cos(theta), sn = std::sin(theta);
  return {c * s.x() - sn * s.y(), sn * s.x() + c * s.y()};
}

// A point of the frame: position, the body that carries it, its velocity.
struct FramePoint {
  Vector2d x;
  int body;
  double theta;
  Vector2d velocity;
};

FramePoint Material(int body, const Pose& pose, const Vector2d& s) {
  const Vector2d rho = Rotate(pose.theta, s);
  return {pose.r + rho, body, pose.theta, pose.r_dot + pose.omega * Vector2d(-rho.y(), rho.x())};
}

void Append(std::string* out, double x) {
  out->append(FormatDouble(x));
  out->push_back(' ');
}

}  // namespace

VtkWriter::VtkWriter(std::shared_ptr<const engine::PlanarModel> model,
                     std::vector<contact::PlanarContact> contacts, const std::filesystem::path& dir,
                     const std::string& name, bool frames_at_steps)
    : model_(std::move(model)),
      contacts_(std::move(contacts)),
      dir_(dir),
      name_(name),
      frames_at_steps_(frames_at_steps) {
  if (!model_) throw std::invalid_argument("VtkWriter: null model");
  if (name_.empty() || name_.find_first_of("/\\") != std::string::npos) {
    throw std::invalid_argument("VtkWriter: the series name '" + name_ +
                                "' must be non-empty and contain no path separator");
  }
  for (const contact::PlanarContact& c : contacts_) {
    for (int b : {c.body_a, c.body_b}) {
      if (b < engine::kGround || b >= model_->num_bodies()) {
        throw std::invalid_argument("VtkWriter: contact '" + c.name + "' names body " +
                                    std::to_string(b) + ", not in the model");
      }
    }
  }
  const std::filesystem::path frames = dir_ / name_;
  std::error_code ec;
  std::filesystem::create_directories(frames, ec);
  if (ec || !std::filesystem::is_directory(frames)) {
    throw std::runtime_error("cannot create the VTK frame directory '" + frames.string() +
                             "': " + (ec ? ec.message() : "not a directory"));
  }
  // Stale frames of an earlier, longer run would be confusing next to the new .pvd.
  for (const auto& entry : std::filesystem::directory_iterator(frames, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("frame_", 0) == 0 && entry.path().extension() == ".vtp") {
      std::filesystem::remove(entry.path(), ec);
    }
  }
  Close();  // an empty, valid collection from the start
}

VtkWriter::~VtkWriter() {
  try {
    Close();
  } catch (const std::exception&) {  // reported by an explicit Close()
  }
}

void VtkWriter::OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (frames_at_steps_ && (times_.empty() || t != times_.back())) WriteFrame(t, q, v);
}

void VtkWriter::OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (!times_.empty() && t == times_.back()) return;
  WriteFrame(t, q, v);
}

void VtkWriter::WriteFrame(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const int nb = model_->num_bodies();
  if (q.size() != 3 * nb || v.size() != 3 * nb) {
    throw std::invalid_argument("VtkWriter: q and v must have 3 entries per body (" +
                                std::to_string(3 * nb) + ")");
  }
  std::vector<FramePoint> points;
  std::vector<int> verts;                 // point indices, one vertex cell each
  std::vector<std::vector<int>> lines;    // polylines
  std::vector<int> vert_kind, line_kind;  // cell data "kind"
  for (int b = 0; b < nb; ++b) {
    verts.push_back(static_cast<int>(points.size()));
    vert_kind.push_back(0);
    points.push_back(Material(b, PoseOf(b, q, v), Vector2d::Zero()));
  }
  // Disks, each drawn once even if it appears in several contacts.
  struct Disk {
    int body;
    Vector2d centre;
    double radius;
  };
  std::vector<Disk> disks;
  const auto add_disk = [&](int body, const Vector2d& centre, double radius) {
    for (const Disk& d : disks) {
      if (d.body == body && d.centre == centre && d.radius == radius) return;
    }
    disks.push_back({body, centre, radius});
  };
  for (const contact::PlanarContact& c : contacts_) {
    if (c.type != contact::PlanarContactType::kPointLine && c.radius_b > 0) {
      add_disk(c.body_b, c.point_b, c.radius_b);
    }
    if (c.type == contact::PlanarContactType::kDiskDisk && c.radius_a > 0) {
      add_disk(c.body_a, c.point_a, c.radius_a);
    }
  }
  for (const Disk& d : disks) {
    const Pose pose = PoseOf(d.body, q, v);
    std::vector<int> cell;
    for (int k = 0; k < kDiskOutlineSegments; ++k) {
      const double phi = 2 * std::numbers::pi * k / kDiskOutlineSegments;
      const Vector2d s = d.centre + d.radius * Vector2d(std::cos(phi), std::sin(phi));
      cell.push_back(static_cast<int>(points.size()));
      points.push_back(Material(d.body, pose, s));
    }
    cell.push_back(cell.front());
    lines.push_back(std::move(cell));
    line_kind.push_back(2);
  }
  std::vector<FramePoint> segment_points;  // two per line
  for (const contact::PlanarContact& c : contacts_) {
    const Pose pa = PoseOf(c.body_a, q, v), pb = PoseOf(c.body_b, q, v);
    const FramePoint p_b = Material(c.body_b, pb, c.point_b);
    FramePoint contact_point = p_b;
    if (c.type == contact::PlanarContactType::kDiskDisk) {
      const FramePoint p_a = Material(c.body_a, pa, c.point_a);
      const Vector2d d = p_b.x - p_a.x;
      const double norm = d.norm();
      const Vector2d n = norm > 0 ? Vector2d(d / norm) : Vector2d::UnitY();
      contact_point = Material(c.body_a, pa, c.point_a + Rotate(-pa.theta, c.radius_a * n));
    } else {
      const Vector2d n = Rotate(pa.theta, c.normal_a);
      const FramePoint c_a = Material(c.body_a, pa, c.point_a);
      if (c.type == contact::PlanarContactType::kDiskLine) {
        contact_point = Material(c.body_b, pb, c.point_b + Rotate(-pb.theta, -c.radius_b * n));
      }
      // The line segment, in the frame of body a, centred at the projection of p_b.
      const Vector2d tangent(-n.y(), n.x());
      const double half = std::max(1.0, 5 * c.radius_b);
      const Vector2d foot = c_a.x + tangent * tangent.dot(p_b.x - c_a.x);
      for (double sign : {-1.0, 1.0}) {
        const Vector2d world = foot + sign * half * tangent;
        segment_points.push_back(Material(c.body_a, pa, Rotate(-pa.theta, world - pa.r)));
      }
    }
    verts.push_back(static_cast<int>(points.size()));
    vert_kind.push_back(1);
    points.push_back(contact_point);
  }
  // The line segments after all contact points (the order of the header).
  for (std::size_t k = 0; k + 1 < segment_points.size(); k += 2) {
    const int first = static_cast<int>(points.size());
    points.push_back(segment_points[k]);
    points.push_back(segment_points[k + 1]);
    lines.push_back({first, first + 1});
    line_kind.push_back(3);
  }

  std::string& out = buffer_;
  out.clear();
  out +=
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"0.1\" "
      "byte_order=\"LittleEndian\">\n<PolyData>\n";
  out +=
      "<FieldData><DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" "
      "format=\"ascii\">" +
      FormatDouble(t) + "</DataArray></FieldData>\n";
  out += "<Piece NumberOfPoints=\"" + std::to_string(points.size()) + "\" NumberOfVerts=\"" +
         std::to_string(verts.size()) + "\" NumberOfLines=\"" + std::to_string(lines.size()) +
         "\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n";
  out +=
      "<Points><DataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\" "
      "format=\"ascii\">";
  for (const FramePoint& p : points) Append(&out, p.x.x()), Append(&out, p.x.y()), Append(&out, 0);
  out += "</DataArray></Points>\n<PointData Vectors=\"velocity\">\n";
  out += "<DataArray type=\"Int32\" Name=\"body\" format=\"ascii\">";
  for (const FramePoint& p : points) out += std::to_string(p.body) + ' ';
  out +=
      "</DataArray>\n<DataArray type=\"Float64\" Name=\"orientation\" "
      "NumberOfComponents=\"3\" format=\"ascii\">";
  for (const FramePoint& p : points) {
    Append(&out, std::cos(p.theta)), Append(&out, std::sin(p.theta)), Append(&out, 0);
  }
  out +=
      "</DataArray>\n<DataArray type=\"Float64\" Name=\"velocity\" NumberOfComponents=\"3\" "
      "format=\"ascii\">";
  for (const FramePoint& p : points) {
    Append(&out, p.velocity.x()), Append(&out, p.velocity.y()), Append(&out, 0);
  }
  out +=
      "</DataArray>\n</PointData>\n<CellData Scalars=\"kind\">\n"
      "<DataArray type=\"Int32\" Name=\"kind\" format=\"ascii\">";
  for (int k : vert_kind) out += std::to_string(k) + ' ';
  for (int k : line_kind) out += std::to_string(k) + ' ';
  out += "</DataArray>\n</CellData>\n";
  const auto cells = [&](const char* tag, const std::vector<std::vector<int>>& list) {
    if (list.empty()) return;  // no empty sections
    out += std::string("<") + tag +
           "><DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">";
    for (const auto& cell : list) {
      for (int i : cell) out += std::to_string(i) + ' ';
    }
    out += "</DataArray>\n<DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">";
    std::size_t offset = 0;
    for (const auto& cell : list) {
      offset += cell.size();
      out += std::to_string(offset) + ' ';
    }
    out += std::string("</DataArray></") + tag + ">\n";
  };
  std::vector<std::vector<int>> vert_cells;
  for (int i : verts) vert_cells.push_back({i});
  cells("Verts", vert_cells);
  cells("Lines", lines);
  out += "</Piece>\n</PolyData>\n</VTKFile>\n";

  char file[32];
  std::snprintf(file, sizeof file, "frame_%06zu.vtp", times_.size());
  const std::filesystem::path path = dir_ / name_ / file;
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << out;
  stream.close();
  if (!stream) throw std::runtime_error("cannot write the VTK frame '" + path.string() + "'");
  times_.push_back(t);
}

void VtkWriter::Close() {
  std::string out =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" "
      "byte_order=\"LittleEndian\">\n<Collection>\n";
  char file[32];
  for (std::size_t i = 0; i < times_.size(); ++i) {
    std::snprintf(file, sizeof file, "frame_%06zu.vtp", i);
    out += "<DataSet timestep=\"" + FormatDouble(times_[i]) + "\" group=\"\" part=\"0\" file=\"" +
           name_ + "/" + file + "\"/>\n";
  }
  out += "</Collection>\n</VTKFile>\n";
  const std::filesystem::path path = pvd_path();
  // Written next to the final name and renamed, so that a reader never sees half a file.
  const std::filesystem::path partial = path.string() + ".partial";
  std::ofstream stream(partial, std::ios::binary | std::ios::trunc);
  stream << out;
  stream.close();
  std::error_code ec;
  if (stream) std::filesystem::rename(partial, path, ec);
  if (!stream || ec) {
    std::filesystem::remove(partial, ec);
    throw std::runtime_error("cannot write the VTK collection '" + path.string() + "'");
  }
}

}  // namespace saltus::tools
