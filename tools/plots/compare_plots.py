#!/usr/bin/env python3
"""Plots and report of a `saltus compare` study, drawn from its results.csv (docs/compare.md).

    compare_plots.py DIR/results.csv [--out DIR] [--cost wall|cpu|rhs|steps]

The cost (default wall) is the work axis of the diagrams and the performance criterion: wall
time, CPU time (the median of the run's repeats), right-hand-side evaluations, or steps
(accepted + rejected).

Writes into DIR:
  wp_<scene>.png        work-precision diagram: error against the reference vs the cost, one
                        line per integrator/formulation, each point labelled with its rtol;
  profile_<set>.png     performance profiles rho_s(tau) of Dolan and More (Haddouni et al. 2017,
                        eq. 37-39) over the problems of the set, tau in [1, 5] and over a wide
                        range; failed and timed-out runs count as never solved;
  steps_<scene>.png     the paper's Fig. 4 a-e: average step, accepted and rejected steps, largest
                        position and velocity violation, each against the tolerance;
  report.md             the provenance of the study (DIR/provenance.json: Saltus version and
                        commit, command line, host), the figures, the table of rho_s(1.2) per
                        set (the paper's Table 3), the achieved error / rtol per solver and the
                        list of runs that did not finish.

A problem of a set is a (scene, rtol) pair; a solver is an integrator/formulation pair. The
performance criterion t_{p,s} (eq. 37) is the cost of the run, +inf for a run that failed or
timed out. Only the Python standard library, numpy and matplotlib
(Debian python3-numpy, python3-matplotlib) are needed.
"""

import argparse
import csv
import math
import os
import re
import sys
from collections import OrderedDict, defaultdict

TAU_TABLE = 1.2  # the paper's Table 3 column
TARGET_ERROR = 1e-4  # accuracy of the "cost of accuracy" table


