#!/usr/bin/python3
"""Saltus' and Siconos' Moreau–Jean time-stepping side by side on the generated sphere pile.

Usage: pile_siconos.py [--saltus build/tools/saltus] [--n 100] [--seed 1] [--mu 0,0.5]
                       [--h 1e-3] [--t-end 2] [--json FILE]

For each μ the pile (`saltus generate sphere_pile --n N --seed S`, radius 0.05 m, mass 0.1 kg,
e = 0.5, floor and four walls; `simulation.friction: μ` appended) runs to t_end with
  saltus   `saltus run PILE --integrator moreau_jean --step h --event-rows off` (θ = 1/2;
           frictionless steps solve an LCP, frictional ones Coulomb's law with the exact cone:
           timestepping/moreau_jean.h);
  siconos  Siconos 4.4 (Debian python3-siconos) TimeStepping + MoreauJeanOSI (θ = 1/2) with
           the same spheres as RigidBodyDS (Newton–Euler, solid-sphere inertia) carrying a
           SiconosSphere, the floor and walls as static SiconosPlane half-spaces, contacts
           found by SiconosBulletCollisionManager (Bullet broadphase and narrowphase, default
           options) with NewtonImpactFrictionNSL(e_n = 0.5, e_t = 0, μ) and a FrictionContact(3)
           problem (fc3d NSGS, tolerance 1e-8; μ = 0 is its frictionless case): the set-up of
           Siconos' own examples of piles (siconos.io.mechanics_run), without HDF5 output.
the two one after the other for each μ, in one invocation (a change in the machine's load hits
both alike as far as possible). Differences kept: Saltus makes impacts slower than the scene's
restitution_threshold (0.01 m/s) plastic, Siconos applies e = 0.5 to all.
Reported per engine: wall and CPU time of the run (Saltus: the process, set-up included;
Siconos: from building the model to the end), steps, the rest state at t_end (largest speed of
a sphere centre, smallest gap over all pairs and planes: the penetration) and the potential
energy m g Σ z of the spheres (two piles that came to rest in the same box settle to the same
height up to the arrangement). Only /usr/bin/python3 with numpy, yaml and siconos.

Status (2026-11-27): the Siconos side is NOT validated and its figures must not be quoted. On
this set-up a single sphere dropped from 0.2 m with horizontal speed 0.5 m/s onto the floor
plane (μ = 0, e = 0.5, h = 1 ms) sinks to z = 0.0441 m by t = 0.5 s (6 mm into the floor, still
moving at −0.04 m/s), while the same sphere dropped vertically rests at 0.0503 m; with the
generated 5-sphere pile the deepest sphere ends 2.5 cm into the floor at t = 0.5 s. Newton
options (SICONOS_TS_NONLINEAR, 20 iterations, 1e-10, as siconos.io.mechanics_run) and
setConstraintActivationThreshold(0) change nothing. The Lagrangian SphereLDS bodies of
siconos.mechanics.collision.bodies (no Bullet) fail differently: TimeStepping.computeOneStep
raises a bare std::exception even for one free sphere. Until the sliding sphere stays on the
floor (Bullet contact-breaking/processing thresholds, worldScale, or the old SpaceFilter), the
comparison is not meaningful.
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


def run_siconos(x0, v0, half_width, mu, h, t_end):
    import siconos.kernel as sk
    import siconos.numerics as sn
    from siconos.mechanics.collision import (RigidBodyDS, SiconosContactor, SiconosContactorSet,
                                             SiconosPlane, SiconosSphere)
    from siconos.mechanics.collision.bullet import (SiconosBulletCollisionManager,
                                                    SiconosBulletOptions)
    cpu0, start = time.process_time(), time.monotonic()
    nsds = sk.NonSmoothDynamicalSystem(0.0, t_end)
    manager = SiconosBulletCollisionManager(SiconosBulletOptions())
    manager.insertNonSmoothLaw(sk.NewtonImpactFrictionNSL(RESTITUTION, 0.0, mu, 3), 0, 0)
    inertia = 0.4 * MASS * RADIUS ** 2 * np.eye(3)  # solid sphere, as the generated scene
    spheres = []
    for x, v in zip(x0, v0):
        body = RigidBodyDS(np.r_[x, 1.0, 0.0, 0.0, 0.0], np.r_[v, 0.0, 0.0, 0.0], MASS, inertia)
        contactors = SiconosContactorSet()
        contactors.append(SiconosContactor(SiconosSphere(RADIUS)))
        body.setContactors(contactors)
        body.setFExtPtr(np.array([0.0, 0.0, -MASS * G]))
        nsds.insertDynamicalSystem(body)
        spheres.append(body)
    # Static half-spaces (SiconosPlane: z ≤ 0 in its frame) placed as the floor and the walls:
    # (position, quaternion w x y z) turning +z into the inward normal.
    c = math.sqrt(0.5)
    for position, quaternion in (((0, 0, 0), (1, 0, 0, 0)),
                                 ((-half_width, 0, 0), (c, 0, c, 0)),
                                 ((half_width, 0, 0), (c, 0, -c, 0)),
                                 ((0, -half_width, 0), (c, -c, 0, 0)),
                                 ((0, half_width, 0), (c, c, 0, 0))):
        plane = SiconosContactorSet()
        plane.append(SiconosContactor(SiconosPlane()))
        manager.insertStaticContactorSet(plane, np.r_[position, quaternion].astype(float))
    problem = sk.FrictionContact(3)
    problem.numericsSolverOptions().dparam[sn.SICONOS_DPARAM_TOL] = 1e-8
    problem.numericsSolverOptions().iparam[sn.SICONOS_IPARAM_MAX_ITER] = 10000
    simulation = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, h), sk.MoreauJeanOSI(0.5),
                                 problem)
    simulation.insertInteractionManager(manager)
    steps = 0
    while simulation.hasNextEvent():
        simulation.computeOneStep()
        simulation.nextStep()
        steps += 1
    x = np.array([body.q()[:3] for body in spheres])
    v = np.array([body.velocity()[:3] for body in spheres])
    r = {"engine": "siconos", "status": "finished", "t": steps * h,
         "wall": time.monotonic() - start, "cpu": time.process_time() - cpu0, "steps": steps}
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
            for r in (run_saltus(args.saltus, scene, args.h, args.t_end, work),
                      run_siconos(x0, v0, half_width, mu, args.h, args.t_end)):
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
