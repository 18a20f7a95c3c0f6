#!/usr/bin/python3
"""Log-log slopes of the cost of one event (bench/island_event_cost.cc) against the size.

Usage: island_cost_fit.py BENCH_JSON [--min-size 16]
       island_cost_fit.py --run build/bench/island_event_cost [--repetitions 3] [--min-size 16]

BENCH_JSON is the output of `island_event_cost --benchmark_format=json` (with repetitions, the
medians are used). For each program (BM_Event_BallBesideLayer/N: N settled spheres outside the
ball's island; BM_Event_BallOnLayer/k: an island of M = k² spheres plus the ball) the table lists
the size, the counters per event (wall µs of the whole run per event, µs per step, steps and
events per run, µs of impact and contact problems per event), and the least-squares slope of
log(cost) against log(size) over sizes ≥ --min-size (size: N, or M + 1 bodies in the island).
A slope near 0 is a cost that does not depend on the size, 1 a cost proportional to it.
Only /usr/bin/python3.
"""
import argparse
import json
import math
import subprocess


def slope(points):
    """Least-squares slope of log y against log x."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else float("nan")


def rows_of(report):
    """(program, size, counters) per benchmark: medians when aggregates are present."""
    benches = report["benchmarks"]
    if any(b.get("aggregate_name") == "median" for b in benches):
        benches = [b for b in benches if b.get("aggregate_name") == "median"]
    rows = []
    for b in benches:
        name = b.get("run_name", b["name"])
        program, _, arg = name.partition("/")
        arg = int(arg.split("/")[0])
        size = arg if program.endswith("BesideLayer") else arg * arg + 1
        rows.append((program, size, b))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="?")
    p.add_argument("--run", help="island_event_cost executable to run")
    p.add_argument("--repetitions", type=int, default=3)
    p.add_argument("--min-size", type=int, default=16)
    args = p.parse_args()
    if args.run:
        out = subprocess.run([args.run, "--benchmark_format=json",
                              f"--benchmark_repetitions={args.repetitions}"],
                             check=True, capture_output=True, text=True).stdout
        report = json.loads(out)
    else:
        with open(args.json) as f:
            report = json.load(f)
    rows = rows_of(report)
    print("| program | size | µs per event | µs per step | steps per run | events per run "
          "| contact-problem µs per event |")
    print("|---|---|---|---|---|---|---|")
    for program, size, b in rows:
        ev = b["events"]
        print(f"| {program} | {size} | {b['us_per_event']:.4g} | {b['us_per_step']:.4g} "
              f"| {b['steps']:.4g} | {ev:.4g} | {b['lcp_us'] / ev:.4g} |")
    print()
    print(f"log-log slopes over sizes ≥ {args.min_size}:")
    for program in sorted({r[0] for r in rows}):
        pts = [(s, b) for prog, s, b in rows if prog == program and s >= args.min_size]
        if len(pts) < 2:
            continue
        per_event = slope([(s, b["us_per_event"]) for s, b in pts])
        per_step = slope([(s, b["us_per_step"]) for s, b in pts])
        lcp = slope([(s, b["lcp_us"] / b["events"]) for s, b in pts])
        print(f"  {program}: per event {per_event:.2f}, per step {per_step:.2f}, "
              f"contact problems per event {lcp:.2f}")


if __name__ == "__main__":
    main()
