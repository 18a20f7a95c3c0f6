#!/usr/bin/python3
"""How far generated sphere piles get, and how fast, for several configurations side by side.

Usage: pile_robustness.py --config LABEL=SALTUS[:RUN ARGS] [--config ...] [--generator SALTUS]
                          [--n 50,60,100] [--seeds none,1,2] [--t-end 2] [--timeout 600]
                          [--json FILE]

For each N and seed (`none`: `saltus generate sphere_pile --n N` without --seed, the historical
pile; a number S: `--seed S`, positions and velocities jittered from S), the scene is generated
once and every configuration runs it in turn (interleaved, so that a change in the load of the
shared machine hits all alike): `SALTUS run SCENE --t-end T --event-rows off [RUN ARGS]`.
A configuration is a label, a saltus executable and extra `run` arguments separated by spaces,
e.g. `before=/tmp/saltus_main`, `after=build/tools/saltus`,
`mj=build/tools/saltus:--integrator moreau_jean --step 1e-3`.
Reported per run (summary.json): status, t reached, the run's wall time, the CPU time of the
whole process (user + system; set-up included), events (impacts, total), largest LCP and the
smallest gap; a run killed by --timeout is reported as such, with the time of the last row of
its trajectory.csv as a lower bound of how far it got.
Only /usr/bin/python3.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def run(saltus, extra, scene, out, t_end, timeout):
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        proc = subprocess.run([saltus, "run", scene, "--t-end", str(t_end), "--event-rows", "off",
                               "--out", out] + extra, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        # How far it got: the last row of the streamed trajectory.csv (output grid 0.01 s).
        t_last = None
        try:
            with open(os.path.join(out, "trajectory.csv"), "rb") as f:
                rows = f.read().splitlines()
            t_last = float(rows[-1].split(b",")[0]) if len(rows) > 1 else None
        except (OSError, ValueError):
            pass
        return {"status": f"killed after {timeout:g} s", "t_last_output": t_last}
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
    except OSError:
        return {"status": f"exit {proc.returncode}: {proc.stderr.strip()[:160]}"}
    return {
        "status": s["status"],
        "message": s["message"][:160],
        "t_reached": s["t_reached"],
        "wall": s["wall_seconds"],
        "process_wall": time.monotonic() - start,
        "cpu": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
        "impacts": s["events"]["impact"],
        "events": s["events"]["total"],
        "largest_lcp": s["event_loop_work"]["largest_lcp"],
        "min_gap": s["min_gap_after_projection"],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", action="append", required=True, help="LABEL=SALTUS[:RUN ARGS]")
    p.add_argument("--generator", help="saltus executable that generates the scenes (one that "
                   "knows --seed; default: the first configuration's)")
    p.add_argument("--n", default="50,60,100")
    p.add_argument("--seeds", default="none,1,2")
    p.add_argument("--t-end", type=float, default=2.0)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--json")
    args = p.parse_args()
    configs = []
    for c in args.config:
        label, _, rest = c.partition("=")
        path, _, extra = rest.partition(":")
        configs.append((label, path, extra.split()))
    rows = []
    with tempfile.TemporaryDirectory(prefix="saltus_piles_") as work:
        for n in [int(x) for x in args.n.split(",")]:
            for seed in args.seeds.split(","):
                scene = os.path.join(work, f"pile_{n}_{seed}.yaml")
                gen = [args.generator or configs[0][1], "generate", "sphere_pile", "--n", str(n),
                       "--out", scene]
                if seed != "none":
                    gen += ["--seed", seed]
                subprocess.run(gen, check=True)
                for label, path, extra in configs:
                    out = os.path.join(work, f"out_{n}_{seed}_{label}")
                    r = run(path, extra, scene, out, args.t_end, args.timeout)
                    r.update({"n": n, "seed": seed, "config": label})
                    rows.append(r)
                    print(json.dumps(r), file=sys.stderr, flush=True)
    print(f"sphere piles to t_end = {args.t_end:g} s (saltus run --event-rows off)")
    print("| N | seed | config | status | t reached (s) | run wall (s) | process CPU (s) "
          "| impacts | events | largest LCP | min gap (m) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "wall" not in r:
            t = r.get("t_last_output")
            reached = f"≥ {t:.4g}" if t is not None else ""
            print(f"| {r['n']} | {r['seed']} | {r['config']} | {r['status']} | {reached} |"
                  + " |" * 6)
            continue
        gap = "—" if r["min_gap"] is None else f"{r['min_gap']:.2g}"  # null: no contact closed
        print(f"| {r['n']} | {r['seed']} | {r['config']} | {r['status']} | {r['t_reached']:.4g} "
              f"| {r['wall']:.3g} | {r['cpu']:.3g} | {r['impacts']} | {r['events']} "
              f"| {r['largest_lcp']} | {gap} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
