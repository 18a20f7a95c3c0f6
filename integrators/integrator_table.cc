// The integrator table: one entry per scheme. Adding an integrator means adding one entry here;
// the factory, the CLI help and the generic tests in tests/integrators/ pick it up.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "integrators/bdf.h"
#include "integrators/dop853.h"
#include "integrators/dopri5.h"
#include "integrators/generalized_alpha.h"
#include "integrators/half_implicit.h"
#include "integrators/hem5.h"
#include "integrators/integrator.h"
#include "integrators/nullspace_newmark.h"
#include "integrators/phem56.h"

namespace saltus::integrators {

namespace {

template <class T>
std::unique_ptr<Integrator> Make(const IntegratorOptions& options) {
  return std::make_unique<T>(options);
}

// BDF of fixed order kOrder, or with DASSL-type order selection in [1, kOrder].
template <int kOrder, bool kVariableOrder>
std::unique_ptr<Integrator> MakeBdf(const IntegratorOptions& options) {
  BdfOptions bdf;
  bdf.order = kOrder;
  bdf.variable_order = kVariableOrder;
  return std::make_unique<Bdf>(options, bdf,
                               kVariableOrder ? "bdf" : "bdf" + std::to_string(kOrder));
}

template <int kVariant>
std::unique_ptr<Integrator> MakeNullspaceNewmark(const IntegratorOptions& options) {
  if constexpr (kVariant == 0) {
    return std::make_unique<NullspaceNewmark>(options, NewmarkParameters::Trapezoidal(),
                                              "newmark_nullspace");
  } else {
    return std::make_unique<NullspaceNewmark>(options, NewmarkParameters::FoxGoodwin(),
                                              "newmark_nullspace_fg");
  }
}

const std::array<IntegratorEntry, 10>& Table() {
  static const std::array<IntegratorEntry, 10> table = {{
      {"dopri5",
       "Dormand-Prince 5(4), explicit Runge-Kutta with dense output of order 4, on the index-1 "
       "formulation with MDOP5 projection of positions and velocities",
       {Formulation::kIndex1},
       &Make<Dopri5>,
       /*non_ideal_forces=*/true,
       /*velocity_level_rows=*/true},
      {"dop853",
       "Dormand-Prince 8(5,3) (Hairer's DOP853), explicit Runge-Kutta of order 8 with error "
       "estimators of orders 5 and 3 and dense output of order 7, on the index-1 formulation with "
       "MDOP5 projection of positions and velocities",
       {Formulation::kIndex1},
       &Make<Dop853>,
       /*non_ideal_forces=*/true,
       /*velocity_level_rows=*/true},
      {"hem5",
       "Brasey-Hairer HEM5, 8-stage half-explicit Runge-Kutta of order 5 on the index-2 "
       "formulation (velocity constraints met at every stage), dense output of order 4, position "
       "projection; minimum-norm stage solves for redundant constraints",
       {Formulation::kIndex2},
       &Make<Hem5>,
       /*non_ideal_forces=*/true,
       /*velocity_level_rows=*/true},
      {"phem56",
       "Murua's PHEM56, 6-stage partitioned half-explicit Runge-Kutta of order 5 (explicit part "
       "Dormand-Prince) on the index-2 formulation (velocity constraints met at every stage), "
       "embedded order-4 estimate, dense output of order 4, position projection",
       {Formulation::kIndex2},
       &Make<Phem56>,
       /*non_ideal_forces=*/true,
       /*velocity_level_rows=*/true},
      {"newmark_nullspace",
       "Newmark trapezoidal rule (beta = 1/4, gamma = 1/2) integrated in the tangent space of the "
       "constraint manifold (null-space method): positions, velocities and accelerations satisfy "
       "the constraints at every step",
       {Formulation::kStabilizedIndex2},
       &MakeNullspaceNewmark<0>,
       /*non_ideal_forces=*/false,
       /*velocity_level_rows=*/false},
      {"newmark_nullspace_fg",
       "Newmark Fox-Goodwin (beta = 1/12, gamma = 1/2, conditionally stable) in the tangent space "
       "of the constraint manifold (null-space method)",
       {Formulation::kStabilizedIndex2},
       &MakeNullspaceNewmark<1>,
       /*non_ideal_forces=*/false,
       /*velocity_level_rows=*/false},
      {"generalized_alpha",
       "Generalized-alpha (Chung-Hulbert, spectral radius rho_inf), implicit, order 2, with "
       "simplified Newton; index3: position constraints, index2: velocity constraints, ggl: both "
       "(stabilized index 2, Algorithm 1 of Haddouni et al. 2017)",
       {Formulation::kIndex3, Formulation::kIndex2, Formulation::kStabilizedIndex2},
       &Make<GeneralizedAlpha>,
       /*non_ideal_forces=*/true,
       /*velocity_level_rows=*/true},
      {"half_implicit",
       "Half-implicit symplectic-Euler scheme on the index-3 formulation (technical note "
       "'half-implicit integration of index-3 DAEs of multibody dynamics'): explicit velocity "
       "update, implicit position update, quasi-Newton matrix built "
       "once per step from time-t_n Jacobians; order 1, fixed or adaptive step",
       {Formulation::kIndex3},
       &Make<HalfImplicit>,
       /*non_ideal_forces=*/true,
       /*velocity_level_rows=*/true},
      {"bdf",
       "Variable-step, variable-order BDF 1-5 (variable-coefficient form, DASSL-type order "
       "selection) on the stabilized index-2 (GGL) formulation, extrapolation predictor, "
       "simplified Newton with the iteration matrix kept over steps, DASSL-type error estimate "
       "on q and v, restart at order 1 after each Reset; fixed-step runs use order 2",
       {Formulation::kStabilizedIndex2},
       &MakeBdf<5, true>,
       /*non_ideal_forces=*/true,
       /*velocity_level_rows=*/true},
      {"bdf2",
       "Variable-step BDF of fixed order 2 (variable-coefficient form) on the stabilized "
       "index-2 (GGL) formulation, as bdf but without order selection (restart: trapezoidal "
       "step, then BDF2)",
       {Formulation::kStabilizedIndex2},
       &MakeBdf<2, false>,
       /*non_ideal_forces=*/true,
       /*velocity_level_rows=*/true},
  }};
  return table;
}

std::string FormulationList(const std::vector<Formulation>& formulations) {
  std::string list;
  for (Formulation f : formulations) {
    if (!list.empty()) list += ", ";
    list += ToString(f);
  }
  return list;
}

}  // namespace

std::span<const IntegratorEntry> IntegratorTable() { return Table(); }

std::unique_ptr<Integrator> MakeIntegrator(std::string_view name,
                                           const IntegratorOptions& options) {
  const auto& table = Table();
  const auto entry = std::find_if(table.begin(), table.end(),
                                  [&](const IntegratorEntry& e) { return e.name == name; });
  if (entry == table.end()) {
    std::string known;
    for (const IntegratorEntry& e : table) {
      if (!known.empty()) known += ", ";
      known += e.name;
    }
    throw std::invalid_argument("unknown integrator '" + std::string(name) +
                                "'; known integrators: " + known);
  }
  if (std::find(entry->formulations.begin(), entry->formulations.end(), options.formulation) ==
      entry->formulations.end()) {
    throw std::invalid_argument("integrator '" + std::string(name) +
                                "' does not support formulation '" +
                                std::string(ToString(options.formulation)) +
                                "'; supported: " + FormulationList(entry->formulations));
  }
  return entry->make(options);
}

}  // namespace saltus::integrators
