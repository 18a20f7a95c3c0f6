#!/usr/bin/python3
"""Saltus' and Siconos' Moreau–Jean time-stepping side by side on the generated sphere pile.

Usage: pile_siconos.py [--saltus build/tools/saltus] [--n 100] [--seed 1] [--mu 0,0.5]
                       [--h 1e-3] [--t-end 2] [--json FILE] [--engines saltus,siconos]
                       [--progress SECONDS]

For each μ the pile (`saltus generate sphere_pile --n N --seed S`, radius 0.05 m, mass 0.1 kg,
e = 0.5, floor and four walls; `simulation.friction: μ` appended) runs to t_end with
  saltus   `saltus run PILE --integrator moreau_jean --step h --event-rows off` (θ = 1/2;
           frictionless steps solve an LCP, frictional ones Coulomb's law with the exact cone:
           timestepping/moreau_jean.h);
  siconos  Siconos 4.4 (Debian python3-siconos) TimeStepping + MoreauJeanOSI (θ = 1/2) with
           the same spheres as SphereNEDS (Newton–Euler, solid-sphere inertia), the floor and
           walls as SphereNEDSPlanR relations linked to every sphere, sphere pairs as
           SphereNEDSSphereNEDSR relations linked once their gap is below 1 cm (Neighbours, a
           numpy search after every step, its time counted in Siconos' and reported), all with
           NewtonImpactFrictionNSL(e_n = 0.5, e_t = 0, μ) and a FrictionContact(3) problem
           (fc3d NSGS, tolerance SICONOS_TOLERANCE; μ = 0 is its frictionless case).
the two one after the other for each μ, in one invocation (a change in the machine's load hits
both alike as far as possible). Differences kept: Saltus makes impacts slower than the scene's
restitution_threshold (0.01 m/s) plastic, Siconos applies e = 0.5 to all; Saltus solves each
step's contact problem to a residual of 1e-10, Siconos to its own error 1e-8.
Reported per engine: wall and CPU time of the run (Saltus: the process, set-up included;
Siconos: from building the model to the end), steps, the rest state at t_end (largest speed of
a sphere centre, smallest gap over all pairs and planes: the penetration) and the potential
energy m g Σ z of the spheres (two piles that came to rest in the same box settle to the same
height up to the arrangement). Only /usr/bin/python3 with numpy, yaml and siconos (Debian
python3-siconos, an optional bench dependency: scripts/install-bench-deps.sh).

Siconos set-up checked (2026-11-28): one sphere dropped at 0.5 m/s sideways onto the floor with
μ = 0.5 rolls at 5/7 · 0.5 = 0.3571 m/s with ω r = v, and rests 4e-6 m into the floor. Not
used: Siconos' Bullet collision manager (SiconosBulletCollisionManager with SiconosPlane), on
which a sliding sphere sank 6 mm into the floor in 0.5 s. One difference found and not
explained: a sphere dropped on a resting one, offset along x only (the problem is symmetric in
y), leaves the impact with v_y = 0.043 m/s against v_x = 0.526 m/s in Siconos with μ = 0.5
(with SphereNEDSSphereNEDSR and with Bullet's contact relation alike; 0 with μ = 0 and at fc3d
tolerance 1e-10 alike), where Saltus' Moreau–Jean gives v_y ~ 1e-17 and v_x = 0.5242.
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import yaml

RADIUS, MASS, G, RESTITUTION = 0.05, 0.1, 9.81, 0.5
SICONOS_TOLERANCE = 1e-8  # fc3d NSGS (FrictionContact default solver), as Siconos' examples


def load_pile(path):
    """Centres, velocities and box half-width of a generated pile (spatial q: x y z + quaternion)."""
    with open(path) as f:
        scene = yaml.safe_load(f)
    x = np.array([b["position"] for b in scene["bodies"]], dtype=float)
    v = np.array([b.get("velocity", [0, 0, 0]) for b in scene["bodies"]], dtype=float)
    walls = [s for s in scene["shapes"] if s["name"].startswith("wall")]
    return x, v, -float(walls[0]["offset"])


def rest_state(x, v, half_width):
    """Largest centre speed, smallest gap (pairs, floor, walls) and potential energy."""
    d = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2) + np.eye(len(x)) * 1e9
    gaps = [d.min() - 2 * RADIUS, x[:, 2].min() - RADIUS,
            (half_width - np.abs(x[:, :2])).min() - RADIUS]
    return {"max_speed": float(np.linalg.norm(v, axis=1).max()), "min_gap": float(min(gaps)),
            "potential": float(MASS * G * x[:, 2].sum())}


def run_saltus(saltus, scene, h, t_end, work):
    out = os.path.join(work, "out")
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run([saltus, "run", scene, "--integrator", "moreau_jean", "--step", str(h),
                           "--t-end", str(t_end), "--event-rows", "off", "--out", out],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    # The state at t_end: the last row of trajectory.csv (t, then q: 7 per sphere, v: 6).
    with open(os.path.join(out, "trajectory.csv")) as f:
        rows = f.read().splitlines()
    last = np.array([float(x) for x in rows[-1].split(",")[1:]])
    n = len(last) // 13
    q, vel = last[:7 * n].reshape(-1, 7), last[7 * n:].reshape(-1, 6)
    r = {"engine": "saltus", "status": s["status"], "t": s["t_reached"], "wall": wall,
         "cpu": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
         "steps": s["accepted_steps"], "stderr": proc.stderr.strip()[-200:]}
    r.update(rest_state(q[:, :3], vel[:, :3], load_pile(scene)[2]))
    return r


class Neighbours:
    """Links a sphere–sphere interaction (SphereNEDSSphereNEDSR) for every pair whose gap drops
    below `margin`, once (links are kept: a pile's pairs stay few). Siconos' TimeStepping then
    decides at every step which linked contacts are active (MoreauJeanOSI: predicted gap ≤ 0).
    With margin ≥ the largest relative displacement per step (2 · 3 m/s · 1 ms here) no contact
    is missed; checked every step, so the Python cost is counted in Siconos' time (reported)."""

    def __init__(self, sk, relation, nsds, nsl, bodies, margin):
        self.sk, self.relation, self.nsds, self.nsl = sk, relation, nsds, nsl
        self.bodies, self.margin, self.linked, self.keep, self.seconds = bodies, margin, set(), [], 0.0

    def update(self):
        start = time.monotonic()
        x = np.array([b.q()[:3] for b in self.bodies])
        d = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2)
        for i, j in zip(*np.nonzero(np.triu(d < 2 * RADIUS + self.margin, 1))):
            if (i, j) in self.linked:
                continue
            r = self.relation(RADIUS, RADIUS)
            inter = self.sk.Interaction(self.nsl, r)
            self.nsds.link(inter, self.bodies[i], self.bodies[j])
            self.keep.append((r, inter))
            self.linked.add((i, j))
        self.seconds += time.monotonic() - start


