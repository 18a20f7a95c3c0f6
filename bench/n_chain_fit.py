#!/usr/bin/env python3
"""Growth exponent of the cost per step of bench/n_chain_scaling.cc.

Usage: n_chain_scaling --benchmark_format=json > out.json; n_chain_fit.py out.json [more.json ...]
With several files (repeated runs) the median CPU time of each point is used. Fits
log(time) = a + p log(N) by least squares over N >= 32 and over all N for each benchmark and mode,
and prints p with the crossover N where the sparse time first drops below the dense one.
"""
import json
import math
import statistics
import sys
from collections import defaultdict


def fit(points):
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    k = len(xs)
    mx, my = sum(xs) / k, sum(ys) / k
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def main(paths):
    samples = defaultdict(lambda: defaultdict(list))
    for path in paths:
        for b in json.load(open(path))["benchmarks"]:
            if b.get("run_type") == "aggregate" or b.get("error_occurred"):
                continue
            name, args = b["name"].split("/", 1)
            fields = dict(a.split(":") for a in args.split("/") if ":" in a)
            mode = "sparse" if fields["sparse"] == "1" else "dense"
            # CPU time: the machine is shared.
            samples[(name, mode)][int(fields["N"])].append(b["cpu_time"])
    series = {key: {n: statistics.median(ts) for n, ts in points.items()}
              for key, points in samples.items()}
    for (name, mode), times in sorted(series.items()):
        big = sorted((n, t) for n, t in times.items() if n >= 32)
        every = sorted(times.items())
        table = " ".join(f"{n}:{t:.4g}" for n, t in every)
        p = fit(big) if len(big) >= 2 else float("nan")
        p_all = fit(every) if len(every) >= 2 else float("nan")
        print(f"{name:14s} {mode:6s} exponent(N>=32) = {p:.3f} (all N {p_all:.3f})"
              f"   us per call: {table}")
    for name in sorted({n for n, _ in series}):
        dense, sparse = series.get((name, "dense"), {}), series.get((name, "sparse"), {})
        cross = [n for n in sorted(dense) if n in sparse and sparse[n] < dense[n]]
        print(f"{name:14s} sparse faster than dense from N = {cross[0] if cross else 'none'}")


if __name__ == "__main__":
    main(sys.argv[1:])
