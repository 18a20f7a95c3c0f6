#include "tools/vtk_polydata.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace saltus::tools {

namespace {

constexpr std::size_t kBlockSize = 32768;  // VTK's default compression block

template <class T>
void AppendRaw(std::string* out, const T& value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof value);
}

// The XML element of one appended array, and its bytes appended to `data`.
template <class T>
std::string Array(const std::string& name, const char* type, int components,
                  const std::vector<T>& values, std::string* data) {
  std::string xml = "<DataArray type=\"" + std::string(type) + "\" Name=\"" + name + "\"";
  if (components > 1) xml += " NumberOfComponents=\"" + std::to_string(components) + "\"";
  xml += " format=\"appended\" offset=\"" + std::to_string(data->size()) + "\"/>\n";
  data->append(CompressVtkArray(values.data(), values.size() * sizeof(T)));
  return xml;
}

}  // namespace

std::string CompressVtkArray(const void* data, std::size_t bytes) {
  static_assert(std::endian::native == std::endian::little, "VTK files are written LittleEndian");
  const auto* in = static_cast<const unsigned char*>(data);
  const std::size_t blocks = (bytes + kBlockSize - 1) / kBlockSize;
  std::string header, body;
  AppendRaw(&header, static_cast<std::uint64_t>(blocks));
  AppendRaw(&header, static_cast<std::uint64_t>(kBlockSize));
  AppendRaw(&header, static_cast<std::uint64_t>(bytes % kBlockSize));
  std::vector<unsigned char> buffer;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t size = std::min(kBlockSize, bytes - b * kBlockSize);
    uLongf compressed = compressBound(static_cast<uLong>(size));
    buffer.resize(compressed);
    if (compress2(buffer.data(), &compressed, in + b * kBlockSize, static_cast<uLong>(size),
                  Z_DEFAULT_COMPRESSION) != Z_OK) {
      throw std::runtime_error("zlib compression failed");
    }
    AppendRaw(&header, static_cast<std::uint64_t>(compressed));
    body.append(reinterpret_cast<const char*>(buffer.data()), compressed);
  }
  return header + body;
}

PolyData::PolyData(std::vector<std::string> point_ints, std::vector<std::string> point_vectors)
    : int_names_(std::move(point_ints)),
      vector_names_(std::move(point_vectors)),
      ints_(int_names_.size()),
      vectors_(vector_names_.size()) {}

int PolyData::AddPoint(const Eigen::Vector3d& x, const std::vector<std::int32_t>& ints,
                       const std::vector<Eigen::Vector3d>& vectors) {
  if (ints.size() != ints_.size() || vectors.size() != vectors_.size()) {
    throw std::logic_error("PolyData::AddPoint: one value per declared point array");
  }
  points_.insert(points_.end(), {x.x(), x.y(), x.z()});
  for (std::size_t k = 0; k < ints.size(); ++k) ints_[k].push_back(ints[k]);
  for (std::size_t k = 0; k < vectors.size(); ++k) {
    vectors_[k].insert(vectors_[k].end(), {vectors[k].x(), vectors[k].y(), vectors[k].z()});
  }
  return num_points() - 1;
}

void PolyData::Cells::Add(const int* first, std::size_t count, int kind_value, int item_value) {
  connectivity.insert(connectivity.end(), first, first + count);
  offsets.push_back(static_cast<std::int64_t>(connectivity.size()));
  kind.push_back(kind_value);
  item.push_back(item_value);
}

void PolyData::AddVert(int point, int kind, int item) { verts_.Add(&point, 1, kind, item); }

void PolyData::AddLine(std::vector<int> points, int kind, int item) {
  lines_.Add(points.data(), points.size(), kind, item);
}

void PolyData::AddPoly(const std::array<int, 3>& points, int kind, int item) {
  polys_.Add(points.data(), 3, kind, item);
}

std::string PolyData::Encode(double t, const std::string& active_vectors) const {
  std::string data;  // the appended section after '_'
  std::string xml =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" "
      "byte_order=\"LittleEndian\" header_type=\"UInt64\" "
      "compressor=\"vtkZLibDataCompressor\">\n<PolyData>\n<FieldData>\n";
  xml += Array("TimeValue", "Float64", 1, std::vector<double>{t}, &data);
  xml += "</FieldData>\n<Piece NumberOfPoints=\"" + std::to_string(num_points()) +
         "\" NumberOfVerts=\"" + std::to_string(verts_.kind.size()) + "\" NumberOfLines=\"" +
         std::to_string(lines_.kind.size()) + "\" NumberOfStrips=\"0\" NumberOfPolys=\"" +
         std::to_string(polys_.kind.size()) + "\">\n<Points>\n";
  xml += Array("Points", "Float64", 3, points_, &data);
  xml += "</Points>\n<PointData Vectors=\"" + active_vectors + "\">\n";
  for (std::size_t k = 0; k < ints_.size(); ++k) {
    xml += Array(int_names_[k], "Int32", 1, ints_[k], &data);
  }
  for (std::size_t k = 0; k < vectors_.size(); ++k) {
    xml += Array(vector_names_[k], "Float64", 3, vectors_[k], &data);
  }
  // Cell data in VTK's cell order: verts, lines, polys.
  std::vector<std::int32_t> kind = verts_.kind, item = verts_.item;
  for (const Cells* c : {&lines_, &polys_}) {
    kind.insert(kind.end(), c->kind.begin(), c->kind.end());
    item.insert(item.end(), c->item.begin(), c->item.end());
  }
  xml += "</PointData>\n<CellData Scalars=\"kind\">\n";
  xml += Array("kind", "Int32", 1, kind, &data);
  xml += Array("item", "Int32", 1, item, &data);
  xml += "</CellData>\n";
  const auto cells = [&](const char* tag, const Cells& c) {
    if (c.kind.empty()) return;  // no empty sections
    xml += std::string("<") + tag + ">\n";
    xml += Array("connectivity", "Int64", 1, c.connectivity, &data);
    xml += Array("offsets", "Int64", 1, c.offsets, &data);
    xml += std::string("</") + tag + ">\n";
  };
  cells("Verts", verts_);
  cells("Lines", lines_);
  cells("Polys", polys_);
  xml += "</Piece>\n</PolyData>\n<AppendedData encoding=\"raw\">\n_";
  xml += data;
  xml += "\n</AppendedData>\n</VTKFile>\n";
  return xml;
}

}  // namespace saltus::tools
