#!/usr/bin/env python3
"""Step sizes and wall time of explicit against implicit schemes on the stiff scenes (issue 5 §4).

Runs `saltus run` once per (scene, integrator, tolerance), side by side in one invocation, with
rtol = atol = TOL, and prints Markdown tables of accepted and rejected steps, mean step size
(t_end / accepted steps) and wall time (from each run's summary.json; the smallest of --repeat
runs), then the ratios of DOPRI5's steps and wall time to every other scheme's. This is the pattern of Haddouni et al. (2017), Table 4: on
stiff mechanisms the implicit schemes take steps 10-100x larger than the explicit one, whose step
is bounded by stability (|h lambda| <= ~3.3 for DOPRI5) rather than by accuracy.

`--group flexible` runs the flexible-body scenes of examples/flexible/ instead (issue 22 §2, §5:
the eccentrically rotating beam of Table 4 with DOPRI5, HEM5 and generalized-alpha GGL at
rtol 1e-2, 1e-4, 1e-6, and the spin-up; figures in docs/flexible-bodies.md).

Usage (from the repository root, after building the `saltus` CLI):
  /usr/bin/python3 bench/stiff_steps.py --saltus build/tools/saltus [--tols 1e-4,1e-6]
      [--repeat 1] [--only SCENE] [--group stiff|flexible] [--out FILE.md]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (label, scene file, t_end or None for the scene's own)
SCENES = [
    ("stiff_torsion_chain", "examples/sets/scenes/stiff_torsion_chain.yaml", None),
    ("stiff_chain", "examples/sets/scenes/stiff_chain.yaml", None),
    ("stiff_double_pendulum", "examples/sets/scenes/stiff_double_pendulum.yaml", None),
    ("flyball_governor (2 s)", "examples/spatial/flyball_governor.yaml", 2.0),
]

# The flexible group: (label, scene file, t_end or None).
FLEXIBLE_SCENES = [
    ("rotating_beam (Table 4, 0.5 s)", "examples/flexible/rotating_beam.yaml", 0.5),
    ("spin_up (Kane 1987)", "examples/flexible/spin_up.yaml", None),
    ("slider_crank (flexible rod)", "examples/flexible/slider_crank.yaml", None),
]
FLEXIBLE_SCHEMES = [
    ("DOPRI5", "dopri5", "index1"),
    ("HEM5", "hem5", "index2"),
    ("g-α GGL", "generalized_alpha", "ggl"),
    ("BDF", "bdf", "ggl"),
]

# (label, integrator, formulation)
SCHEMES = [
    ("DOPRI5", "dopri5", "index1"),
    ("g-α index3", "generalized_alpha", "index3"),
    ("g-α index2", "generalized_alpha", "index2"),
    ("g-α GGL", "generalized_alpha", "ggl"),
    ("BDF", "bdf", "ggl"),
    ("half-implicit", "half_implicit", "index3"),
]


def run(saltus, scene, t_end, integrator, formulation, tol, timeout, workdir):
    out = tempfile.mkdtemp(dir=workdir)
    cmd = [saltus, "run", os.path.join(ROOT, scene), "--integrator", integrator,
           "--formulation", formulation, "--rtol", repr(tol), "--atol", repr(tol), "--out", out]
    if t_end is not None:
        cmd += ["--t-end", repr(t_end)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout (%g s)" % timeout}
    path = os.path.join(out, "summary.json")
    if not os.path.exists(path):
        return {"status": "exit %d: %s" % (proc.returncode, proc.stderr.strip()[-200:])}
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--saltus", default=os.path.join(ROOT, "build", "tools", "saltus"))
    ap.add_argument("--tols", default="1e-4,1e-6")
    ap.add_argument("--repeat", type=int, default=1, help="wall time: smallest of N runs")
    ap.add_argument("--timeout", type=float, default=120.0, help="per run, seconds")
    ap.add_argument("--out", help="also write the tables to this Markdown file")
    ap.add_argument("--only", help="run only the scenes whose label contains this")
    ap.add_argument("--group", choices=["stiff", "flexible"], default="stiff")
    args = ap.parse_args()
    if args.group == "flexible":
        SCENES[:] = FLEXIBLE_SCENES
        SCHEMES[:] = FLEXIBLE_SCHEMES
    if args.only:
        SCENES[:] = [sc for sc in SCENES if args.only in sc[0]]
    tols = [float(x) for x in args.tols.split(",")]

    lines = []
    results = {}  # (scene label, tol) -> [(scheme label, summary)]
    with tempfile.TemporaryDirectory() as work:
        for label, scene, t_end in SCENES:
            for tol in tols:
                rows = []
                for name, integrator, formulation in SCHEMES:
                    best = None
                    for _ in range(max(1, args.repeat)):
                        s = run(args.saltus, scene, t_end, integrator, formulation, tol,
                                args.timeout, work)
                        if best is None or ("wall_seconds" in s and
                                            s["wall_seconds"] < best.get("wall_seconds", 1e300)):
                            best = s
                    rows.append((name, best))
                    print("%s tol %g %s: %s" % (label, tol, name, best.get("status")),
                          file=sys.stderr)
                results[(label, tol)] = rows

    def ok(s):
        return s.get("status") == "finished"

    # Compact tables, one per tolerance: steps (rejected), mean step, wall time per scheme.
    for tol in tols:
        lines.append("")
        lines.append("rtol = atol = %g: accepted steps (rejected) / mean step h (s) / wall (s)" % tol)
        lines.append("")
        lines.append("| scene | " + " | ".join(n for n, _, _ in SCHEMES) + " |")
        lines.append("|---" * (len(SCHEMES) + 1) + "|")
        for label, _, _ in SCENES:
            cells = []
            for _, s in results[(label, tol)]:
                if not ok(s):
                    cells.append(s.get("status", "?"))
                    continue
                n = s["accepted_steps"]
                cells.append("%d (%d) / %.2g / %.3g" % (n, s["rejected_steps"],
                                                        s["t_reached"] / n, s["wall_seconds"]))
            lines.append("| %s | %s |" % (label, " | ".join(cells)))
    # Ratios to DOPRI5.
    lines.append("")
    lines.append("DOPRI5 steps / steps (DOPRI5 wall / wall)")
    lines.append("")
    lines.append("| scene | rtol | " + " | ".join(n for n, _, _ in SCHEMES[1:]) + " |")
    lines.append("|---|---" + "|---" * (len(SCHEMES) - 1) + "|")
    for label, _, _ in SCENES:
        for tol in tols:
            rows = results[(label, tol)]
            ref = rows[0][1]
            cells = []
            for _, s in rows[1:]:
                if ok(ref) and ok(s):
                    cells.append("%.1f (%.1f)" % (ref["accepted_steps"] / s["accepted_steps"],
                                                  ref["wall_seconds"] / s["wall_seconds"]))
                else:
                    cells.append("—")
            lines.append("| %s | %g | %s |" % (label, tol, " | ".join(cells)))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
