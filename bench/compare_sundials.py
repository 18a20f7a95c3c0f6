#!/usr/bin/python3
"""Andrews' squeezer: Saltus's integrators against SUNDIALS (CVODE, IDA) at equal error.

Runs bench/andrews_sundials once (every solver and tolerance in one process, interleaved; see its
header for the solvers, the error and the CPU time) and, for each target error (default 1e-4,
1e-6, 1e-8), picks each solver's cheapest run (lowest CPU time over the repetitions) whose error
of the seven angles at t = 0.03 is at most the target; a Saltus run must also hold the position
constraints, max |g| at t = 0.03 ≤ --g-bound (issue 19 §3: 1e-10; Saltus projects after every
step whose violation exceeds --projection-tol, default 1e-10). SUNDIALS does not project and gets
no such condition. Prints the sweep and a Markdown table: CPU time of each solver's cheapest run,
the fastest Saltus and the fastest SUNDIALS configuration, their ratio (of the minima, and of the
medians of the same two runs), and max |g| of the chosen runs (issue 19 §3 asks Saltus ≤ 0.5 ×
SUNDIALS with |g| ≤ 1e-10). Run it under the build lock for figures one reports.

Usage: bench/compare_sundials.py [--build-dir build-bench] [--repeats 7]
                                 [--targets 1e-4,1e-6,1e-8] [--saltus dopri5,dop853,hem5,phem56]
                                 [--projection-tol 1e-10] [--g-bound 1e-10]
Only /usr/bin/python3. OPENBLAS_NUM_THREADS=1 unless set.
"""

import argparse
import csv
import io
import os
import subprocess
import sys

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLS = "1e-2,3e-3,1e-3,3e-4,1e-4,3e-5,1e-5,3e-6,1e-6,3e-7,1e-7,3e-8,1e-8,3e-9,1e-9,3e-10,1e-10,1e-11,1e-12"


def sweep(args):
    exe = os.path.join(args.build_dir, "bench", "andrews_sundials")
    if not os.access(exe, os.X_OK):
        sys.exit(f"compare_sundials: {exe} not found (build the target andrews_sundials with "
                 "-DSALTUS_BUILD_BENCHMARKS=ON after scripts/install-bench-deps.sh)")
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    cmd = [exe, "--repeats", str(args.repeats), "--tols", TOLS, "--saltus", args.saltus,
           "--projection-tol", str(args.projection_tol)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        sys.exit(f"compare_sundials: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr}")
    return list(csv.DictReader(io.StringIO(proc.stdout))), proc.stdout


def cheapest(rows, solver, target, g_bound):
    """The run of `solver` with the lowest CPU time at error <= target (Saltus: and |g| bound)."""
    ok = [r for r in rows if r["solver"] == solver and r["ok"] == "1"
          and float(r["error"]) <= target
          and (not solver.startswith("saltus_") or float(r["max_g"]) <= g_bound)]
    return min(ok, key=lambda r: float(r["cpu_ms"]), default=None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default=os.path.join(SOURCE_DIR, "build-bench"))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--targets", default="1e-4,1e-6,1e-8")
    ap.add_argument("--saltus", default="dopri5,dop853,hem5,phem56")
    ap.add_argument("--projection-tol", type=float, default=1e-10)
    ap.add_argument("--g-bound", type=float, default=1e-10)
    args = ap.parse_args()
    rows, raw = sweep(args)
    print(raw)
    solvers = list(dict.fromkeys(r["solver"] for r in rows))
    print("| error ≤ | " + " | ".join(solvers) +
          " | fastest Saltus / fastest SUNDIALS (min; median) | max \\|g\\| (Saltus, SUNDIALS) |")
    print("|---" * (len(solvers) + 3) + "|")
    for target in (float(t) for t in args.targets.split(",")):
        picks = {s: cheapest(rows, s, target, args.g_bound) for s in solvers}
        cells = [f"{float(p['cpu_ms']):.2f} ms (tol {p['tol']}, {p['steps']} steps)" if p else "—"
                 for p in picks.values()]
        best = {}
        for side in ("saltus", "sundials"):
            cands = [p for s, p in picks.items()
                     if p and s.startswith("saltus_") == (side == "saltus")]
            best[side] = min(cands, key=lambda p: float(p["cpu_ms"]), default=None)
        ratio = (f"{float(best['saltus']['cpu_ms']) / float(best['sundials']['cpu_ms']):.2f}; "
                 f"{float(best['saltus']['median_ms']) / float(best['sundials']['median_ms']):.2f} "
                 f"({best['saltus']['solver']} / {best['sundials']['solver']})"
                 if best["saltus"] and best["sundials"] else "—")
        drift = ", ".join(f"{float(best[s]['max_g']):.1e}" if best[s] else "—"
                          for s in ("saltus", "sundials"))
        print(f"| {target:.0e} | " + " | ".join(cells) + f" | {ratio} | {drift} |")


if __name__ == "__main__":
    main()
