#!/usr/bin/python3
"""BDF per unit step: which start steps let a run get going (issue 19 section 2).

Runs `saltus run` with `--integrator bdf --formulation ggl --error-control per_unit_step` on the
three `joints` cells that stop on main (Andrews' squeezer at rtol 1e-8, the double four-bar at
1e-8 over 20 s, the spinning top at 1e-6) with the start step set by the scene key
`simulation.h_init` (0: the automatic guess) and prints, per run, the status, the time reached and
the accepted / rejected steps from summary.json (docs/implicit.md, "BDF per unit step: the
start").

Usage:
  /usr/bin/python3 bench/bdf_start_window.py [--saltus PATH] [--out DIR]
      [--h-init 0,1e-11,1e-10,...] [--time-limit S]
"""
import argparse
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (scene, rtol = atol, t_end override or None)
CASES = [
    ("examples/sets/scenes/andrews.yaml", 1e-8, None),
    ("examples/sets/scenes/double_four_bar.yaml", 1e-8, 20.0),
    ("examples/spatial/spinning_top.yaml", 1e-6, None),
]


def scene_copy(path, h_init, out_dir):
    """The scene with `h_init` under `simulation:` (none for 0), written to out_dir."""
    text = open(os.path.join(ROOT, path)).read()
    if h_init > 0:
        text = text.replace("simulation:\n", "simulation:\n  h_init: %r\n" % h_init, 1)
    copy = os.path.join(out_dir, "scene.yaml")
    with open(copy, "w") as f:
        f.write(text)
    return copy


def run(saltus, path, rtol, t_end, h_init, out_root, limit):
    name = "%s_%g" % (os.path.splitext(os.path.basename(path))[0], h_init)
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    cmd = [saltus, "run", scene_copy(path, h_init, out), "--integrator", "bdf", "--formulation",
           "ggl", "--rtol", repr(rtol), "--atol", repr(rtol), "--error-control", "per_unit_step",
           "--out", out, "--event-rows", "off"]
    if t_end is not None:
        cmd += ["--t-end", repr(t_end)]
    try:
        subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return name, rtol, h_init, "timed_out", None, None, None
    summary = json.load(open(os.path.join(out, "summary.json")))
    return (name, rtol, h_init, summary["status"], summary["t_reached"],
            summary["accepted_steps"], summary["rejected_steps"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saltus", default=os.path.join(ROOT, "build", "tools", "saltus"))
    parser.add_argument("--out", default="/tmp/bdf_start_window")
    parser.add_argument("--h-init", default="0,1e-11,1e-10,1e-9,1e-8,1e-7,1e-6")
    parser.add_argument("--time-limit", type=float, default=120.0)
    args = parser.parse_args()
    print("| run | rtol | h_init | status | t reached | accepted | rejected |")
    print("|---|---|---|---|---|---|---|")
    for path, rtol, t_end in CASES:
        for h_init in (float(h) for h in args.h_init.split(",")):
            row = run(args.saltus, path, rtol, t_end, h_init, args.out, args.time_limit)
            print("| " + " | ".join("—" if x is None else str(x) for x in row) + " |", flush=True)


if __name__ == "__main__":
    main()
