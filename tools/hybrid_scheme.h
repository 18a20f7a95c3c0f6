// The hybrid scheme (`simulation.hybrid: on`, issue 23 §3): the event loop (events::Simulation)
// runs until its events come faster than it can serve them; the whole system then continues
// with Moreau–Jean time-stepping (timestepping::MoreauJean) and returns to the event loop once
// its contacts are calm. One scheme at a time integrates all bodies (per-island switching needs
// partitioned integration: docs/time-stepping.md, "Hybrid mode").
//
// Criteria (tools/hybrid_options.h has the keys and defaults):
//   event loop → time-stepping   more than K events (impacts, take-offs, closings, stick/slip;
//                                not time events) within a window W of simulated time (default
//                                W = K h: on average more than one event per time step, where
//                                time-stepping resolves the same motion to O(h) at a fixed cost
//                                per step), or the event loop's Zeno guard (more than
//                                zeno.max_events switches within zeno.window it cannot resolve),
//                                or a failure of the event loop on a contact problem, a
//                                projection or the index-1 solve of its closed rows (a
//                                degenerate contact set: RunStatus::kLcpFailure,
//                                kProjectionFailure, kLinearSolveFailure): the
//                                whole system goes on from the state after the loop's last
//                                accepted step or event (the failed switch may have left its
//                                state half-projected), which time-stepping can continue since
//                                its contact problem on impulses has a solution for any state;
//   time-stepping → event loop   for a calm time T_c (default 50 h) no step had an impact (a row
//                                of the index set approaching faster than τ₁ that received an
//                                impulse: MoreauJean's impact event) and after every step each
//                                row of the index set had |ġ| = |G v + ∂g/∂t| ≤ v_c (default
//                                max(τ₁, v_e), v_e the restitution threshold).
// The event loop stops at the step boundary after the event that meets its criterion
// (Simulation::RequestStop from the scheme's observer); the time-stepping phase is advanced one
// step at a time. At a switch the state (t, q, v) is handed over as it is:
//   to time-stepping   MoreauJean::SetState (kResumed): only the joints are projected, so T + V
//                      does not change (the event loop's state satisfies them to round-off);
//   to the event loop  the contacts that carried an impulse in the last step are closed: the
//                      positions are projected onto g = 0 on them (and the joints), since a
//                      resting contact of time-stepping sits within its O(h) accuracy of the
//                      surface, e.g. (1 − θ) h U_k above it after a step that started
//                      departing (4 nm for the e = 0.5 ball at h = 1 ms), which the event loop
//                      would take for a flight and a new Zeno cascade; then
//                      Simulation::SetState (kResumed): the contacts within τ₀ (or penetrating,
//                      by at most τ₀ after MoreauJean's position projection) form I₁, an impact
//                      is solved if one approaches faster than τ₁ (after a calm window with
//                      the default v_c only plastic ones: e = 0 below v_e), the
//                      acceleration-level problem decides which close,
//                      and positions and velocities are projected onto them (M-orthogonal
//                      projections: the kinetic energy cannot rise; the potential energy may by
//                      the work of lifting penetrations of at most τ₀ to g = 0).
// Each switch is an event (kind to_time_stepping / to_event_driven, no contact rows, T + V
// before and after; its cause, HybridReport::last_switch_cause: crowding, zeno_guard,
// lcp_failure, projection_failure, linear_solve_failure, calm) given to the observers before the
// events the restarted event loop records at the same instant. A failure of time-stepping stops the
// run (its status and message, the state of the last step kept). The phases of time-stepping step
// on the grid t_s + k h from their start t_s (HybridState::phase_start), so that a run resumed in
// such a phase (Scheme::ResumeHybridState, `saltus run --resume`) takes the same steps. The
// observers see one run: every step, every event, and the outputs on the run's grid (the event
// loop's interpolated grid points; in time-stepping the first step end at or after each grid point,
// as MoreauJean; output_step 0: every step), without the repeated initial output a restarted scheme
// would give. stats() sums both schemes (events::Combined), with the switches counted under their
// kinds.
#pragma once

#include <memory>

#include "tools/hybrid_options.h"
#include "tools/run_scheme.h"

namespace saltus::tools {

// Throws std::invalid_argument on bad options of either scheme or of the hybrid criteria
// (step ≤ 0 or not finite, events < 1, negative window, calm time or calm speed), naming them.
std::unique_ptr<Scheme> MakeHybridScheme(std::shared_ptr<const engine::MechanicalSystem> system,
                                         const events::SimulationOptions& options,
                                         const timestepping::SceneKeys& keys,
                                         const HybridOptions& hybrid);

}  // namespace saltus::tools
