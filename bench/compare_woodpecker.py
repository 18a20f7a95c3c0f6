#!/usr/bin/python3
"""Saltus (event-driven) against Siconos 4.4 (Moreau–Jean time-stepping) on the woodpecker toy.

Both drivers run the linearized model of Leine, Glocker & van Campen (tests/events/woodpecker_model.h;
Siconos' example Mechanics/Woodpecker) for --t-end seconds (default 1 s):
  bench/woodpecker_saltus   the event loop (DOPRI5) at the reference test's tolerances
                            (rtol 1e-9, atol 1e-11) and at rtol 1e-6, atol 1e-8;
  bench/woodpecker_siconos  MoreauJeanOSI θ = 1/2 with the reference's step h = 2e-5 s, and with
                            the coarser steps --coarse-steps (the coarsest one whose trajectory
                            stays within the tolerances below of the reference is timed too);
and bench/saltus_event_driven on the exact-geometry scene examples/friction/woodpecker.yaml, for
information (a different model: its cycle is shorter; docs/friction.md).

Reference: Siconos' run at h = 2e-5 s, checked first against the published Woodpecker.ref
(tests/events/data/siconos_woodpecker.csv: every 50th row, 0–0.299 s). Deviations are the largest
|Δy|, |Δφ_M|, |Δφ_S| on the 1e-3 s grid, over the published interval [0, 0.299] s and over the
whole run. "Within tolerance" means within the reference test's bounds over [0, 0.299] s
(4e-4 m, 1.7e-2 rad, 1e-2 rad: tests/events/woodpecker_reference_test.cc) — the agreement the
event loop is required to have.

Timing: the configurations run --repetitions times, interleaved (one of each in turn), and the
script prints the median CPU time (std::clock inside each driver: model construction,
initialization and run; not reading or writing files) and the median wall time, and the ratio of
each to Saltus' at the test's tolerances. Run it under the build lock for figures one reports.

Usage: bench/compare_woodpecker.py [--build-dir build] [--repetitions 7] [--t-end 1]
                                   [--coarse-steps 5e-5,1e-4,2e-4,5e-4,1e-3] [--json FILE]
Only /usr/bin/python3 and numpy. OPENBLAS_NUM_THREADS=1 unless set.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ)
ENV.setdefault("OPENBLAS_NUM_THREADS", "1")
PUBLISHED = os.path.join(SOURCE_DIR, "tests", "events", "data", "siconos_woodpecker.csv")
SCENE = os.path.join(SOURCE_DIR, "examples", "friction", "woodpecker.yaml")
# tests/events/woodpecker_reference_test.cc: y (m), φ_M (rad), φ_S (rad) over [0, 0.299] s.
TOLERANCE = np.array([4e-4, 1.7e-2, 1e-2])
PUBLISHED_END = 0.299


def run(command):
    proc = subprocess.run(command, capture_output=True, text=True, env=ENV, check=False)
    values = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition("=")
        values[key] = value
    values["exit_code"] = proc.returncode
    if proc.returncode != 0:
        values.setdefault("message", proc.stderr.strip())
    return values


def read_trajectory(path):
    """Rows t, y, ẏ, φ_M, φ̇_M, φ_S, φ̇_S (leading '#' lines and the header skipped)."""
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")][1:]
    return np.loadtxt(lines, delimiter=",", ndmin=2)


def deviation(a, b, t_max):
    """Largest |Δy|, |Δφ_M|, |Δφ_S| on the common 1e-3 s grid up to t_max."""
    ka = {int(round(t * 1e3)): i for i, t in enumerate(a[:, 0]) if abs(t * 1e3 - round(t * 1e3)) < 1e-6}
    worst = np.zeros(3)
    compared = 0
    for j, t in enumerate(b[:, 0]):
        k = int(round(t * 1e3))
        if t > t_max + 1e-9 or abs(t * 1e3 - k) > 1e-6 or k not in ka:
            continue
        i = ka[k]
        worst = np.maximum(worst, np.abs(a[i, [1, 3, 5]] - b[j, [1, 3, 5]]))
        compared += 1
    return worst, compared


def fmt_dev(d):
    return "%.1e m, %.1e, %.1e rad" % tuple(d)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(SOURCE_DIR, "build"))
    parser.add_argument("--repetitions", type=int, default=7)
    parser.add_argument("--t-end", type=float, default=1.0)
    parser.add_argument("--coarse-steps", default="5e-5,1e-4,2e-4,5e-4,1e-3")
    parser.add_argument("--json")
    args = parser.parse_args()
    bench = os.path.join(args.build_dir, "bench")
    saltus = os.path.join(bench, "woodpecker_saltus")
    siconos = os.path.join(bench, "woodpecker_siconos")
    scene_driver = os.path.join(bench, "saltus_event_driven")
    for exe in (saltus, siconos, scene_driver):
        if not os.access(exe, os.X_OK):
            sys.exit("compare_woodpecker: %s not built (-DSALTUS_BUILD_BENCHMARKS=ON)" % exe)
    t_end = "%.17g" % args.t_end
    tmp = tempfile.mkdtemp(prefix="woodpecker_")

    def traj(name):
        return os.path.join(tmp, name + ".csv")

    configs = {
        "saltus rtol 1e-9": [saltus, "--t-end", t_end, "--rtol", "1e-9", "--atol", "1e-11"],
        "saltus rtol 1e-6": [saltus, "--t-end", t_end, "--rtol", "1e-6", "--atol", "1e-8"],
        "siconos h 2e-5": [siconos, "--t-end", t_end, "--h", "2e-5"],
    }
    for h in args.coarse_steps.split(","):
        configs["siconos h %s" % h] = [siconos, "--t-end", t_end, "--h", h]

    # Accuracy: one run of each with its trajectory.
    results = {}
    for name, cmd in configs.items():
        path = traj(name.replace(" ", "_"))
        results[name] = run(cmd + ["--trajectory", path])
        results[name]["trajectory"] = read_trajectory(path)
        if results[name]["exit_code"] != 0:
            print("%s: %s" % (name, results[name].get("message", "")))
    reference = results["siconos h 2e-5"]["trajectory"]
    published = read_trajectory(PUBLISHED)
    pub_dev, pub_n = deviation(reference, published, PUBLISHED_END)
    print("Siconos h = 2e-5 against the published Woodpecker.ref (%d rows, 0–%.3f s): %s"
          % (pub_n, PUBLISHED_END, fmt_dev(pub_dev)))

    rows = []
    coarse_ok = None
    for name, r in results.items():
        d03, _ = deviation(r["trajectory"], reference, PUBLISHED_END)
        dall, n = deviation(r["trajectory"], reference, args.t_end)
        within = bool(np.all(d03 <= TOLERANCE))
        times = [float(x) for x in r.get("beak_impact_times", "").split(";") if x]
        period = float(np.median(np.diff(times))) if len(times) > 1 else float("nan")
        impacts = int(r.get("impacts", r.get("contact_onsets", "0")) or 0)
        rows.append(dict(name=name, status=r.get("status"), beak_impacts=len(times),
                         impacts=impacts, period=period, first_beak=times[0] if times else None,
                         dev_published=d03.tolist(), dev_all=dall.tolist(), compared=n,
                         within=within))
        if name.startswith("siconos h ") and name != "siconos h 2e-5" and within:
            coarse_ok = name  # the steps are listed from fine to coarse
    print("\nAccuracy against Siconos h = 2e-5 (max |Δy|, |Δφ_M|, |Δφ_S|):")
    print("%-18s %-9s %5s %7s %9s %9s  %-30s %-30s %s" % (
        "configuration", "status", "beak", "impacts", "1st beak", "period",
        "0–%.3f s" % PUBLISHED_END, "0–%g s" % args.t_end, "within"))
    for row in rows:
        print("%-18s %-9s %5d %7d %9.5f %9.5f  %-30s %-30s %s" % (
            row["name"], row["status"], row["beak_impacts"], row["impacts"],
            row["first_beak"] or float("nan"), row["period"], fmt_dev(row["dev_published"]),
            fmt_dev(row["dev_all"]), "yes" if row["within"] else "no"))

    # Timing: interleaved repetitions.
    timed = ["saltus rtol 1e-9", "saltus rtol 1e-6", "siconos h 2e-5"]
    if coarse_ok:
        timed.append(coarse_ok)
    timed_cmds = {name: configs[name] for name in timed}
    timed_cmds["saltus exact geometry (scene)"] = [scene_driver, SCENE, "--t-end", t_end,
                                                   "--quiet"]
    cpu = {name: [] for name in timed_cmds}
    wall = {name: [] for name in timed_cmds}
    scene_impacts = None
    for _ in range(args.repetitions):
        for name, cmd in timed_cmds.items():
            r = run(cmd)
            if r["exit_code"] == 0:
                cpu[name].append(float(r["cpu_seconds"]))
                wall[name].append(float(r["wall_seconds"]))
            if name.startswith("saltus exact"):
                scene_impacts = r.get("impacts")
    base = float(np.median(cpu["saltus rtol 1e-9"]))
    base_wall = float(np.median(wall["saltus rtol 1e-9"]))
    print("\nCPU and wall time, %g s simulated, medians of %d interleaved runs:"
          % (args.t_end, args.repetitions))
    print("%-32s %12s %12s %10s %10s" % ("configuration", "CPU median", "wall median",
                                         "CPU ratio", "wall ratio"))
    timing = {}
    for name in timed_cmds:
        c, w = float(np.median(cpu[name])), float(np.median(wall[name]))
        timing[name] = dict(cpu_median=c, wall_median=w, cpu_ratio=c / base,
                            wall_ratio=w / base_wall, runs=len(cpu[name]))
        print("%-32s %10.2f ms %10.2f ms %10.2f %10.2f" % (name, 1e3 * c, 1e3 * w, c / base,
                                                          w / base_wall))
    print("(ratios: configuration / saltus rtol 1e-9; exact-geometry scene impacts: %s)"
          % scene_impacts)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(published_deviation=pub_dev.tolist(), accuracy=rows, timing=timing,
                           coarsest_within=coarse_ok, t_end=args.t_end,
                           repetitions=args.repetitions), f, indent=1)


if __name__ == "__main__":
    main()
