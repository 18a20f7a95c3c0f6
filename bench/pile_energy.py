#!/usr/bin/python3
"""Kinetic energy and speeds of a generated sphere pile against time, from a run's trajectory.csv.

Usage: pile_energy.py RUN_DIR [--every 0.1] [--mass 0.1] [--inertia 1e-4] [--slow 1e-3]

RUN_DIR is the --out directory of `saltus run` on a `saltus generate sphere_pile` scene (spheres
named s0, s1, ... with columns sI.x, .y, .z, .vx, .vy, .vz, .wx, .wy, .wz; mass 0.1 kg and
J = 2/5 m r² = 1e-4 kg m² as the generator writes them). For the rows of trajectory.csv at
multiples of --every (the first row at or after each), prints t, the translational kinetic
energy Σ ½ m |v|², the rotational one Σ ½ J |ω|², the largest centre speed, the number of spheres
whose centre moves faster than --slow m/s, and m g Σ z (the potential energy above the floor).
Only /usr/bin/python3.
"""
import argparse
import csv
import math
import os


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir")
    p.add_argument("--every", type=float, default=0.1)
    p.add_argument("--mass", type=float, default=0.1)
    p.add_argument("--inertia", type=float, default=1e-4)
    p.add_argument("--slow", type=float, default=1e-3)
    args = p.parse_args()
    with open(os.path.join(args.run_dir, "trajectory.csv"), newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        col = {name: k for k, name in enumerate(header)}
        spheres = []
        while f"s{len(spheres)}.vx" in col:
            i = len(spheres)
            spheres.append([col[f"s{i}.{c}"] for c in ("z", "vx", "vy", "vz", "wx", "wy", "wz")])
        print(f"{len(spheres)} spheres, m = {args.mass:g} kg, J = {args.inertia:g} kg m^2")
        print("| t (s) | translational KE (J) | rotational KE (J) | largest centre speed (m/s) "
              f"| spheres faster than {args.slow:g} m/s | m g Σz (J) |")
        print("|---|---|---|---|---|---|")
        next_t = 0.0
        for row in rows:
            t = float(row[0])
            if t < next_t - 1e-12:
                continue
            next_t = (math.floor(t / args.every + 1e-9) + 1) * args.every
            kt = kr = vmax = height = 0.0
            fast = 0
            for z, vx, vy, vz, wx, wy, wz in spheres:
                v2 = float(row[vx]) ** 2 + float(row[vy]) ** 2 + float(row[vz]) ** 2
                kt += 0.5 * args.mass * v2
                kr += 0.5 * args.inertia * (float(row[wx]) ** 2 + float(row[wy]) ** 2
                                            + float(row[wz]) ** 2)
                vmax = max(vmax, math.sqrt(v2))
                fast += math.sqrt(v2) > args.slow
                height += float(row[z])
            print(f"| {t:.3f} | {kt:.4g} | {kr:.4g} | {vmax:.3g} | {fast} "
                  f"| {args.mass * 9.81 * height:.5g} |")


if __name__ == "__main__":
    main()
