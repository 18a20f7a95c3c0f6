#!/usr/bin/python3
"""Python vs. C++: whole runs of the same scenes through the Python module `saltus` and through
the C++ facade (saltus/saltus.h), side by side (issue 9, item 5; target ratio <= 1.2).

Both halves do the same work per run: the model is built once from the scene file, then
    sim = Simulation(model, model.options); trajectory = sim.run(model.t_end)
(C++: bench/python_vs_cpp.cc, a Google Benchmark program run here as a subprocess). Reported per
scene: the best mean time per run over the repetitions on each side and their ratio; then the
overhead of a force callable returning zeros (Python callable vs. C++ std::function), which is
called at every stage of the integrator.

Usage (from the source tree, with a build configured with -DSALTUS_BUILD_BENCHMARKS=ON):
    cmake --build build --target saltus_python python_vs_cpp
    PYTHONPATH=build/python /usr/bin/python3 bench/python_vs_cpp.py --build build
Options: --repetitions N (default 5), --min-time S (per repetition, default 0.5),
         scenes as positional arguments (default: the bouncing ball and the planar N-chain).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
DEFAULT_SCENES = [os.path.join(SOURCE, "examples", "bouncing_ball.yaml"),
                  os.path.join(SOURCE, "examples", "sets", "scenes", "n_chain.yaml")]


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def time_python(saltus, path, repetitions, min_time, zero_force):
    """Best over repetitions of the mean wall time (s) of one whole run."""
    import numpy as np
    model = saltus.Model.from_scene_file(path)
    opts, t_end = model.options, model.t_end
    zeros = np.zeros(model.nv)

    def one_run():
        sim = saltus.Simulation(model, opts)
        if zero_force:
            sim.set_force(lambda t, q, v: zeros)
        traj, result = sim.run(t_end)
        if not result.ok:
            raise RuntimeError(f"{path}: run stopped at t = {result.t}: {result.message}")
        return traj

    one_run()  # warm-up
    best = float("inf")
    for _ in range(repetitions):
        n, start = 0, time.perf_counter()
        while True:
            one_run()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        best = min(best, elapsed / n)
    return best


def time_cpp(binary, paths, repetitions, min_time):
    """{benchmark name: best mean wall time (s) per run} from the Google Benchmark program."""
    out = subprocess.run(
        [binary, *paths, "--benchmark_format=json", f"--benchmark_min_time={min_time}",
         f"--benchmark_repetitions={repetitions}"],
        check=True, capture_output=True, text=True).stdout
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    best = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        t = b["real_time"] * scale[b["time_unit"]]
        best[name] = min(best.get(name, float("inf")), t)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenes", nargs="*", default=DEFAULT_SCENES)
    parser.add_argument("--build", default=os.path.join(SOURCE, "build"))
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.5)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import saltus

    binary = os.path.join(args.build, "bench", "python_vs_cpp")
    cpp = time_cpp(binary, args.scenes, args.repetitions, args.min_time)
    print(f"saltus {saltus.__version__}; best of {args.repetitions} repetitions "
          f"(each >= {args.min_time} s) of the mean time per whole run")
    print(f"{'scene':<16} {'C++ (ms)':>10} {'Python (ms)':>12} {'ratio':>7}   "
          f"{'C++ +f (ms)':>12} {'Py +f (ms)':>11} {'callable overhead':>18}")
    worst = 0.0
    for path in args.scenes:
        name = stem(path)
        c = cpp[f"BM_FacadeRun/{name}"]
        cf = cpp[f"BM_FacadeRunZeroForce/{name}"]
        p = time_python(saltus, path, args.repetitions, args.min_time, False)
        pf = time_python(saltus, path, args.repetitions, args.min_time, True)
        ratio = p / c
        worst = max(worst, ratio)
        print(f"{name:<16} {1e3 * c:>10.3f} {1e3 * p:>12.3f} {ratio:>6.2f}x   "
              f"{1e3 * cf:>12.3f} {1e3 * pf:>11.3f} {pf / cf:>17.2f}x")
    print(f"worst Python/C++ ratio: {worst:.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
