// One VTK XML PolyData frame (.vtp) in binary appended form with zlib compression, the layout
// ParaView and VTK's vtkXMLPolyDataReader read (VTK file formats, "XML File Formats", appended
// data): every DataArray is `format="appended" offset="k"` into one <AppendedData
// encoding="raw"> section that starts with '_'; each array there is
//   header: UInt64 number of blocks b, block size s (32768), size of the last block (0: full),
//           compressed size of each block (b values)          (header_type="UInt64")
//   data:   the b blocks of the array's little-endian bytes, each compressed by zlib
//           (compressor="vtkZLibDataCompressor").
// Points and vectors are Float64, so values round-trip exactly; integers Int32 (cell
// connectivity and offsets Int64).
#pragma once

#include <Eigen/Dense>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace saltus::tools {

class PolyData {
 public:
  // Point arrays: every AddPoint gives one value of each, in the order declared here.
  PolyData(std::vector<std::string> point_ints, std::vector<std::string> point_vectors);

  int AddPoint(const Eigen::Vector3d& x, const std::vector<std::int32_t>& ints,
               const std::vector<Eigen::Vector3d>& vectors);
  // Cells with their cell data "kind" and "item".
  void AddVert(int point, int kind, int item);
  void AddLine(std::vector<int> points, int kind, int item);  // a polyline
  void AddPoly(const std::array<int, 3>& points, int kind, int item);

  int num_points() const { return static_cast<int>(points_.size() / 3); }

  // The .vtp text: FieldData "TimeValue" = t, then the piece. `active_vectors` names the point
  // vector array ParaView uses by default (e.g. "velocity").
  std::string Encode(double t, const std::string& active_vectors) const;

 private:
  struct Cells {
    std::vector<std::int64_t> connectivity, offsets;
    std::vector<std::int32_t> kind, item;
    void Add(const int* first, std::size_t count, int kind_value, int item_value);
  };
  std::vector<std::string> int_names_, vector_names_;
  std::vector<double> points_;                   // 3 per point
  std::vector<std::vector<std::int32_t>> ints_;  // per array, one per point
  std::vector<std::vector<double>> vectors_;     // per array, 3 per point
  Cells verts_, lines_, polys_;
};

// Compressed block layout of one array as described above (exposed for tests).
std::string CompressVtkArray(const void* data, std::size_t bytes);

}  // namespace saltus::tools
