#!/usr/bin/env python3
"""Wall time of the generated sphere pile against N, end to end through the `saltus` CLI.

Usage: pile_scaling.py SALTUS [--n 10,30,100,300,1000] [--t-end 0.15] [--timeout 900]
                       [--json out.json]

For each N: `saltus generate sphere_pile --n N`, then `saltus run --t-end T --event-rows off`
(the output grid of the scene, 0.01 s), and reads summary.json: wall time, accepted steps,
events by kind, LCP solves, t reached. The scene set-up (parsing, pair rows, assembly) is timed
separately as the process wall time minus the simulation's wall_seconds; the CPU time (user +
system) of the whole process is reported too, since on a shared machine wall time includes the
time the process waited for a core. Fits log(wall / simulated second) = a + p log(N), and the
same for the CPU time, by least squares over the runs that finished and prints p. A run that exceeds --timeout seconds is killed and reported as such (not fitted).
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time


def fit(points):
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    k = len(xs)
    mx, my = sum(xs) / k, sum(ys) / k
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def run_one(saltus, n, t_end, timeout, work):
    scene = os.path.join(work, f"pile_{n}.yaml")
    out = os.path.join(work, f"out_{n}")
    subprocess.run([saltus, "generate", "sphere_pile", "--n", str(n), "--out", scene], check=True)
    start = time.monotonic()
    cpu_start = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(
            [saltus, "run", scene, "--t-end", str(t_end), "--event-rows", "off", "--out", out],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        return {"n": n, "status": f"killed after {timeout} s"}
    total = time.monotonic() - start
    cpu_end = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_end.ru_utime - cpu_start.ru_utime) + (cpu_end.ru_stime - cpu_start.ru_stime)
    try:
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
    except OSError:
        return {"n": n, "status": f"exit {proc.returncode}: {proc.stderr.strip()[:200]}"}
    events = s["events"]
    traj = os.path.getsize(os.path.join(out, "trajectory.csv"))
    return {
        "n": n,
        "status": s["status"],
        "t_reached": s["t_reached"],
        "wall": s["wall_seconds"],
        "setup": total - s["wall_seconds"],
        "cpu": cpu,  # whole process (set-up + run), user + system: the machine is shared
        "steps": s["accepted_steps"],
        "rejected": s["rejected_steps"],
        "impacts": events["impact"],
        "events": events["total"],
        "lcp_solves": s["lcp_solves"],
        "min_gap": s["min_gap_after_projection"],
        "trajectory_mb": traj / 1e6,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("saltus", help="path of the saltus executable")
    p.add_argument("--n", default="10,30,100,300,1000")
    p.add_argument("--t-end", type=float, default=0.15)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--json", help="also write the rows to this file")
    args = p.parse_args()
    sizes = [int(x) for x in args.n.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="saltus_pile_") as work:
        for n in sizes:
            r = run_one(args.saltus, n, args.t_end, args.timeout, work)
            rows.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    print(f"sphere pile, t_end {args.t_end} s (saltus run --event-rows off)")
    print("| N | status | t reached (s) | set-up (s) | wall (s) | wall per simulated s "
          "| CPU of the process (s) | steps | rejected | impacts | events | LCP solves "
          "| min gap (m) | trajectory.csv (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    fitted, fitted_cpu = [], []
    for r in rows:
        if "wall" not in r:
            print(f"| {r['n']} | {r['status']} |" + " |" * 12)
            continue
        per_second = r["wall"] / r["t_reached"] if r["t_reached"] > 0 else float("nan")
        if r["status"] == "finished" and r["n"] >= 30:  # N = 10: too few events to time
            fitted.append((r["n"], per_second))
            fitted_cpu.append((r["n"], r["cpu"] / r["t_reached"]))
        print(f"| {r['n']} | {r['status']} | {r['t_reached']:.4g} | {r['setup']:.3g} "
              f"| {r['wall']:.3g} | {per_second:.3g} | {r['cpu']:.3g} | {r['steps']} "
              f"| {r['rejected']} | {r['impacts']} | {r['events']} | {r['lcp_solves']} "
              f"| {r['min_gap']:.2g} | {r['trajectory_mb']:.3g} |")
    if len(fitted) >= 2:
        print(f"fitted exponent against N (N = {fitted[0][0]} ... {fitted[-1][0]}): "
              f"wall per simulated second {fit(fitted):.3f}, "
              f"CPU (set-up included) per simulated second {fit(fitted_cpu):.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
