#!/usr/bin/env python3
"""Growth exponent of the cost per step of bench/n_chain_scaling.cc.

Usage: n_chain_scaling --benchmark_format=json > out.json; n_chain_fit.py out.json
Fits log(time) = a + p log(N) by least squares over N >= 32 for each benchmark and mode, and
prints p with the crossover N where the sparse time first drops below the dense one.
"""
import json
import math
import sys
from collections import defaultdict


def fit(points):
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    k = len(xs)
    mx, my = sum(xs) / k, sum(ys) / k
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def main(path):
    data = json.load(open(path))
    series = defaultdict(dict)
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        name, args = b["name"].split("/", 1)
        fields = dict(a.split(":") for a in args.split("/") if ":" in a)
        mode = "sparse" if fields["sparse"] == "1" else "dense"
        series[(name, mode)][int(fields["N"])] = b["cpu_time"]  # CPU: the machine is shared
    for (name, mode), times in sorted(series.items()):
        big = sorted((n, t) for n, t in times.items() if n >= 32)
        table = " ".join(f"{n}:{t:.4g}" for n, t in sorted(times.items()))
        p = fit(big) if len(big) >= 2 else float("nan")
        print(f"{name:14s} {mode:6s} exponent(N>=32) = {p:.3f}   us per call: {table}")
    for name in sorted({n for n, _ in series}):
        dense, sparse = series.get((name, "dense"), {}), series.get((name, "sparse"), {})
        cross = [n for n in sorted(dense) if n in sparse and sparse[n] < dense[n]]
        print(f"{name:14s} sparse faster than dense from N = {cross[0] if cross else 'none'}")


if __name__ == "__main__":
    main(sys.argv[1])
