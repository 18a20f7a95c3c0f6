#include "tools/vtk_writer.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <stdexcept>
#include <system_error>

#include "tools/json_writer.h"
#include "tools/vtk_polydata.h"

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

void CheckSeriesName(const std::string& writer, const std::string& name) {
  if (name.empty() || name.find_first_of("/\\") != std::string::npos) {
    throw std::invalid_argument(writer + ": the series name '" + name +
                                "' must be non-empty and contain no path separator");
  }
}

void RemoveFrames(const std::filesystem::path& frames) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(frames, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("frame_", 0) == 0 && entry.path().extension() == ".vtp") {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

// Creates DIR/<name>/ and removes the frames of an earlier run.
void PrepareFrameDirectory(const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path frames = dir / name;
  std::error_code ec;
  std::filesystem::create_directories(frames, ec);
  if (ec || !std::filesystem::is_directory(frames)) {
    throw std::runtime_error("cannot create the VTK frame directory '" + frames.string() +
                             "': " + (ec ? ec.message() : "not a directory"));
  }
  // Stale frames of an earlier, longer run would be confusing next to the new .pvd.
  RemoveFrames(frames);
}

void WriteFrameFile(const std::filesystem::path& dir, const std::string& name, std::size_t index,
                    const std::string& text) {
  char file[32];
  std::snprintf(file, sizeof file, "frame_%06zu.vtp", index);
  const std::filesystem::path path = dir / name / file;
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << text;
  stream.close();
  if (!stream) throw std::runtime_error("cannot write the VTK frame '" + path.string() + "'");
}

// DIR/<name>.pvd listing every frame.
void WriteCollection(const std::filesystem::path& path, const std::string& name,
                     const std::vector<double>& times) {
  std::string out =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" "
      "byte_order=\"LittleEndian\">\n<Collection>\n";
  char file[32];
  for (std::size_t i = 0; i < times.size(); ++i) {
    std::snprintf(file, sizeof file, "frame_%06zu.vtp", i);
    out += "<DataSet timestep=\"" + FormatDouble(times[i]) + "\" group=\"\" part=\"0\" file=\"" +
           name + "/" + file + "\"/>\n";
  }
  out += "</Collection>\n</VTKFile>\n";
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

// Points of each body that joints, springs and contacts use (its links; the centre excluded).
std::vector<std::vector<Vector2d>> LinkPoints(const engine::PlanarModel& model,
                                              const std::vector<contact::PlanarContact>& contacts) {
  std::vector<std::vector<Vector2d>> points(static_cast<std::size_t>(model.num_bodies()));
  const auto add = [&](int body, const Vector2d& s) {
    if (body == engine::kGround || s.isZero()) return;
    auto& list = points[static_cast<std::size_t>(body)];
    if (std::find(list.begin(), list.end(), s) == list.end()) list.push_back(s);
  };
  for (const engine::PlanarJoint& j : model.joints()) {
    if (j.type == engine::PlanarJointType::kAngleDriver) continue;
    add(j.body_a, j.point_a);
    add(j.body_b, j.point_b);
  }
  for (const engine::PlanarSpringDamper& sp : model.springs()) {
    add(sp.body_a, sp.point_a);
    add(sp.body_b, sp.point_b);
  }
  for (const contact::PlanarContact& c : contacts) {
    add(c.body_a, c.point_a);
    add(c.body_b, c.point_b);
  }
  return points;
}

}  // namespace

void RemoveVtkSeries(const std::filesystem::path& dir, const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(dir / (name + ".pvd"), ec);
  if (!std::filesystem::is_directory(dir / name, ec)) return;
  RemoveFrames(dir / name);
  std::filesystem::remove(dir / name, ec);  // only if empty
}

VtkWriter::VtkWriter(std::shared_ptr<const engine::PlanarModel> model,
                     std::vector<contact::PlanarContact> contacts, const std::filesystem::path& dir,
                     const std::string& name, bool frames_at_steps,
                     const events::Simulation* simulation)
    : model_(std::move(model)),
      contacts_(std::move(contacts)),
      dir_(dir),
      name_(name),
      frames_at_steps_(frames_at_steps) {
  if (!model_) throw std::invalid_argument("VtkWriter: null model");
  CheckSeriesName("VtkWriter", name_);
  for (const contact::PlanarContact& c : contacts_) {
    for (int b : {c.body_a, c.body_b}) {
      if (b < engine::kGround || b >= model_->num_bodies()) {
        throw std::invalid_argument("VtkWriter: contact '" + c.name + "' names body " +
                                    std::to_string(b) + ", not in the model");
      }
    }
  }
  if (simulation) forces_ = std::make_unique<ContactForces>(simulation->system(), *simulation);
  link_points_ = LinkPoints(*model_, contacts_);
  PrepareFrameDirectory(dir_, name_);
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

namespace {

// The point arrays of both writers (see the header): "body", then the vectors.
const std::vector<std::string> kForceArrays = {"force", "normal_force", "tangential_force"};

// Contact points (kind 1) of the active contacts with their forces; the other vectors zero.
void AddContactPoints(ContactForces* forces, double t, const Eigen::VectorXd& q,
                      const Eigen::VectorXd& v, int other_vectors, PolyData* frame) {
  if (!forces) return;
  forces->Evaluate(t, q, v);
  for (const ContactForces::Arrow& a : forces->arrows()) {
    std::vector<Eigen::Vector3d> vectors(static_cast<std::size_t>(other_vectors),
                                         Eigen::Vector3d::Zero());
    vectors.insert(vectors.end(),
                   {a.normal_force + a.tangential_force, a.normal_force, a.tangential_force});
    frame->AddVert(frame->AddPoint(a.point, {a.body}, vectors), 1, a.row);
  }
}

}  // namespace

void VtkWriter::WriteFrame(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const int nb = model_->num_bodies();
  if (q.size() != 3 * nb || v.size() != 3 * nb) {
    throw std::invalid_argument("VtkWriter: q and v must have 3 entries per body (" +
                                std::to_string(3 * nb) + ")");
  }
  std::vector<std::string> vectors = {"orientation", "velocity"};
  vectors.insert(vectors.end(), kForceArrays.begin(), kForceArrays.end());
  PolyData frame({"body"}, vectors);
  const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
  const auto add = [&](const FramePoint& p) {
    return frame.AddPoint(Eigen::Vector3d(p.x.x(), p.x.y(), 0), {p.body},
                          {Eigen::Vector3d(std::cos(p.theta), std::sin(p.theta), 0),
                           Eigen::Vector3d(p.velocity.x(), p.velocity.y(), 0), zero, zero, zero});
  };
  for (int b = 0; b < nb; ++b) {
    const Pose pose = PoseOf(b, q, v);
    const int centre = add(Material(b, pose, Vector2d::Zero()));
    frame.AddVert(centre, 0, b);
    for (const Vector2d& s : link_points_[static_cast<std::size_t>(b)]) {
      frame.AddLine({centre, add(Material(b, pose, s))}, 7, b);
    }
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
      cell.push_back(add(
          Material(d.body, pose, d.centre + d.radius * Vector2d(std::cos(phi), std::sin(phi)))));
    }
    cell.push_back(cell.front());
    frame.AddLine(std::move(cell), 2, d.body);
  }
  // The line of each point–line and disk–line contact, in the frame of body a, centred at the
  // projection of p_b.
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const contact::PlanarContact& c = contacts_[k];
    if (c.type == contact::PlanarContactType::kDiskDisk) continue;
    const Pose pa = PoseOf(c.body_a, q, v), pb = PoseOf(c.body_b, q, v);
    const Vector2d p_b = Material(c.body_b, pb, c.point_b).x;
    const Vector2d n = Rotate(pa.theta, c.normal_a);
    const Vector2d c_a = Material(c.body_a, pa, c.point_a).x;
    const Vector2d tangent(-n.y(), n.x());
    const double half = std::max(1.0, 5 * c.radius_b);
    const Vector2d foot = c_a + tangent * tangent.dot(p_b - c_a);
    std::vector<int> ends;
    for (double sign : {-1.0, 1.0}) {
      const Vector2d world = foot + sign * half * tangent;
      ends.push_back(add(Material(c.body_a, pa, Rotate(-pa.theta, world - pa.r))));
    }
    frame.AddLine(std::move(ends), 3, static_cast<int>(k));
  }
  AddContactPoints(forces_.get(), t, q, v, 2, &frame);
  WriteFrameFile(dir_, name_, times_.size(), frame.Encode(t, "velocity"));
  times_.push_back(t);
}

