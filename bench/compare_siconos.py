#!/usr/bin/python3
"""Saltus against Siconos 4.4 (EventDriven + LsodarOSI) on the bouncing ball and the ball stack.

Runs bench/saltus_event_driven and bench/siconos_event_driven (both built in BUILD_DIR with
-DSALTUS_BUILD_BENCHMARKS=ON) on examples/bouncing_ball.yaml and examples/ball_stack.yaml,
several times each, interleaved (Saltus, Siconos, Saltus, ...) so that a change in the load of
the machine hits both alike, and prints for each scene:
  - the median (and smallest) wall time of each configuration, measured inside each driver
    around model construction, initialization and the run (docs/benchmarks.md);
  - the median CPU time (std::clock, same region): steadier than wall time on a shared machine;
  - the wall-time ratio Siconos / Saltus of the medians, and the CPU-time ratio;
  - the largest impact-time error max_k |t_k − t_k*| against an exact reference, over the
    impacts before the first accumulation (Zeno) time t∞;
  - whole processes, start-up included: the `saltus` command line (BUILD_DIR/tools/saltus, `run
    SCENE --out DIR`, writing its result files) against siconos_event_driven on the same scene,
    alternated --process-repetitions times, medians of the CPU time (user + system of the child)
    and of the wall time. (saltus_event_driven is not used for this: it loads Siconos Numerics
    before its timed region.) A `saltus` copied out of the build tree needs SALTUS_FCL_MODULE
    for 3D scenes only; both scenes here are planar.

References (exact up to round-off):
  bouncing ball  closed form: t₁ = √(2 (y₀ − r)/g), v₁ = g t₁, t_{k+1} = t_k + 2 eᵏ v₁/g,
                 t∞ = t₁ (1 + e)/(1 − e).
  ball stack     the exact piecewise-parabolic motion: between impacts every disk is in free
                 fall, so the disk–disk gaps are linear in time and the ground gap quadratic;
                 each impact is binary (Newton's law with momentum conservation). It is followed
                 to the first accumulation: the bottom disk's bounces on the ground, whose limit
                 t∞ = t_K + 2 v_K⁺ / (g (1 − e)) is taken at the last bounce computed (post-impact
                 speed below 1e-12 m/s). Up to t∞ no impact involves two contacts at once; after
                 it, multi-contact impacts begin (solved by an LCP in both engines) and there is
                 no closed form: the script then reports only how far the two engines' event
                 times agree with each other.
The scene parameters below must match the example files (they are checked against the first
impact time each engine reports).

Siconos configurations: TOL_ED (EventDriven's threshold on |y| and |ẏ| that decides a contact is
closed and ends an accumulation) = 1e-10, with LSODAR at Siconos' default tolerances (rtol =
10 ε, atol = 100 ε) and at the same rtol/atol as Saltus; and one run with Siconos' default
TOL_ED (≈ 2.2e-12), whose outcome is reported (it can stall near t∞, hence --timeout).

Usage: bench/compare_siconos.py [--build-dir build-bench] [--saltus-build-dir DIR]
                                [--repetitions 7] [--process-repetitions 30] [--timeout 60]
                                [--json FILE]
Both drivers run with OPENBLAS_NUM_THREADS=1 unless it is set. Only /usr/bin/python3 and numpy.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Both engines reach OpenBLAS (Saltus through Siconos Numerics); its thread pool only adds
# noise on these tiny problems, so both run single-threaded unless the caller says otherwise.
ENV = dict(os.environ)
ENV.setdefault("OPENBLAS_NUM_THREADS", "1")

# ---- Scene parameters (examples/bouncing_ball.yaml, examples/ball_stack.yaml) ---------------

BALL = dict(g=9.81, e=0.9, radius=0.1, y0=1.0)
STACK = dict(g=9.81, e=0.5, radius=0.1, masses=[1.0, 0.5, 0.25], y0=[0.101, 0.302, 0.503],
             contacts=["ground_bottom", "bottom_middle", "middle_top"])


def bouncing_ball_reference():
    """Impact times (all named 'floor') before t∞, and t∞."""
    g, e = BALL["g"], BALL["e"]
    t1 = math.sqrt(2.0 * (BALL["y0"] - BALL["radius"]) / g)
    v1 = g * t1
    t_inf = t1 * (1.0 + e) / (1.0 - e)
    times = [t1]
    k = 1
    while True:
        t_next = times[-1] + 2.0 * e**k * v1 / g
        if not t_next < t_inf or t_next == times[-1]:
            break
        times.append(t_next)
        k += 1
    return [(t, "floor") for t in times], t_inf


def ball_stack_reference():
    """Exact isolated binary impacts up to the first accumulation time t∞: [(t, contact)], t∞."""
    g, e, r = STACK["g"], STACK["e"], STACK["radius"]
    m = STACK["masses"]
    y = list(STACK["y0"])
    v = [0.0] * len(y)
    t = 0.0
    impacts = []
    for _ in range(10000):
        candidates = []
        # Ground: y₀ − r + v₀ τ − g τ²/2 = 0, positive root, written without cancellation.
        c = max(y[0] - r, 0.0)
        s = math.sqrt(v[0] ** 2 + 2.0 * g * c)
        tau = (v[0] + s) / g if v[0] >= 0 else 2.0 * c / (s - v[0])
        if tau > 0:
            candidates.append((tau, 0))
        # Disk k−1 below disk k: the gap is linear in τ (same acceleration).
        for k in range(1, len(y)):
            gap = y[k] - y[k - 1] - 2.0 * r
            closing = v[k] - v[k - 1]
            if closing < 0:
                candidates.append((max(gap, 0.0) / -closing, k))
        tau, k = min(candidates)
        t += tau
        y = [yi + vi * tau - 0.5 * g * tau * tau for yi, vi in zip(y, v)]
        v = [vi - g * tau for vi in v]
        if k == 0:
            v[0] = -e * v[0]
        else:
            u = v[k] - v[k - 1]
            p = -(1.0 + e) * u * m[k] * m[k - 1] / (m[k] + m[k - 1])
            v[k - 1] -= p / m[k - 1]
            v[k] += p / m[k]
        impacts.append((t, STACK["contacts"][k]))
        if k == 0 and v[0] < 1e-12:
            return impacts, t + 2.0 * v[0] / (g * (1.0 - e))
    raise RuntimeError("ball stack reference: no accumulation found")


# ---- Running the drivers ---------------------------------------------------------------------


def run_driver(command, timeout):
    """Runs one driver; returns its key=value figures (status 'stalled' on timeout)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=ENV)
    except subprocess.TimeoutExpired:
        return {"status": "stalled", "message": "no result after %g s (killed)" % timeout,
                "process_seconds": timeout}
    out = {"process_seconds": time.perf_counter() - start, "exit_code": proc.returncode}
    keys = ("engine", "scene", "status", "message", "t_end", "t_reached", "impacts", "events",
            "wall_seconds", "cpu_seconds", "accepted_steps", "rejected_steps", "rhs_evaluations", "lcp_solves",
            "integrator", "rtol", "atol")
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in keys:
            out[key] = value
    if "status" not in out:
        out["status"] = "error"
        out["message"] = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return out


