#!/usr/bin/python3
"""Every integrator through the singular positions (issue 19 section 2).

Runs `saltus run` for every integrator x formulation of the table (`saltus list`) x rtol
(atol = rtol) on the IFToMM double four-bar (examples/sets/scenes/double_four_bar.yaml, 20 s)
and the Bricard mechanism (examples/spatial/bricard.yaml, 10 s) and tabulates per cell:
finished, or the status and time where the run stopped; accepted / rejected steps; CPU time of
the process; the IFToMM criterion max_t |E(t) - E(0)| (mechanical energy from the trajectory,
criterion 1e-3 J: IFToMM library of computational benchmark problems, /work/shared/BENCHMARKS.md);
and the error against a DOPRI5 reference (rtol = atol = 1e-11 for the double four-bar, where
DOPRI5 at 1e-12 stops at t = 14.8 s; 1e-12 for Bricard):
    error = max_k max_i |q_i(t_k) - q_ref_i(t_k)| / (1 + |q_ref_i(t_k)|)
over the positions at the output times t_k = 0.01 k (saltus compare's definition,
docs/compare.md). Both scenes have bodies with their centre of mass at the body origin and
gravity along -y, so E = sum(1/2 m |v|^2 + 1/2 w.J w + m g y) with the body-frame J and w.

Usage:
  /usr/bin/python3 bench/singular_positions.py [--saltus PATH] [--out DIR] [--rtol 1e-3,...]
      [--scenes dfb,bricard] [--pairs dopri5/index1,...] [--time-limit S] [--jobs N]
Writes DIR/results.csv and DIR/matrix.md (default DIR: /tmp/singular_positions).
"""
import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAVITY = 9.81
SCENES = {
    "dfb": ("examples/sets/scenes/double_four_bar.yaml", 20.0, 1e-11),
    "bricard": ("examples/spatial/bricard.yaml", 10.0, 1e-12),
}
RTOLS = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]


def table_pairs(saltus):
    """(integrator, formulation) pairs from `saltus list`: a name line starts with two spaces,
    its "formulations:" line follows."""
    out = subprocess.run([saltus, "list"], capture_output=True, text=True, check=True).stdout
    pairs, name = [], None
    for line in out.splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name = line.split()[0]
        elif line.strip().startswith("formulations:") and name:
            for f in line.split(":", 1)[1].replace("(default)", "").split(","):
                if f.strip() in ("index1", "index2", "index3", "ggl"):  # not moreau_jean
                    pairs.append((name, f.strip()))
    return pairs


def scene_with_output_step(path, out_dir):
    """A copy of the scene with output_step 0.01 (dense output: does not change the steps)."""
    text = open(os.path.join(ROOT, path)).read()
    if "output_step" not in text:
        text = text.replace("simulation:\n", "simulation:\n  output_step: 0.01\n")
    copy = os.path.join(out_dir, os.path.basename(path))
    with open(copy, "w") as f:
        f.write(text)
    return copy


def read_trajectory(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]


def body_inertia(scene_path):
    """{body: (mass, [Jxx, Jyy, Jzz] or J)} from the scene's flow-style body lines."""
    import re
    bodies = {}
    for line in open(scene_path):
        m = re.search(r"\{name: (\w+), mass: ([0-9.eE+-]+), inertia: (\[[^\]]*\]|[0-9.eE+-]+)", line)
        if m:
            inertia = m.group(3)
            J = [float(x) for x in inertia.strip("[]").split(",")] if inertia.startswith("[") \
                else float(inertia)
            bodies[m.group(1)] = (float(m.group(2)), J)
    return bodies


def energies(header, rows, bodies):
    col = {name: i for i, name in enumerate(header)}
    out = []
    for r in rows:
        e = 0.0
        for b, (m, J) in bodies.items():
            if isinstance(J, list):
                v2 = sum(r[col[f"{b}.v{a}"]] ** 2 for a in "xyz")
                rot = sum(J[k] * r[col[f"{b}.w{a}"]] ** 2 for k, a in enumerate("xyz"))
            else:
                v2 = r[col[f"{b}.vx"]] ** 2 + r[col[f"{b}.vy"]] ** 2
                rot = J * r[col[f"{b}.vtheta"]] ** 2
            e += 0.5 * m * v2 + 0.5 * rot + m * GRAVITY * r[col[f"{b}.y"]]
        out.append(e)
    return out


def position_error(header, rows, ref_header, ref_rows):
    """Max relative position error at the common output times (docs/compare.md)."""
    nq = (len(header) - 1) // 2
    ref = {round(r[0], 9): r for r in ref_rows}
    err = 0.0
    for r in rows:
        q = ref.get(round(r[0], 9))
        if q is None:
            continue
        for i in range(1, 1 + nq):
            err = max(err, abs(r[i] - q[i]) / (1.0 + abs(q[i])))
    return err


