#!/usr/bin/python3
"""Slider-crank study of the half-explicit integrators (the pattern of Haddouni et al. 2017,
Fig. 4-5): for tolerances 1e-2 ... 1e-8, the average step, accepted and rejected steps, largest
position and velocity constraint violation, right-hand-side evaluations (linear stage / KKT
solves), projections, CPU time and the error at t_end, for every integrator of the table that
runs the scene (HEM5 on index 2, DOPRI5 with MDOP5 projection on index 1, and every other
entry of the table with each of its formulations, e.g. the generalized_alpha forms).

Scene: examples/slider_crank_stop.yaml (planar slider-crank in a vertical plane, crank 0.2 m,
rod 0.6 m, 2 s) WITHOUT its contact section: a smooth mechanism with bilateral joints only, as
in the paper's study. Every run goes through the `saltus` CLI (`saltus run ... --integrator NAME
--formulation F --rtol R --atol R/100`) and reads DIR/summary.json and the last row of
DIR/trajectory.csv. Violations are those the event loop records at every accepted step before
projection (summary.json: max_position_violation, max_velocity_violation). The error is
max |q(t_end) - q_ref(t_end)| over the positions, q_ref from HEM5 at rtol = 1e-12.
CPU time = the run's wall_seconds in summary.json (one run per configuration; the machine is
shared: figures below 10 ms are noise).

Usage: bench/slider_crank_study.py [--build-dir build] [--markdown FILE] [--plots DIR]
           [--only hem5,phem56,...]
Only /usr/bin/python3 (standard library); --plots needs matplotlib and writes, for HEM5, PHEM56,
DOPRI5 and the generalized-alpha forms (the integrators of the paper's figures), the PNG files
DIR/slider_crank_steps.png (average step, accepted and rejected steps against the tolerance),
DIR/slider_crank_violations.png (largest position and velocity violation, CPU time against the
tolerance) and DIR/slider_crank_work_precision.png (rhs evaluations and CPU time against the
error at t_end).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCES = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]


def smooth_scene(directory):
    """The slider-crank example without its unilateral stop, written to directory."""
    with open(os.path.join(ROOT, "examples", "slider_crank_stop.yaml")) as f:
        text = f.read()
    text = re.sub(r"\ncontacts:\n(?:[ \t#].*\n)*", "\n", text)
    text = text.replace("scene: slider_crank_stop", "scene: slider_crank")
    path = os.path.join(directory, "slider_crank.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def integrators(cli):
    """(name, formulation) for every table entry and each of its formulations, from `saltus list`
    (an entry line '  name  description' followed by '  formulations: f1, f2')."""
    out = subprocess.run([cli, "list"], capture_output=True, text=True, check=True).stdout
    result, name = [], None
    for line in out.splitlines():
        m = re.match(r"^\s+formulations:\s*(.*)$", line)
        if m and name:
            result += [(name, f.strip()) for f in m.group(1).split(",") if f.strip()]
            name = None
            continue
        m = re.match(r"^  ([A-Za-z0-9][A-Za-z0-9_\-]*)\s", line)
        if m:
            name = m.group(1)
    return result


def run(cli, scene, out, name, formulation, rtol):
    args = [cli, "run", scene, "--integrator", name, "--formulation", formulation,
            "--rtol", repr(rtol), "--atol", repr(rtol / 100), "--out", out]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "trajectory.csv")) as f:
        lines = f.read().strip().splitlines()
    header = lines[0].split(",")
    last = [float(x) for x in lines[-1].split(",")]
    positions = [last[i] for i, h in enumerate(header) if i > 0 and ".v" not in h]
    return (summary, positions), None


def find(summary, key):
    """A key anywhere in the (nested) summary."""
    if isinstance(summary, dict):
        if key in summary:
            return summary[key]
        for v in summary.values():
            r = find(v, key)
            if r is not None:
                return r
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--plots", default="", help="directory for the PNG figures (matplotlib)")
    ap.add_argument("--only", default="", help="comma-separated integrator names to run")
    a = ap.parse_args()
    cli = os.path.join(ROOT, a.build_dir, "tools", "saltus")
    if not os.path.exists(cli):
        sys.exit(f"no CLI at {cli}: build the 'saltus' target first")
    tmp = tempfile.mkdtemp(prefix="saltus_slider_crank_")
    scene = smooth_scene(tmp)
    ref, err = run(cli, scene, os.path.join(tmp, "ref"), "hem5", "index2", 1e-12)
    if ref is None:
        sys.exit("reference run failed: " + err)
    q_ref = ref[1]
    rows = []
    only = [x for x in a.only.split(",") if x]
    for name, formulation in integrators(cli):
        if only and name not in only:
            continue
        for rtol in TOLERANCES:
            out = os.path.join(tmp, f"{name}_{rtol:g}")
            r, err = run(cli, scene, out, name, formulation, rtol)
            if r is None:
                rows.append((name, formulation, rtol, None, err))
                continue
            s, q = r
            steps = find(s, "accepted_steps")
            t_end = 2.0
            rows.append((name, formulation, rtol, {
                "avg_step": t_end / steps if steps else float("nan"),
                "accepted": steps,
                "rejected": find(s, "rejected_steps"),
                "rhs": find(s, "rhs_evaluations"),
                "proj": find(s, "position_projections"),
                "g": find(s, "max_position_violation"),
                "gv": find(s, "max_velocity_violation"),
                "cpu_ms": 1e3 * find(s, "wall_seconds"),
                "error": max(abs(x - y) for x, y in zip(q, q_ref)),
            }, None))
    head = ("| integrator | form | rtol | avg step (s) | accepted | rejected | rhs evals | "
            "projections | max abs g | max abs Gv | error q(T) | time (ms) |")
    lines = [head, "|" + "---|" * 12]
    for name, formulation, rtol, d, err in rows:
        if d is None:
            lines.append(f"| {name} | {formulation} | {rtol:.0e} | failed: {err} |" + " |" * 8)
            continue
        lines.append(
            f"| {name} | {formulation} | {rtol:.0e} | {d['avg_step']:.2e} | {d['accepted']} | "
            f"{d['rejected']} | {d['rhs']} | {d['proj']} | {d['g']:.1e} | {d['gv']:.1e} | "
            f"{d['error']:.1e} | {d['cpu_ms']:.1f} |")
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    if a.plots:
        plot(rows, a.plots)


PLOTTED = [("hem5", "index2"), ("phem56", "index2"), ("dopri5", "index1"),
           ("generalized_alpha", "index3"), ("generalized_alpha", "index2"),
           ("generalized_alpha", "ggl")]


def plot(rows, directory):
    """The Fig. 4-5 pattern of Haddouni et al. (2017) as PNG files in directory."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(directory, exist_ok=True)
    series = {}
    for name, formulation, rtol, d, _ in rows:
        if d is not None and (name, formulation) in PLOTTED:
            series.setdefault((name, formulation), []).append((rtol, d))
    style = {"hem5": "o-", "phem56": "s-", "dopri5": "^-", "generalized_alpha": "x--"}

    def panel(ax, key, ylabel, xkey="rtol", log_y=True):
        for (name, formulation), pts in series.items():
            xs = [r if xkey == "rtol" else d[xkey] for r, d in pts]
            ys = [max(d[key], 1e-17) if log_y else d[key] for _, d in pts]
            ax.plot(xs, ys, style.get(name, ".-"), label=f"{name} ({formulation})", ms=4)
        ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        if xkey == "rtol":
            ax.invert_xaxis()
            ax.set_xlabel("tolerance (rtol; atol = rtol/100)")
        else:
            ax.invert_xaxis()
            ax.set_xlabel("error max |q(T) - q_ref(T)|")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)

    figures = [
        ("slider_crank_steps.png", [("avg_step", "average step (s)"),
                                    ("accepted", "accepted steps"),
                                    ("rejected", "rejected steps")]),
        ("slider_crank_violations.png", [("g", "max |g| (position violation)"),
                                         ("gv", "max |G v| (velocity violation)"),
                                         ("cpu_ms", "CPU time (ms)")]),
    ]
    for filename, panels in figures:
        fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.2))
        for ax, (key, label) in zip(axes, panels):
            panel(ax, key, label, log_y=(key != "rejected"))
        axes[0].legend(fontsize=7)
        fig.suptitle("Slider-crank (2 s), Saltus integrators (pattern of Haddouni et al. 2017, "
                     "Fig. 4-5)", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(directory, filename), dpi=110)
        plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    panel(axes[0], "rhs", "rhs evaluations (linear solves)", xkey="error")
    panel(axes[1], "cpu_ms", "CPU time (ms)", xkey="error")
    axes[0].legend(fontsize=7)
    fig.suptitle("Slider-crank work-precision", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "slider_crank_work_precision.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