def run_siconos(x0, v0, half_width, mu, h, t_end, progress=0.0):
    import siconos.kernel as sk
    import siconos.numerics as sn
    from siconos.mechanics.collision.bodies import (SphereNEDS, SphereNEDSPlanR,
                                                    SphereNEDSSphereNEDSR)
    cpu0, start = time.process_time(), time.monotonic()
    nsds = sk.NonSmoothDynamicalSystem(0.0, t_end)
    nsl = sk.NewtonImpactFrictionNSL(RESTITUTION, 0.0, mu, 3)
    inertia = 0.4 * MASS * RADIUS ** 2 * np.eye(3)  # solid sphere, as the generated scene
    spheres, keep = [], []
    for x, v in zip(x0, v0):
        body = SphereNEDS(RADIUS, MASS, inertia, np.r_[x, 1.0, 0.0, 0.0, 0.0],
                          np.r_[v, 0.0, 0.0, 0.0])
        body.setFExtPtr(np.array([0.0, 0.0, -MASS * G]))
        nsds.insertDynamicalSystem(body)
        spheres.append(body)
    # Floor z = 0 and the walls |x|, |y| = half_width as planes A x + B y + C z + D = 0, linked
    # to every sphere (SphereNEDSPlanR: gap = distance to the plane − r).
    for body in spheres:
        for plane in ((0, 0, 1, 0), (1, 0, 0, half_width), (-1, 0, 0, half_width),
                      (0, 1, 0, half_width), (0, -1, 0, half_width)):
            r = SphereNEDSPlanR(RADIUS, *plane)
            inter = sk.Interaction(nsl, r)
            nsds.link(inter, body)
            keep.append((r, inter))
    neighbours = Neighbours(sk, SphereNEDSSphereNEDSR, nsds, nsl, spheres, margin=0.01)
    neighbours.update()
    problem = sk.FrictionContact(3)
    problem.numericsSolverOptions().dparam[sn.SICONOS_DPARAM_TOL] = SICONOS_TOLERANCE
    problem.numericsSolverOptions().iparam[sn.SICONOS_IPARAM_MAX_ITER] = 10000
    simulation = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, h), sk.MoreauJeanOSI(0.5),
                                 problem)
    steps = 0
    while simulation.hasNextEvent():
        simulation.computeOneStep()
        simulation.nextStep()
        neighbours.update()
        steps += 1
        if progress > 0 and steps % max(1, round(progress / h)) == 0:
            # A line per `progress` simulated seconds, so that a run stopped by a time limit
            # still tells how far it got and where its state was.
            v = np.array([body.velocity()[:3] for body in spheres])
            print(json.dumps({"engine": "siconos", "t": steps * h,
                              "cpu": time.process_time() - cpu0,
                              "wall": time.monotonic() - start,
                              "max_speed": float(np.linalg.norm(v, axis=1).max())}),
                  file=sys.stderr, flush=True)
    x = np.array([body.q()[:3] for body in spheres])
    v = np.array([body.velocity()[:3] for body in spheres])
    r = {"engine": "siconos", "status": "finished", "t": steps * h,
         "wall": time.monotonic() - start, "cpu": time.process_time() - cpu0, "steps": steps,
         "python_neighbour_search": neighbours.seconds, "pairs_linked": len(neighbours.linked)}
    r.update(rest_state(x, v, half_width))
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--saltus", default="build/tools/saltus")
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mu", default="0,0.5")
    p.add_argument("--h", type=float, default=1e-3)
    p.add_argument("--t-end", type=float, default=2.0)
    p.add_argument("--json")
    p.add_argument("--engines", default="saltus,siconos",
                   help="comma-separated subset of saltus,siconos (default both)")
    p.add_argument("--progress", type=float, default=0.0,
                   help="Siconos: print t, CPU and the largest speed every PROGRESS simulated s")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="saltus_pile_siconos_") as work:
        base = os.path.join(work, "pile.yaml")
        subprocess.run([args.saltus, "generate", "sphere_pile", "--n", str(args.n), "--seed",
                        str(args.seed), "--out", base], check=True)
        x0, v0, half_width = load_pile(base)
        for mu in [float(m) for m in args.mu.split(",")]:
            scene = os.path.join(work, f"pile_mu{mu:g}.yaml")
            with open(base) as f, open(scene, "w") as g:
                g.write(f.read() + f"  friction: {mu!r}\n")
            engines = args.engines.split(",")
            runs = ([lambda: run_saltus(args.saltus, scene, args.h, args.t_end, work)]
                    if "saltus" in engines else []) + \
                   ([lambda: run_siconos(x0, v0, half_width, mu, args.h, args.t_end,
                                         args.progress)] if "siconos" in engines else [])
            for run in runs:
                r = run()
                r.update({"n": args.n, "seed": args.seed, "mu": mu, "h": args.h})
                rows.append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
    print(f"sphere pile N = {args.n}, seed {args.seed}, Moreau–Jean h = {args.h:g} s, θ = 1/2, "
          f"to t = {args.t_end:g} s")
    print("| μ | engine | status | wall (s) | CPU (s) | steps | max speed at end (m/s) "
          "| min gap at end (m) | m g Σz at end (J) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['mu']:g} | {r['engine']} | {r['status']} | {r['wall']:.3g} | {r['cpu']:.3g} "
              f"| {r['steps']} | {r['max_speed']:.2g} | {r['min_gap']:.2g} "
              f"| {r['potential']:.5g} |")
    for mu in sorted({r["mu"] for r in rows}):
        pair = {r["engine"]: r for r in rows if r["mu"] == mu}
        if len(pair) == 2:
            print(f"μ = {mu:g}: Siconos / Saltus CPU time {pair['siconos']['cpu'] / pair['saltus']['cpu']:.3g}, "
                  f"wall time {pair['siconos']['wall'] / pair['saltus']['wall']:.3g}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