def run_process(command, timeout):
    """Runs one command to its end; (exit code, wall seconds, CPU seconds = user + system of the
    child from wait4, what `perf stat` calls task-clock up to the accounting granularity)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=ENV)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        raise
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if wall > timeout:
        print("warning: %s took %.1f s" % (" ".join(command), wall))
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime


def whole_process(saltus_cli, siconos, path, tmp, args):
    """Whole processes, start-up included, alternated: the `saltus` command line as a user runs
    it (`saltus run SCENE --out DIR`: parses the scene, simulates, writes trajectory.csv,
    events.csv and summary.json) against Siconos' driver on the same scene (TOL_ED = 1e-10,
    LSODAR default tolerances; it builds its model from the scene file and writes nothing).
    Medians of the CPU and wall times."""
    commands = {"saltus": [saltus_cli, "run", path, "--out", os.path.join(tmp, "cli")],
                "siconos": [siconos, path, "--tol-ed", "1e-10", "--quiet"]}
    times = {k: ([], []) for k in commands}
    for _ in range(args.process_repetitions):
        for key, command in commands.items():
            code, wall, cpu = run_process(command, args.timeout)
            if code != 0:
                sys.exit("compare_siconos: %s exited %d" % (" ".join(command), code))
            times[key][0].append(cpu)
            times[key][1].append(wall)
    out = {k: {"command": " ".join(commands[k]), "cpu_median": float(np.median(c)),
               "wall_median": float(np.median(w))} for k, (c, w) in times.items()}
    out["cpu_ratio"] = out["siconos"]["cpu_median"] / out["saltus"]["cpu_median"]
    out["wall_ratio"] = out["siconos"]["wall_median"] / out["saltus"]["wall_median"]
    return out


def read_events(path):
    """Impacts of an events CSV (t,kind,contacts,impulse,...): [(t, contacts)]."""
    impacts = []
    with open(path) as f:
        next(f)
        for line in f:
            fields = line.rstrip("\n").split(",")
            if fields[1] == "impact":
                impacts.append((float(fields[0]), fields[2]))
    return impacts


def impact_error(impacts, reference, t_inf):
    """Largest |t_k − t_k*| over the k-th impacts of both lists before t∞, while the contacts
    agree. Returns (error, impacts compared, index of the first contact mismatch or None)."""
    engine = [ev for ev in impacts if ev[0] < t_inf]
    n = min(len(engine), len(reference))
    errors = []
    for k in range(n):
        if engine[k][1] != reference[k][1]:
            return (max(errors) if errors else float("nan")), k, k
        errors.append(abs(engine[k][0] - reference[k][0]))
    return (max(errors) if errors else float("nan")), n, None


def agreement_after(a, b, t_inf):
    """How the two engines' impacts after t∞ compare: (impacts compared while the contacts
    agree, largest |Δt| over them)."""
    a = [ev for ev in a if ev[0] >= t_inf]
    b = [ev for ev in b if ev[0] >= t_inf]
    n, worst = 0, 0.0
    for ea, eb in zip(a, b):
        if ea[1] != eb[1]:
            break
        worst = max(worst, abs(ea[0] - eb[0]))
        n += 1
    return n, worst


def ms(seconds):
    """'1.234 ms', or '-' when there is no time (the run did not finish)."""
    return "-" if math.isnan(seconds) else "%.3f ms" % (1e3 * seconds)


def sweep(saltus, siconos, path, scene, reference, t_inf, tmp, args):
    """Both engines over a range of tolerances (Siconos with TOL_ED = 1e-10)."""
    print("work-precision (atol = rtol/100; Siconos TOL_ED = 1e-10):")
    print("  %-8s %8s %-9s %7s %13s %11s" % ("engine", "rtol", "status", "impacts",
                                              "wall median", "max|Δt_k|"))
    rows = []
    for rtol in (1e-4, 1e-6, 1e-8, 1e-10, 1e-12):
        tol = ["--rtol", "%g" % rtol, "--atol", "%g" % (rtol / 100)]
        for engine, command in (("saltus", [saltus, path] + tol),
                                ("siconos", [siconos, path, "--tol-ed", "1e-10"] + tol)):
            events = os.path.join(tmp, "%s-sweep-%s-%g.csv" % (scene, engine, rtol))
            runs = [run_driver(command + ["--quiet"] + (["--events", events] if i == 0 else []),
                               args.timeout) for i in range(args.repetitions)]
            walls = [float(r["wall_seconds"]) for r in runs if r["status"] == "finished"]
            impacts = read_events(events) if os.path.exists(events) else []
            err, compared, _ = impact_error(impacts, reference, t_inf)
            row = {"engine": engine, "rtol": rtol, "status": runs[0]["status"],
                   "impacts": len(impacts), "wall_median": float(np.median(walls))
                   if walls else float("nan"), "max_impact_time_error": err,
                   "impacts_compared": compared}
            rows.append(row)
            print("  %-8s %8.0e %-9s %7d %13s %11.2e" % (
                engine, rtol, row["status"], row["impacts"], ms(row["wall_median"]), err))
    return rows


# ---- Main ------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(SOURCE_DIR, "build-bench"))
    parser.add_argument("--saltus-build-dir",
                        help="take saltus_event_driven and tools/saltus from this build instead "
                        "(e.g. a branch)")
    parser.add_argument("--repetitions", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds before a Siconos run is declared stalled")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--process-repetitions", type=int, default=30,
                        help="repetitions of the whole-process comparison (default 30)")
    parser.add_argument("--sweep", action="store_true",
                        help="also run both engines at rtol = 1e-4 ... 1e-12 (atol = rtol/100): "
                        "a work-precision table")
    args = parser.parse_args()

    saltus = os.path.join(args.saltus_build_dir or args.build_dir, "bench",
                          "saltus_event_driven")
    siconos = os.path.join(args.build_dir, "bench", "siconos_event_driven")
    saltus_cli = os.path.join(args.saltus_build_dir or args.build_dir, "tools", "saltus")
    for exe in (saltus, siconos, saltus_cli):
        if not os.access(exe, os.X_OK):
            sys.exit("compare_siconos: %s not found: configure with -DSALTUS_BUILD_BENCHMARKS=ON, "
                     "install libsiconos-kernel-dev (scripts/install-bench-deps.sh) and build "
                     "the targets saltus_event_driven and siconos_event_driven" % exe)

    scenes = [("bouncing_ball", bouncing_ball_reference()), ("ball_stack", ball_stack_reference())]
    report = {"repetitions": args.repetitions, "scenes": {}}
    tmp = tempfile.mkdtemp(prefix="saltus-compare-")
    for scene, (reference, t_inf) in scenes:
        path = os.path.join(SOURCE_DIR, "examples", scene + ".yaml")
        probe = run_driver([saltus, path, "--quiet"], args.timeout)
        if probe["status"] != "finished":
            print("%s: Saltus did not finish (%s: %s)" % (scene, probe["status"],
                                                         probe.get("message", "")))
        rtol, atol = probe.get("rtol", "1e-4"), probe.get("atol", "1e-6")
        configs = [
            ("saltus", "%s rtol=%s atol=%s" % (probe.get("integrator", "?"), rtol, atol),
             [saltus, path]),
            ("siconos", "TOL_ED=1e-10, LSODAR default tol", [siconos, path, "--tol-ed", "1e-10"]),
            ("siconos", "TOL_ED=1e-10, rtol=%s atol=%s" % (rtol, atol),
             [siconos, path, "--tol-ed", "1e-10", "--rtol", rtol, "--atol", atol]),
        ]
        runs = {i: [] for i in range(len(configs))}
        for rep in range(args.repetitions):
            for i, (engine, label, command) in enumerate(configs):
                events = os.path.join(tmp, "%s-%d.csv" % (scene, i))
                extra = ["--quiet"] + (["--events", events] if rep == 0 else [])
                runs[i].append(run_driver(command + extra, args.timeout))
        default_tol_ed = run_driver(
            [siconos, path, "--quiet", "--events", os.path.join(tmp, scene + "-default.csv")],
            args.timeout)

        rows = []
        impacts_of = {}
        for i, (engine, label, command) in enumerate(configs):
            finished = [r for r in runs[i] if r["status"] == "finished"]
            walls = np.array([float(r["wall_seconds"]) for r in finished])
            events = os.path.join(tmp, "%s-%d.csv" % (scene, i))
            impacts = read_events(events) if os.path.exists(events) else []
            impacts_of[i] = impacts
            err, compared, mismatch = impact_error(impacts, reference, t_inf)
            rows.append({
                "engine": engine, "config": label, "command": " ".join(command),
                "status": runs[i][0]["status"], "message": runs[i][0].get("message", ""),
                "finished_runs": len(finished), "impacts": len(impacts),
                "impacts_before_t_inf": sum(1 for ev in impacts if ev[0] < t_inf),
                "wall_median": float(np.median(walls)) if len(walls) else float("nan"),
                "wall_min": float(walls.min()) if len(walls) else float("nan"),
                "cpu_median": float(np.median([float(r["cpu_seconds"]) for r in finished]))
                if finished else float("nan"),
                # Wall time of the driver's process; saltus_event_driven loads Siconos
                # Numerics (for its LCPs) before its timed region, so this is not the cost of
                # a Saltus process: see whole_process for that.
                "driver_process_median": float(np.median([r["process_seconds"]
                                                          for r in runs[i]])),
                "max_impact_time_error": err, "impacts_compared": compared,
                "first_contact_mismatch": mismatch,
                "first_impact": impacts[0][0] if impacts else float("nan"),
            })
        n_after, worst_after = agreement_after(impacts_of[0], impacts_of[1], t_inf)
        report["scenes"][scene] = {
            "t_inf": t_inf, "reference_impacts_before_t_inf": len(reference), "rows": rows,
            "ratio_siconos_default_tol": rows[1]["wall_median"] / rows[0]["wall_median"],
            "ratio_siconos_matched_tol": rows[2]["wall_median"] / rows[0]["wall_median"],
            "cpu_ratio_siconos_default_tol": rows[1]["cpu_median"] / rows[0]["cpu_median"],
            "siconos_default_tol_ed": {k: default_tol_ed.get(k) for k in
                                       ("status", "message", "t_reached", "impacts",
                                        "wall_seconds")},
            "after_t_inf_agreement": {"impacts": n_after, "max_dt": worst_after},
        }

        # ---- Print ----
        print("\n== %s (t∞ = %.12g s; %d reference impacts before t∞; %d repetitions)"
              % (scene, t_inf, len(reference), args.repetitions))
        print("%-8s %-36s %-9s %7s %13s %13s %13s %11s %9s" % (
            "engine", "configuration", "status", "impacts", "wall median", "wall min",
            "CPU median", "max|Δt_k|", "compared"))
        for row in rows:
            print("%-8s %-36s %-9s %7d %13s %13s %13s %11.2e %9d%s" % (
                row["engine"], row["config"], row["status"], row["impacts"],
                ms(row["wall_median"]), ms(row["wall_min"]), ms(row["cpu_median"]),
                row["max_impact_time_error"],
                row["impacts_compared"],
                "" if row["first_contact_mismatch"] is None
                else "  (contact differs from the reference at impact %d)"
                % row["first_contact_mismatch"]))
            accurate = row["status"] == "finished" and row is not rows[2]
            if accurate and abs(row["first_impact"] - reference[0][0]) > 1e-6:
                print("   warning: first impact at %.9g s, the reference says %.9g s: the scene "
                      "and this script disagree" % (row["first_impact"], reference[0][0]))
        s = report["scenes"][scene]
        matched = ("%.2f" % s["ratio_siconos_matched_tol"] if rows[2]["finished_runs"]
                   else "n/a, Siconos stopped: " + rows[2]["message"].strip())
        print("wall-time ratio Siconos/Saltus (medians): %.2f (LSODAR default tol), %s "
              "(same rtol/atol); CPU-time ratio %.2f (LSODAR default tol)"
              % (s["ratio_siconos_default_tol"], matched, s["cpu_ratio_siconos_default_tol"]))
        d = s["siconos_default_tol_ed"]
        print("Siconos with its default TOL_ED (≈2.2e-12), default tol: %s, t reached %s, "
              "%s impacts%s" % (d["status"], d.get("t_reached") or "?", d.get("impacts") or "?",
                                (" — " + d["message"]) if d.get("message") else ""))
        if any(ev[0] >= t_inf for ev in impacts_of[0]) and any(
                ev[0] >= t_inf for ev in impacts_of[1]):
            print("after t∞: Saltus and Siconos (default tol) agree on the contacts of %d impacts, "
                  "largest time difference %.2e s" % (n_after, worst_after))

        wp = whole_process(saltus_cli, siconos, path, tmp, args)
        report["scenes"][scene]["whole_process"] = wp
        print("whole process (%d alternated runs, medians): `%s` %s CPU (%s wall); `%s` %s CPU "
              "(%s wall); Siconos / Saltus %.2f CPU, %.2f wall"
              % (args.process_repetitions, wp["saltus"]["command"], ms(wp["saltus"]["cpu_median"]),
                 ms(wp["saltus"]["wall_median"]), wp["siconos"]["command"],
                 ms(wp["siconos"]["cpu_median"]), ms(wp["siconos"]["wall_median"]),
                 wp["cpu_ratio"], wp["wall_ratio"]))

        if args.sweep:
            report["scenes"][scene]["sweep"] = sweep(saltus, siconos, path, scene, reference,
                                                     t_inf, tmp, args)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    print("\n(event logs of the first repetition in %s)" % tmp)


if __name__ == "__main__":
    main()
