// Opt-in capture of the contact problems solved by contact/impact_problem.h, for the test bank of
// captured problems (tests/contact/lcp_bank_test.cc) and for reproducing a failure outside the
// simulation that met it.
//
// A captured problem is the LCP handed to the solver chain (contact/complementarity.h),
//
//   find z (n):   w = W z + b,   0 ≤ w ⊥ z ≥ 0,   W symmetric positive semidefinite,
//
// over all unilateral rows of one SolveImpact or SolveContactAccelerations call (all of its
// independent components together, with the bilateral rows already eliminated), with what the
// call knew: kind ("impact" or "acceleration"), t, the global constraint rows of the unknowns and
// the solver's message.
//
// Environment (read once per process):
//   SALTUS_LCP_CAPTURE=DIR        capture into DIR (created if missing); unset or empty: off.
//   SALTUS_LCP_CAPTURE_WHEN=WHAT  which problems: "hard" (default: a stage of the solver chain
//                                 failed before one verified, or none did), "failed" (no
//                                 verified answer) or "all" (every problem with an unknown).
// Files are DIR/<kind>_<pid>_<k>.lcp, k counting the captures of the process from 0. Writing is
// serialized; a file that cannot be written is skipped silently (capture never changes a run).
//
// File format (text; doubles with %.17g, so a problem reads back bit-identical):
//   # any comment lines
//   saltus_lcp 1
//   kind acceleration
//   t 1.2257085
//   note <the solver's message, one line>
//   n 137
//   rows <n global row indices>
//   b <n numbers>
//   nnz K
//   w i j W_ij          K lines, i ≤ j (the upper triangle; W is symmetric)
//   end
// Version 2 (kind "friction_step": one component of a frictional Moreau–Jean step,
// contact/sparse_friction_step.h) is the same with 3 unknowns per contact (normal, tangent 1,
// tangent 2), Coulomb's law with the exact cone instead of the LCP, and one more line after b:
//   mu <n/3 friction coefficients>
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "contact/complementarity.h"

namespace saltus::contact {

struct CapturedLcp {
  std::string kind;  // "impact" or "acceleration" (any word without spaces)
  double t = 0;
  std::string note;               // one line
  std::vector<int> rows;          // n
  Eigen::SparseMatrix<double> W;  // n × n, symmetric
  Eigen::VectorXd b;              // n
  Eigen::VectorXd mu;             // n/3 for a frictional problem (version 2); empty for an LCP
};

// Writes p in the format above. Throws std::invalid_argument when the sizes disagree or W is not
// square.
void WriteCapturedLcp(const CapturedLcp& p, std::ostream& out);
// Reads one problem. Throws std::invalid_argument naming `label` and the line of the first
// malformed item (unknown version, missing or extra numbers, indices out of range, non-finite
// values).
CapturedLcp ReadCapturedLcp(std::istream& in, const std::string& label = "<lcp>");
// The same from a file (its path labels the messages; an unreadable file throws too).
CapturedLcp ReadCapturedLcpFile(const std::string& path);

// Whether the environment asks for a problem with this result (SALTUS_LCP_CAPTURE_WHEN above).
// Cheap when capture is off.
bool LcpCaptureWanted(const LcpResult& result);
// The same for any solver chain: `ok` (a verified answer), `failed_stages` (stages that failed
// before it) and `empty` (no unknown).
bool CaptureWanted(bool ok, int failed_stages, bool empty);
// Writes the problem into the capture folder; `make` fills everything but is called only when
// capture is on. Returns the path written, or "" (off, or the file could not be written).
std::string CaptureLcp(const std::function<void(CapturedLcp*)>& make);

}  // namespace saltus::contact