void VtkWriter::Close() { WriteCollection(pvd_path(), name_, times_); }

// ---- SpatialVtkWriter ------------------------------------------------------------------------

namespace {

using Eigen::Vector3d;
using Surface = SpatialVtkWriter::Surface;

// Latitude-longitude grid of the unit sphere mapped by `map(direction, upper)`: rings of
// constant latitude, poles as single points; for a capsule the equator is doubled (upper and
// lower hemispheres) so that the cylinder between them is drawn.
template <class Map>
Surface LatLongGrid(const Map& map, bool split_equator) {
  Surface s;
  const int rings = kSurfaceRings, segments = kSurfaceSegments;
  s.vertices.push_back(map(Vector3d::UnitZ(), true));  // north pole
  std::vector<int> ring_start;
  for (int i = 1; i < rings; ++i) {
    const double phi = std::numbers::pi * (0.5 - static_cast<double>(i) / rings);  // latitude
    const int copies = split_equator && 2 * i == rings ? 2 : 1;
    for (int c = 0; c < copies; ++c) {
      const bool upper = phi > 0 || (phi == 0 && c == 0);
      ring_start.push_back(static_cast<int>(s.vertices.size()));
      for (int k = 0; k < segments; ++k) {
        const double lambda = 2 * std::numbers::pi * k / segments;
        s.vertices.push_back(map(Vector3d(std::cos(phi) * std::cos(lambda),
                                          std::cos(phi) * std::sin(lambda), std::sin(phi)),
                                 upper));
      }
    }
  }
  const int south = static_cast<int>(s.vertices.size());
  s.vertices.push_back(map(-Vector3d::UnitZ(), false));
  const auto at = [&](std::size_t ring, int k) { return ring_start[ring] + (k % segments); };
  for (int k = 0; k < segments; ++k) {
    s.triangles.push_back({0, at(0, k), at(0, k + 1)});
    s.triangles.push_back({south, at(ring_start.size() - 1, k + 1), at(ring_start.size() - 1, k)});
  }
  for (std::size_t r = 0; r + 1 < ring_start.size(); ++r) {
    for (int k = 0; k < segments; ++k) {
      s.triangles.push_back({at(r, k), at(r + 1, k), at(r + 1, k + 1)});
      s.triangles.push_back({at(r, k), at(r + 1, k + 1), at(r, k + 1)});
    }
  }
  return s;
}

Surface BoxSurface(const Vector3d& half) {
  Surface s;
  for (int i = 0; i < 8; ++i) {
    s.vertices.emplace_back((i & 1) ? half.x() : -half.x(), (i & 2) ? half.y() : -half.y(),
                            (i & 4) ? half.z() : -half.z());
  }
  // Two outward triangles per face (vertex i has bit 0: +x, bit 1: +y, bit 2: +z).
  s.triangles = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
                 {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
  return s;
}

Surface CylinderSurface(double radius, double length) {
  Surface s;
  const int n = kSurfaceSegments;
  for (int k = 0; k < n; ++k) {
    const double a = 2 * std::numbers::pi * k / n;
    s.vertices.emplace_back(radius * std::cos(a), radius * std::sin(a), -length / 2);
    s.vertices.emplace_back(radius * std::cos(a), radius * std::sin(a), length / 2);
  }
  const int bottom = 2 * n, top = 2 * n + 1;
  s.vertices.emplace_back(0, 0, -length / 2);
  s.vertices.emplace_back(0, 0, length / 2);
  for (int k = 0; k < n; ++k) {
    const int b0 = 2 * k, t0 = 2 * k + 1, b1 = 2 * ((k + 1) % n), t1 = b1 + 1;
    s.triangles.push_back({b0, b1, t1});
    s.triangles.push_back({b0, t1, t0});
    s.triangles.push_back({bottom, b1, b0});
    s.triangles.push_back({top, t0, t1});
  }
  return s;
}

Surface Transformed(Surface s, const Eigen::Isometry3d& pose) {
  for (Vector3d& x : s.vertices) x = pose * x;
  return s;
}

}  // namespace

SpatialVtkWriter::Surface SpatialVtkWriter::Tessellate(const contact::Shape& shape) {
  using contact::ShapeType;
  switch (shape.type()) {
    case ShapeType::kSphere: {
      const double r = shape.radius();
      return LatLongGrid([r](const Vector3d& d, bool) -> Vector3d { return r * d; }, false);
    }
    case ShapeType::kEllipsoid: {
      const Vector3d radii = shape.radii();
      return LatLongGrid(
          [radii](const Vector3d& d, bool) -> Vector3d { return radii.cwiseProduct(d); }, false);
    }
    case ShapeType::kCapsule: {
      const double r = shape.radius(), half = shape.length() / 2;
      return LatLongGrid(
          [r, half](const Vector3d& d, bool upper) -> Vector3d {
            return r * d + Vector3d(0, 0, upper ? half : -half);
          },
          true);
    }
    case ShapeType::kBox:
      return BoxSurface(shape.half_size());
    case ShapeType::kCylinder:
      return CylinderSurface(shape.radius(), shape.length());
    case ShapeType::kPlane: {
      // A square patch of {x : n·x = d} centred at d n.
      const Vector3d n = shape.plane_normal();
      const Vector3d u = n.unitOrthogonal(), w = n.cross(u);
      const Vector3d c = shape.plane_offset() * n;
      const double h = kPlanePatchHalfSize;
      Surface s;
      s.vertices = {c - h * u - h * w, c + h * u - h * w, c + h * u + h * w, c - h * u + h * w};
      s.triangles = {{0, 1, 2}, {0, 2, 3}};
      return s;
    }
    case ShapeType::kConvexMesh:
    case ShapeType::kTriangleMesh:
      return {shape.mesh().vertices, shape.mesh().triangles};
  }
  throw std::logic_error("SpatialVtkWriter: unknown shape type");
}

SpatialVtkWriter::SpatialVtkWriter(std::shared_ptr<const engine::SpatialModel> model,
                                   std::vector<contact::Shape> shapes,
                                   std::vector<int> shape_bodies, const std::filesystem::path& dir,
                                   const std::string& name, bool frames_at_steps,
                                   const events::Simulation* simulation)
    : model_(std::move(model)),
      shape_bodies_(std::move(shape_bodies)),
      dir_(dir),
      name_(name),
      frames_at_steps_(frames_at_steps) {
  if (!model_) throw std::invalid_argument("SpatialVtkWriter: null model");
  CheckSeriesName("SpatialVtkWriter", name_);
  if (shapes.size() != shape_bodies_.size()) {
    throw std::invalid_argument("SpatialVtkWriter: " + std::to_string(shapes.size()) +
                                " shapes but " + std::to_string(shape_bodies_.size()) +
                                " shape bodies");
  }
  const int nb = model_->num_bodies();
  std::vector<bool> has_shape(static_cast<std::size_t>(nb), false);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const int b = shape_bodies_[k];
    if (b < engine::kGround || b >= nb) {
      throw std::invalid_argument("SpatialVtkWriter: " + shapes[k].Label() + " is on body " +
                                  std::to_string(b) + ", not in the model");
    }
    if (b != engine::kGround) has_shape[static_cast<std::size_t>(b)] = true;
    surfaces_.push_back(Transformed(Tessellate(shapes[k]), shapes[k].pose()));
  }
  for (int b = 0; b < nb; ++b) {
    const engine::SpatialBody& body = model_->bodies()[static_cast<std::size_t>(b)];
    // The uniform box with the body's mass and principal moments I_k = m (a_i² + a_j²)/12.
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(body.inertia);
    const Vector3d I = eig.eigenvalues();
    Vector3d half;
    for (int k = 0; k < 3; ++k) {
      const double sq = 6.0 * (I[(k + 1) % 3] + I[(k + 2) % 3] - I[k]) / body.mass;
      half[k] = 0.5 * std::sqrt(std::max(sq, 0.0));
    }
    triad_length_.push_back(kTriadScale * std::max(half.maxCoeff(), 0.01));
    Eigen::Isometry3d principal = Eigen::Isometry3d::Identity();
    principal.linear() = eig.eigenvectors();
    principal.translation() = body.com;
    inertia_boxes_.push_back(has_shape[static_cast<std::size_t>(b)]
                                 ? Surface{}
                                 : Transformed(BoxSurface(half), principal));
  }
  if (simulation) forces_ = std::make_unique<ContactForces>(simulation->system(), *simulation);
  PrepareFrameDirectory(dir_, name_);
  Close();
}

