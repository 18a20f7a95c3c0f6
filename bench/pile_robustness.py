#!/usr/bin/python3
"""How far generated sphere piles get, and how fast, for several configurations side by side.

Usage: pile_robustness.py [--config LABEL=SALTUS[:RUN ARGS] ...]
                          [--saltus SALTUS --integrators dopri5,moreau_jean,hybrid,...]
                          [--generator SALTUS] [--n 50,60,100] [--seeds none,1,2] [--t-end 2]
                          [--timeout 600] [--cpu-limit S] [--json FILE] [--keep DIR]
       pile_robustness.py --table-from STDERR_LOG [--t-end 2 --timeout S --cpu-limit S]

For each N and seed (`none`: `saltus generate sphere_pile --n N` without --seed, the historical
pile; a number S: `--seed S`, positions and velocities jittered from S), the scene is generated
once and every configuration runs it in turn (interleaved, so that a change in the load of the
shared machine hits all alike): `SALTUS run SCENE --t-end T --event-rows off [RUN ARGS]`.
A configuration is a label, a saltus executable and extra `run` arguments separated by spaces,
e.g. `before=/tmp/saltus_main`, `after=build/tools/saltus`,
`mj=build/tools/saltus:--integrator moreau_jean --step 1e-3`. `--integrators` adds one
configuration per name with `--saltus`: an integrator of the table (`--integrator NAME`, its
default formulation), `moreau_jean` (`--integrator moreau_jean --step 1e-3`) or `hybrid`
(`--hybrid on --step 1e-3`, the scene's dopri5).
A run still going after --timeout seconds of wall time, or --cpu-limit seconds of its own CPU
time (fairer on a shared machine), gets SIGINT, on which saltus stops at its next step boundary
and writes its files (status `interrupted`, reported as the limit hit); one that does not stop
within 30 s more is killed.
Reported per run (summary.json, events.csv): status, t reached, the run's wall time, the CPU time
of the whole process (user + system; set-up included), events (impacts, total; for Moreau-Jean
the steps with impacts) and steps, the largest LCP, the smallest gap after projection, the
largest increase of T + V across an impact row of events.csv (energy_after - energy_before; a
positive figure is an energy gain at an impact), and the contact-problem failures (status
lcp_failure or projection_failure, or time-stepping components that ended `failed`).
Only /usr/bin/python3.
"""
import argparse
import csv
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time


def largest_impact_energy_increase(out):
    """Largest energy_after - energy_before over the impact rows of out/events.csv (None: none)."""
    try:
        with open(os.path.join(out, "events.csv"), newline="") as f:
            rows = csv.DictReader(f)
            rises = [float(r["energy_after"]) - float(r["energy_before"]) for r in rows
                     if r.get("kind") == "impact"]
    except (OSError, KeyError, ValueError):
        return None
    return max(rises) if rises else None


def contact_failures(s):
    """Contact-problem failures of a run: its stop, or failed time-stepping components."""
    n = 1 if s["status"] in ("lcp_failure", "projection_failure") else 0
    stages = (s.get("time_stepping") or {}).get("friction_components", {})
    return n + stages.get("failed", 0)