def run(saltus, scene, t_end, integrator, formulation, rtol, out, limit):
    cmd = [saltus, "run", scene, "--t-end", repr(t_end), "--integrator", integrator,
           "--formulation", formulation, "--rtol", repr(rtol), "--atol", repr(rtol),
           "--out", out, "--event-rows", "off"]
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    timed_out, cpu = False, 0.0
    while True:  # os.wait4 gives the child's own CPU time (thread-safe, unlike RUSAGE_CHILDREN)
        pid, _, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid != 0:
            cpu = usage.ru_utime + usage.ru_stime
            break
        if time.time() - start > limit:
            proc.kill()
            os.wait4(proc.pid, 0)
            timed_out = True
            break
        time.sleep(0.01)
    proc.returncode = 0  # reaped above
    wall = time.time() - start
    summary = {}
    path = os.path.join(out, "summary.json")
    if os.path.exists(path) and not timed_out:
        summary = json.load(open(path))
    return timed_out, cpu, summary


def cell(args, key, pair, rtol, ref):
    scene, t_end, _ = SCENES[key]
    integrator, formulation = pair
    out = os.path.join(args.out, f"{key}_{integrator}_{formulation}_{rtol:g}")
    timed_out, cpu, s = run(args.saltus, args.scene_copies[key], t_end, integrator, formulation,
                             rtol, out, args.time_limit)
    row = {"scene": key, "integrator": integrator, "formulation": formulation, "rtol": rtol,
           "status": "timed_out" if timed_out else s.get("status", "crashed"),
           "t_reached": s.get("t_reached", ""), "steps": s.get("accepted_steps", ""),
           "rejected": s.get("rejected_steps", ""), "cpu": round(cpu, 3), "energy_drift": "", "error": ""}
    traj = os.path.join(out, "trajectory.csv")
    if not timed_out and os.path.exists(traj):
        header, rows = read_trajectory(traj)
        e = energies(header, rows, args.bodies[key])
        row["energy_drift"] = max(abs(x - e[0]) for x in e)
        if row["status"] == "finished":
            row["error"] = position_error(header, rows, *ref)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--saltus", default=os.path.join(ROOT, "build/tools/saltus"))
    p.add_argument("--out", default="/tmp/singular_positions")
    p.add_argument("--rtol", default=",".join(f"{r:g}" for r in RTOLS))
    p.add_argument("--scenes", default="dfb,bricard")
    p.add_argument("--pairs", default="")
    p.add_argument("--time-limit", type=float, default=30.0)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rtols = [float(r) for r in args.rtol.split(",")]
    keys = args.scenes.split(",")
    pairs = [tuple(x.split("/")) for x in args.pairs.split(",")] if args.pairs \
        else table_pairs(args.saltus)
    args.scene_copies, args.bodies, refs = {}, {}, {}
    for key in keys:
        scene, t_end, ref_rtol = SCENES[key]
        args.scene_copies[key] = scene_with_output_step(scene, args.out)
        args.bodies[key] = body_inertia(args.scene_copies[key])
        ref_out = os.path.join(args.out, f"reference_{key}")
        _, _, s = run(args.saltus, args.scene_copies[key], t_end, "dopri5", "index1", ref_rtol,
                      ref_out, 600)
        if s.get("status") != "finished":
            sys.exit(f"reference for {key} did not finish: {s.get('status')}")
        refs[key] = read_trajectory(os.path.join(ref_out, "trajectory.csv"))
    work = [(k, pair, r) for k in keys for pair in pairs for r in rtols]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda w: cell(args, w[0], w[1], w[2], refs[w[0]]), work))
    fields = list(results[0].keys())
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(results)
    lines = []
    for key in keys:
        lines.append(f"\n{key} ({SCENES[key][1]:g} s): error vs reference / energy drift (J) / "
                     "steps (rejected) / CPU s, or where and why it stopped\n")
        lines.append("| integrator | " + " | ".join(f"{r:g}" for r in rtols) + " |")
        lines.append("|---" * (len(rtols) + 1) + "|")
        for pair in pairs:
            cells = []
            for r in rtols:
                x = next(y for y in results if y["scene"] == key and
                         (y["integrator"], y["formulation"]) == pair and y["rtol"] == r)
                if x["status"] == "finished":
                    cells.append(f"{x['error']:.1e} / {x['energy_drift']:.1e} / {x['steps']} "
                                 f"({x['rejected']}) / {float(x['cpu']):.2f}")
                elif x["status"] == "timed_out":
                    cells.append(f"timed out ({args.time_limit:g} s)")
                else:
                    t = x["t_reached"]
                    cells.append(f"**{x['status']} at {float(t):.4g} s**" if t != "" else
                                 f"**{x['status']}**")
            lines.append(f"| {pair[0]}/{pair[1]} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    open(os.path.join(args.out, "matrix.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