def read_results(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    """float of a CSV field, nan when empty or malformed."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def solver_of(row):
    return row["integrator"] + "/" + row["formulation"]


# --cost: the label and the value of a row.
COSTS = {
    "wall": ("wall time (s)", lambda r: number(r.get("wall_seconds"))),
    "cpu": ("CPU time (s)", lambda r: number(r.get("cpu_seconds"))),
    "rhs": ("right-hand-side evaluations", lambda r: number(r.get("rhs_evaluations"))),
    "steps": ("steps (accepted + rejected)",
              lambda r: number(r.get("accepted_steps")) + number(r.get("rejected_steps"))),
}


def performance_ratios(rows, cost="wall"):
    """r_{p,s} (eq. 38) for every problem p = (scene, rtol) and solver s of `rows`.

    Returns (problems, solvers, ratios) with ratios[p][s] = t_{p,s} / min_s t_{p,s}, +inf for a
    run that failed or timed out (or is missing) and for every solver of a problem that no solver
    solved.
    """
    solvers = sorted({solver_of(r) for r in rows})
    times = defaultdict(dict)
    for r in rows:
        p = (r["scene"], number(r["rtol"]))
        t = COSTS[cost][1](r) if r["status"] == "ok" else math.inf
        if math.isnan(t):
            t = math.inf
        times[p][solver_of(r)] = min(t, times[p].get(solver_of(r), math.inf))
    problems = sorted(times)
    ratios = {}
    for p in problems:
        best = min(times[p].get(s, math.inf) for s in solvers)
        ratios[p] = {}
        for s in solvers:
            t = times[p].get(s, math.inf)
            if not (math.isfinite(t) and math.isfinite(best)):
                ratios[p][s] = math.inf
            elif best > 0:
                ratios[p][s] = t / best
            else:  # a zero time (timer resolution): only another zero ties with it
                ratios[p][s] = 1.0 if t == 0 else math.inf
    return problems, solvers, ratios


def rho(ratios, problems, solver, tau):
    """rho_s(tau) (eq. 39): the fraction of problems with r_{p,s} <= tau."""
    if not problems:
        return 0.0
    # A failed run (ratio +inf) never counts, not even at tau = inf.
    return sum(1 for p in problems
               if math.isfinite(ratios[p][solver]) and ratios[p][solver] <= tau) / len(problems)


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def rtol_label(rtol):
    """'1e-04' -> '1e-4': a short label for a tolerance."""
    mantissa, _, exponent = ("%.0e" % rtol).partition("e")
    return "%se%d" % (mantissa, int(exponent))


def set_value_scale(ax, values, linear_floor):
    """Log scale for positive data; a linear axis when every value is 0 (a symlog axis over
    zeros only shows meaningless decades); symlog with its linear band below the smallest
    positive value when some values are 0."""
    positive = [v for v in values if v > 0]
    if not positive:
        ax.set_ylim(-0.05, 1.0)
        ax.text(0.5, 0.5, "all 0", ha="center", va="center", transform=ax.transAxes)
    elif len(positive) == len(values):
        ax.set_yscale("log")
    else:
        ax.set_yscale("symlog", linthresh=max(min(positive), linear_floor))
        ax.set_ylim(bottom=0)


def draw(results_path, out_dir, cost="wall"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = read_results(results_path)
    os.makedirs(out_dir, exist_ok=True)
    sets = OrderedDict()
    for r in rows:
        sets.setdefault(r["set"], OrderedDict()).setdefault(r["scene"], []).append(r)
    solvers_all = sorted({solver_of(r) for r in rows})
    markers = "os^vD<>phx*+"
    style = {s: markers[i % len(markers)] for i, s in enumerate(solvers_all)}
    figures = defaultdict(list)  # set -> [(title, file)]

    for set_name, scenes in sets.items():
        for scene, scene_rows in scenes.items():
            by_solver = defaultdict(list)
            for r in scene_rows:
                by_solver[solver_of(r)].append(r)
            # Work-precision diagram.
            fig, ax = plt.subplots(figsize=(6, 4.5))
            drawn = False
            for s in sorted(by_solver):
                pts = sorted((COSTS[cost][1](r), number(r["error"]), number(r["rtol"]))
                             for r in by_solver[s] if r["status"] == "ok")
                pts = [p for p in pts if p[0] > 0 and p[1] > 0 and math.isfinite(p[1])]
                if not pts:
                    continue
                pts.sort(key=lambda p: -p[2])
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker=style[s], label=s)
                for x, y, rtol in pts:
                    ax.annotate(rtol_label(rtol), (x, y), textcoords="offset points",
                                xytext=(3, 3), fontsize=6, alpha=0.7)
                drawn = True
            ax.set_xlabel(COSTS[cost][0])
            ax.set_ylabel("error (max scaled position error)")
            ax.set_title("work-precision: " + scene)
            if drawn:
                ax.legend(fontsize=7)
            else:
                ax.text(0.5, 0.5, "no finished run with an error", ha="center",
                        transform=ax.transAxes)
            ax.grid(True, which="both", alpha=0.3)
            name = "wp_%s.png" % safe(scene)
            fig.tight_layout()
            fig.savefig(os.path.join(out_dir, name), dpi=90)
            plt.close(fig)
            figures[set_name].append(("work-precision, " + scene, name))

            # Fig. 4 a-e: statistics against the tolerance.
            panels = [("average_step", "average step (s)"), ("accepted_steps", "accepted steps"),
                      ("rejected_steps", "rejected steps"),
                      ("max_position_violation", "max position violation"),
                      ("max_velocity_violation", "max velocity violation")]
            fig, axes = plt.subplots(1, 5, figsize=(18, 3.6))
            for ax, (column, label) in zip(axes, panels):
                values = []
                for s in sorted(by_solver):
                    pts = sorted((number(r["rtol"]), number(r[column]))
                                 for r in by_solver[s] if r["status"] == "ok")
                    pts = [p for p in pts if math.isfinite(p[1])]
                    if not pts:
                        continue
                    values += [p[1] for p in pts]
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=style[s], label=s)
                ax.set_xscale("log")
                set_value_scale(ax, values, 1.0 if column.endswith("steps") else 0.0)
                ax.set_xlabel("rtol")
                ax.set_title(label, fontsize=9)
                ax.grid(True, which="both", alpha=0.3)
            axes[0].legend(fontsize=6)
            fig.suptitle(scene)
            name = "steps_%s.png" % safe(scene)
            fig.tight_layout()
            fig.savefig(os.path.join(out_dir, name), dpi=80)
            plt.close(fig)
            figures[set_name].append(("statistics against the tolerance, " + scene, name))

    # Performance profiles per set.
    table = OrderedDict()
    for set_name, scenes in sets.items():
        set_rows = [r for scene_rows in scenes.values() for r in scene_rows]
        problems, solvers, ratios = performance_ratios(set_rows, cost)
        finite = [ratios[p][s] for p in problems for s in solvers if math.isfinite(ratios[p][s])]
        tau_max = max(10.0, 1.2 * max(finite)) if finite else 10.0
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for ax, (lo, hi, log) in zip(axes, [(1.0, 5.0, False), (1.0, tau_max, True)]):
            taus = np.geomspace(lo, hi, 400) if log else np.linspace(lo, hi, 400)
            for s in solvers:
                ax.step(taus, [rho(ratios, problems, s, t) for t in taus], where="post",
                        label=s)
            if log:
                ax.set_xscale("log")
            ax.set_xlim(lo, hi)
            ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("tau")
            ax.set_ylabel("rho_s(tau)")
            ax.grid(True, alpha=0.3)
        axes[0].set_title("performance profile, set %s (%d problems)" % (set_name, len(problems)))
        axes[1].set_title("wide range of tau")
        axes[0].legend(fontsize=7, loc="lower right")
        name = "profile_%s.png" % safe(set_name)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, name), dpi=90)
        plt.close(fig)
        figures[set_name].insert(0, ("performance profile, set " + set_name, name))
        table[set_name] = (len(problems),
                           {s: rho(ratios, problems, s, TAU_TABLE) for s in solvers},
                           {s: rho(ratios, problems, s, math.inf) for s in solvers})

    write_report(rows, sets, solvers_all, table, figures, os.path.join(out_dir, "report.md"),
                 cost, read_provenance(out_dir))


def read_provenance(out_dir):
    """DIR/provenance.json written by saltus compare (tools/metadata.h), or {}."""
    import json
    try:
        with open(os.path.join(out_dir, "provenance.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def error_over_rtol(rows, solvers):
    """Per solver: (number of runs, median, largest) of error / rtol over its finished runs."""
    ratios = defaultdict(list)
    for r in rows:
        e, rtol = number(r["error"]), number(r["rtol"])
        if r["status"] == "ok" and math.isfinite(e) and rtol > 0:
            ratios[solver_of(r)].append(e / rtol)
    out = {}
    for s in solvers:
        x = sorted(ratios.get(s, []))
        if x:
            n = len(x)
            median = x[n // 2] if n % 2 else 0.5 * (x[n // 2 - 1] + x[n // 2])
            out[s] = (n, median, x[-1])
    return out


def write_report(rows, sets, solvers, table, figures, path, cost="wall", provenance=None):
    lines = ["# saltus compare: report", ""]
    if provenance:
        lines.append("Saltus %s (commit %s) on %s: `%s`." % (
            provenance.get("saltus_version", "?"), provenance.get("saltus_commit", "?"),
            provenance.get("host", "?"), provenance.get("command_line", "")))
        if provenance.get("collect_command_line"):
            lines.append("Run as emitted jobs, merged by `%s`." % provenance["collect_command_line"])
        lines.append("")
        scenes = provenance.get("scenes", [])
        if scenes:
            lines.append("Scene files (SHA-256; the study's digest %s):" %
                         provenance.get("scene_sha256", "?"))
            lines.append("")
            for s in scenes:
                lines.append("- %s: `%s` %s" % (s.get("name", "?"), s.get("file", "?"),
                                                 s.get("sha256", "?")))
            lines.append("")
    lines.append("Cost: %s." % COSTS[cost][0])
    lines.append("")
    n_ok = sum(1 for r in rows if r["status"] == "ok")
    lines.append("%d runs: %d ok, %d failed, %d timed out; %d scenes in %d set(s); solvers: %s." % (
        len(rows), n_ok, sum(1 for r in rows if r["status"] == "failed"),
        sum(1 for r in rows if r["status"] == "timed_out"),
        sum(len(s) for s in sets.values()), len(sets), ", ".join(solvers)))
    lines.append("")
    lines.append("## rho_s(%.1f) per set (Haddouni et al. 2017, Table 3 form)" % TAU_TABLE)
    lines.append("")
    lines.append("A problem is a (scene, rtol) pair; rho_s(%.1f) is the fraction of problems that "
                 "solver s solves within %.1f times the cost of the cheapest solver; "
                 "rho_s(inf) is the fraction it solves at all." % (TAU_TABLE, TAU_TABLE))
    lines.append("")
    lines.append("| set | problems | " + " | ".join(solvers) + " |")
    lines.append("|---|---|" + "---|" * len(solvers))
    for set_name, (n, at_tau, at_inf) in table.items():
        cells = []
        for s in solvers:
            if s in at_tau:
                cells.append("%.2f (%.2f)" % (at_tau[s], at_inf[s]))
            else:
                cells.append("—")
        lines.append("| %s | %d | %s |" % (set_name, n, " | ".join(cells)))
    lines.append("")
    lines.append("Cells: rho_s(%.1f) (rho_s(inf)); — when the solver did not run on the set." %
                 TAU_TABLE)
    lines.append("")
    lines.append("## Achieved error / rtol per solver")
    lines.append("")
    lines.append("How far each solver's error against the reference lands from the tolerance asked "
                 "for, over its finished runs (all scenes and tolerances): near 1 the tolerance is "
                 "a fair proxy for the error, far above it the error control is optimistic.")
    lines.append("")
    lines.append("| solver | runs | median | largest |")
    lines.append("|---|---|---|---|")
    for s, (n, median, largest) in error_over_rtol(rows, solvers).items():
        lines.append("| %s | %d | %.3g | %.3g |" % (s, n, median, largest))
    lines.append("")
    lines.append("## Cost of accuracy: %s to reach error <= %g" % (COSTS[cost][0], TARGET_ERROR))
    lines.append("")
    lines.append("Per scene, the cheapest run of each solver whose error against the reference is "
                 "at most %g, divided by the fastest such run of any solver (1.0: the winner; "
                 "— : no run of that solver reached it)." % TARGET_ERROR)
    lines.append("")
    lines.append("| set | scene | best (s) | " + " | ".join(solvers) + " |")
    lines.append("|---|---|---|" + "---|" * len(solvers))
    for set_name, scenes in sets.items():
        for scene, scene_rows in scenes.items():
            cheapest = {}
            for r in scene_rows:
                e, t = number(r["error"]), COSTS[cost][1](r)
                if r["status"] == "ok" and e <= TARGET_ERROR and t > 0:
                    cheapest[solver_of(r)] = min(t, cheapest.get(solver_of(r), math.inf))
            if not cheapest:
                lines.append("| %s | %s | — |%s" % (set_name, scene, " — |" * len(solvers)))
                continue
            best = min(cheapest.values())
            cells = ["%.1f" % (cheapest[s] / best) if s in cheapest else "—" for s in solvers]
            lines.append("| %s | %s | %.2g | %s |" % (set_name, scene, best, " | ".join(cells)))
    lines.append("")
    failed = [r for r in rows if r["status"] != "ok"]
    lines.append("## Runs that did not finish")
    lines.append("")
    if not failed:
        lines.append("None.")
    else:
        lines.append("| scene | solver | rtol | status | reason |")
        lines.append("|---|---|---|---|---|")
        for r in failed:
            lines.append("| %s | %s | %g | %s | %s |" % (r["scene"], solver_of(r), number(r["rtol"]),
                                                       r["status"],
                                                       r["reason"].replace("|", "/")))
    lines.append("")
    for set_name, figs in figures.items():
        lines.append("## Set %s" % set_name)
        lines.append("")
        for title, name in figs:
            lines.append("![%s](%s)" % (title, name))
            lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="results.csv of saltus compare")
    parser.add_argument("--out", help="output folder (default: the folder of results.csv)")
    parser.add_argument("--cost", choices=sorted(COSTS), default="wall",
                        help="work axis and performance criterion (default wall)")
    args = parser.parse_args(argv)
    out_dir = args.out or os.path.dirname(os.path.abspath(args.results))
    try:
        draw(args.results, out_dir, args.cost)
    except ImportError as e:
        print("compare_plots.py: %s (install python3-matplotlib and python3-numpy)" % e,
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