def process_cpu(pid):
    """User + system CPU seconds of a running process (Linux /proc), None when unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def wait_within(proc, timeout, cpu_limit):
    """Waits for proc; past `timeout` s of wall time or `cpu_limit` s of its CPU time, sends
    SIGINT (saltus stops at its next step boundary and writes its files) and, if it has not
    stopped 30 s later, kills it. Returns (stderr, which limit was hit or None)."""
    start = time.monotonic()
    limit = None
    while limit is None:
        try:
            return proc.communicate(timeout=1.0)[1], None
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() - start > timeout:
            limit = "wall"
        elif cpu_limit and (process_cpu(proc.pid) or 0.0) > cpu_limit:
            limit = "CPU"
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=30)[1], limit
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[1], limit


def run(saltus, extra, scene, out, t_end, timeout, cpu_limit):
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen([saltus, "run", scene, "--t-end", str(t_end), "--event-rows", "off",
                             "--out", out] + extra, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    err, limited = wait_within(proc, timeout, cpu_limit)
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return {"status": f"exit {proc.returncode}: {err.strip()[:160]}",
                "limit": limited}
    ts = s.get("time_stepping")
    return {
        "status": s["status"],
        "message": s["message"][:160],
        "limit": limited,
        "t_reached": s["t_reached"],
        "wall": s["wall_seconds"],
        "process_wall": time.monotonic() - start,
        "cpu": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
        "impacts": s["events"]["impact"],
        "events": s["events"]["total"],
        "steps": ts["steps"] if ts else s["accepted_steps"],
        "largest_lcp": s["event_loop_work"]["largest_lcp"],
        "min_gap": s["min_gap_after_projection"],
        "energy_rise": largest_impact_energy_increase(out),
        "failures": contact_failures(s),
        "hybrid": s.get("hybrid"),
    }


def integrator_configs(saltus, names):
    """One configuration per name of --integrators (see the header)."""
    configs = []
    for name in names:
        if name == "moreau_jean":
            extra = ["--integrator", "moreau_jean", "--step", "1e-3"]
        elif name == "hybrid":
            extra = ["--hybrid", "on", "--step", "1e-3"]
        else:
            extra = ["--integrator", name]
        configs.append((name, saltus, extra))
    return configs


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


def print_table(rows, args):
    cpu = f", CPU limit {args.cpu_limit:g} s" if args.cpu_limit else ""
    print(f"sphere piles to t_end = {args.t_end:g} s (saltus run --event-rows off), wall limit "
          f"{args.timeout:g} s{cpu} (SIGINT)")
    print("| N | seed | config | status | t reached (s) | run wall (s) | process CPU (s) "
          "| events | steps | largest LCP | min gap (m) | largest ΔE at an impact (J) "
          "| contact failures |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "wall" not in r:
            print(f"| {r['n']} | {r['seed']} | {r['config']} | {r['status']} |" + " |" * 9)
            continue
        status = f"{r['limit']} limit" if r["limit"] else r["status"]
        print(f"| {r['n']} | {r['seed']} | {r['config']} | {status} | {r['t_reached']:.4g} "
              f"| {r['wall']:.3g} | {r['cpu']:.3g} | {r['events']} | {r['steps']} "
              f"| {r['largest_lcp']} | {fmt(r['min_gap'], '.2g')} "
              f"| {fmt(r['energy_rise'], '.2g')} | {r['failures']} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", action="append", default=[], help="LABEL=SALTUS[:RUN ARGS]")
    p.add_argument("--saltus", help="saltus executable of --integrators")
    p.add_argument("--integrators", default="",
                   help="comma-separated: table integrators, moreau_jean, hybrid")
    p.add_argument("--generator", help="saltus executable that generates the scenes (one that "
                   "knows --seed; default: the first configuration's)")
    p.add_argument("--n", default="50,60,100")
    p.add_argument("--seeds", default="none,1,2")
    p.add_argument("--t-end", type=float, default=2.0)
    p.add_argument("--timeout", type=float, default=600, help="wall limit per run (s)")
    p.add_argument("--cpu-limit", type=float, help="CPU limit per run (s of the process)")
    p.add_argument("--json")
    p.add_argument("--table-from", help="print the table of the per-run JSON lines of an "
                   "earlier run's stderr (e.g. one stopped before its end) and exit")
    p.add_argument("--keep", help="directory for the scenes and run outputs (default: a "
                   "temporary one, removed)")
    args = p.parse_args()
    if args.table_from:
        with open(args.table_from) as f:
            print_table([json.loads(line) for line in f if line.startswith("{")], args)
        return
    configs = []
    for c in args.config:
        label, _, rest = c.partition("=")
        path, _, extra = rest.partition(":")
        configs.append((label, path, extra.split()))
    if args.integrators:
        if not args.saltus:
            p.error("--integrators needs --saltus")
        configs += integrator_configs(args.saltus, args.integrators.split(","))
    if not configs:
        p.error("give --config or --saltus with --integrators")
    rows = []
    with tempfile.TemporaryDirectory(prefix="saltus_piles_") as tmp:
        work = args.keep or tmp
        os.makedirs(work, exist_ok=True)
        for n in [int(x) for x in args.n.split(",")]:
            for seed in args.seeds.split(","):
                scene = os.path.join(work, f"pile_{n}_{seed}.yaml")
                gen = [args.generator or configs[0][1], "generate", "sphere_pile", "--n", str(n),
                       "--out", scene]
                if seed != "none":
                    gen += ["--seed", seed]
                subprocess.run(gen, check=True)
                for label, path, extra in configs:
                    out = os.path.join(work, f"out_{n}_{seed}_{label}")
                    r = run(path, extra, scene, out, args.t_end, args.timeout, args.cpu_limit)
                    r.update({"n": n, "seed": seed, "config": label})
                    rows.append(r)
                    print(json.dumps(r), file=sys.stderr, flush=True)
    print_table(rows, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
