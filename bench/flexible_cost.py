#!/usr/bin/env python3
"""Cost per step of the flexible slider-crank against its rigid twin (issue 22 §5).

Runs examples/flexible/slider_crank_rigid.yaml and examples/flexible/slider_crank.yaml with the
rod reduced to each of --modes modal coordinates (a copy of the scene with `modes:` replaced),
side by side in one invocation, with each --integrators scheme at rtol = --rtol (atol = rtol/1000,
the scenes' ratio), and prints a Markdown table: accepted (rejected) steps, right-hand-side
evaluations, wall time (smallest of --repeat runs, from summary.json), wall time per step and
per right-hand side, and both ratios to the rigid run of the same scheme. The rod is steel,
8 x 8 mm, 0.3 m, 6 elements (18 pinned modes available): its highest retained modes bound the
explicit schemes' steps, so the step counts grow with the modes; the cost per right-hand side
is the price of the flexible body itself (M(q) and its factorization, the Gauss-point sums).

Usage (from the repository root, after building the `saltus` CLI):
  /usr/bin/python3 bench/flexible_cost.py [--saltus build/tools/saltus] [--modes 4,10]
      [--integrators dopri5,generalized_alpha] [--rtol 1e-6] [--repeat 3] [--out FILE.md]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIGID = os.path.join(ROOT, "examples", "flexible", "slider_crank_rigid.yaml")
FLEXIBLE = os.path.join(ROOT, "examples", "flexible", "slider_crank.yaml")


def scene_with_modes(modes, workdir):
    """A copy of the flexible slider-crank whose rod keeps `modes` modes."""
    with open(FLEXIBLE) as f:
        text = f.read()
    text, count = re.subn(r"(?m)^(\s+modes:\s*)\d+", r"\g<1>%d" % modes, text)
    if count != 1:
        sys.exit("slider_crank.yaml: expected one `modes:` line, found %d" % count)
    path = os.path.join(workdir, "slider_crank_%d_modes.yaml" % modes)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(saltus, scene, integrator, rtol, repeat, workdir):
    """The summary.json of the fastest of `repeat` runs (or {'status': reason})."""
    best = None
    for _ in range(max(1, repeat)):
        out = tempfile.mkdtemp(dir=workdir)
        cmd = [saltus, "run", scene, "--integrator", integrator, "--rtol", repr(rtol),
               "--atol", repr(rtol / 1000.0), "--out", out]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        path = os.path.join(out, "summary.json")
        if not os.path.exists(path):
            return {"status": "exit %d: %s" % (proc.returncode, proc.stderr.strip()[-200:])}
        with open(path) as f:
            s = json.load(f)
        if best is None or s.get("wall_seconds", 1e300) < best.get("wall_seconds", 1e300):
            best = s
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--saltus", default=os.path.join(ROOT, "build", "tools", "saltus"))
    ap.add_argument("--modes", default="4,10")
    ap.add_argument("--integrators", default="dopri5,generalized_alpha")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", help="also write the table to this Markdown file")
    args = ap.parse_args()
    lines = ["rtol = %g, atol = rtol/1000, 0.1 s (2.4 crank turns)" % args.rtol, "",
             "| scheme | rod | steps (rejected) | RHS | wall (s) | wall/step (µs) | "
             "wall/RHS (µs) | step cost / rigid | RHS cost / rigid |",
             "|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as work:
        scenes = [("rigid", RIGID)] + [("%d modes" % m, scene_with_modes(m, work))
                                        for m in (int(x) for x in args.modes.split(","))]
        for integrator in args.integrators.split(","):
            rigid = None
            for label, scene in scenes:
                s = run(args.saltus, scene, integrator, args.rtol, args.repeat, work)
                print("%s %s: %s" % (integrator, label, s.get("status")), file=sys.stderr)
                if s.get("status") != "finished":
                    lines.append("| %s | %s | %s | | | | | | |" % (integrator, label, s["status"]))
                    continue
                steps = s["accepted_steps"] + s["rejected_steps"]
                per_step = s["wall_seconds"] / steps
                per_rhs = s["wall_seconds"] / max(1, s["rhs_evaluations"])
                if rigid is None and label == "rigid":
                    rigid = (per_step, per_rhs)
                ratio = ("%.1f | %.1f" % (per_step / rigid[0], per_rhs / rigid[1])
                         if rigid else "— | —")
                lines.append("| %s | %s | %d (%d) | %d | %.3g | %.3g | %.3g | %s |" % (
                    integrator, label, s["accepted_steps"], s["rejected_steps"],
                    s["rhs_evaluations"], s["wall_seconds"], 1e6 * per_step, 1e6 * per_rhs,
                    ratio))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