SpatialVtkWriter::~SpatialVtkWriter() {
  try {
    Close();
  } catch (const std::exception&) {  // reported by an explicit Close()
  }
}

void SpatialVtkWriter::OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (frames_at_steps_ && (times_.empty() || t != times_.back())) WriteFrame(t, q, v);
}

void SpatialVtkWriter::OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (!times_.empty() && t == times_.back()) return;
  WriteFrame(t, q, v);
}

void SpatialVtkWriter::Close() { WriteCollection(pvd_path(), name_, times_); }

void SpatialVtkWriter::WriteFrame(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const int nb = model_->num_bodies();
  if (q.size() != model_->num_q() || v.size() != model_->num_v()) {
    throw std::invalid_argument("SpatialVtkWriter: q and v must have 7 and 6 entries per body (" +
                                std::to_string(model_->num_q()) + ", " +
                                std::to_string(model_->num_v()) + ")");
  }
  struct BodyPose {
    Vector3d r = Vector3d::Zero(), r_dot = Vector3d::Zero(), omega = Vector3d::Zero();
    Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  };
  const auto pose_of = [&](int b) {
    BodyPose p;
    if (b == engine::kGround) return p;
    const Eigen::Index i = model_->QOffset(b), j = model_->VOffset(b);
    p.r = q.segment<3>(i);
    p.R =
        Eigen::Quaterniond(q[i + 3], q[i + 4], q[i + 5], q[i + 6]).normalized().toRotationMatrix();
    p.r_dot = v.segment<3>(j);
    p.omega = v.segment<3>(j + 3);
    return p;
  };
  std::vector<std::string> vectors = {"velocity"};
  vectors.insert(vectors.end(), kForceArrays.begin(), kForceArrays.end());
  PolyData frame({"body"}, vectors);
  const Vector3d zero = Vector3d::Zero();
  const auto add_point = [&](int body, const BodyPose& p, const Vector3d& s) {
    return frame.AddPoint(p.r + p.R * s, {body},
                          {p.r_dot + p.R * p.omega.cross(s), zero, zero, zero});
  };
  const auto add_surface = [&](int body, const BodyPose& p, const Surface& s, int kind, int item) {
    const int first = frame.num_points();
    for (const Vector3d& vertex : s.vertices) add_point(body, p, vertex);
    for (const auto& tri : s.triangles) {
      frame.AddPoly({first + tri[0], first + tri[1], first + tri[2]}, kind, item);
    }
  };
  for (int b = 0; b < nb; ++b) {
    const BodyPose p = pose_of(b);
    const int origin = add_point(b, p, Vector3d::Zero());
    frame.AddVert(origin, 0, b);
    const double l = triad_length_[static_cast<std::size_t>(b)];
    for (int k = 0; k < 3; ++k)
      frame.AddLine({origin, add_point(b, p, l * Vector3d::Unit(k))}, 4, b);
  }
  for (std::size_t k = 0; k < surfaces_.size(); ++k) {
    add_surface(shape_bodies_[k], pose_of(shape_bodies_[k]), surfaces_[k], 5, static_cast<int>(k));
  }
  for (int b = 0; b < nb; ++b) {
    add_surface(b, pose_of(b), inertia_boxes_[static_cast<std::size_t>(b)], 6, b);
  }
  AddContactPoints(forces_.get(), t, q, v, 1, &frame);
  WriteFrameFile(dir_, name_, times_.size(), frame.Encode(t, "velocity"));
  times_.push_back(t);
}

}  // namespace saltus::tools
