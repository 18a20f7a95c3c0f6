#!/usr/bin/python3
"""The clearance slider-crank: Saltus (event-driven) against Siconos' example (time-stepping).

Runs
  bench/slider_crank_siconos  Siconos' example Mechanics/SliderCrank
                              (MoreauJeanCombinedProjectionOSI, h = 1e-4 s, 0.2 s), checked first
                              against rows of its published reference file
                              (bench/data/siconos_slider_crank_ref_rows.csv);
  tools/saltus run            tests/tools/data/slider_crank_siconos_data.yaml: the same data
                              (free crank, Siconos' corner geometry), DOPRI5 rtol 1e-8, output
                              every 1e-4 s;
and compares, on the 1e-4 s grid:
  - the slider's position and velocity (y across the guide, x along it) and the crank's speed:
    largest differences and where;
  - per corner: the first contact (first step with a positive normal impulse in Siconos, first
    impact event in Saltus), the number of impacts (Siconos: steps whose impulse is positive
    after a step where it was zero; Saltus: impact events involving the corner) and the fraction
    of the grid's times where the corner's gap is below --gap-tol (default 1e-6 m, 0.1 % of the
    clearance): in contact;
  - the flights: grid times where every gap exceeds --gap-tol.
Corner gaps are computed from the positions with the same formulas in both (Siconos'
SliderCrankPlugin.cpp: corners at (∓a, ±b), walls at y = ±(b + c)).

Usage: bench/compare_slider_crank.py [--build-dir build] [--gap-tol 1e-6] [--json FILE]
Only /usr/bin/python3 and numpy.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENE = os.path.join(SOURCE_DIR, "tests", "tools", "data", "slider_crank_siconos_data.yaml")
REF_ROWS = os.path.join(SOURCE_DIR, "bench", "data", "siconos_slider_crank_ref_rows.csv")
L1, L2, A, B, C = 0.153, 0.306, 0.05, 0.025, 0.001
M1, M2, M3, J1, J2, G = 0.038, 0.038, 0.076, 7.4e-5, 5.9e-4, 9.81
CORNERS = ["top_left", "top_right", "bottom_left", "bottom_right"]  # Siconos' corners 1–4
ENV = dict(os.environ)
ENV.setdefault("OPENBLAS_NUM_THREADS", "1")


def corner_gaps(y, theta):
    """Gaps g₁..g₄ (columns) of Siconos' SliderCrankPlugin.cpp, from the slider's y and angle."""
    s, c = np.sin(theta), np.cos(theta)
    return np.column_stack([B + C - (y - A * s + B * c), B + C - (y + A * s + B * c),
                            B + C + (y - A * s - B * c), B + C + (y + A * s - B * c)])


def energy(theta1, theta2, omega1, omega2):
    """T + V of Siconos' model (SliderCrankPlugin.cpp: its M and the potential of its F_int)."""
    m11 = J1 + (0.25 * M1 + M2 + M3) * L1**2
    m22 = J2 + (0.25 * M2 + M3) * L2**2
    m12 = (0.5 * M2 + M3) * L1 * L2 * np.cos(theta2 - theta1)
    kinetic = 0.5 * (m11 * omega1**2 + 2 * m12 * omega1 * omega2 + m22 * omega2**2)
    return kinetic + G * ((0.5 * M1 + M2 + M3) * L1 * np.sin(theta1)
                          + (0.5 * M2 + M3) * L2 * np.sin(theta2))


def siconos_run(build, tmp, h):
    path = os.path.join(tmp, "siconos_%s.csv" % h)
    exe = os.path.join(build, "bench", "slider_crank_siconos")
    proc = subprocess.run([exe, "--h", h, "--trajectory", path], capture_output=True, text=True,
                          env=ENV, check=False)
    if proc.returncode != 0:
        sys.exit("slider_crank_siconos failed: " + proc.stdout + proc.stderr)
    d = np.loadtxt(path, delimiter=",", skiprows=1)
    t, th1, th2, th3, w1, w2, w3 = (d[:, i] for i in range(7))
    return dict(t=t, theta1=th1, omega1=w1, theta3=th3, energy=energy(th1, th2, w1, w2),
                x=L1 * np.cos(th1) + L2 * np.cos(th2), y=L1 * np.sin(th1) + L2 * np.sin(th2),
                vx=-L1 * np.sin(th1) * w1 - L2 * np.sin(th2) * w2,
                vy=L1 * np.cos(th1) * w1 + L2 * np.cos(th2) * w2,
                gaps_plugin=d[:, 7:11], impulses=d[:, 11:15], raw=d)


def saltus_run(build, tmp):
    out = os.path.join(tmp, "saltus")
    exe = os.path.join(build, "tools", "saltus")
    proc = subprocess.run([exe, "run", SCENE, "--out", out], capture_output=True, text=True,
                          env=ENV, check=False)
    if proc.returncode != 0:
        sys.exit("saltus run failed: " + proc.stdout + proc.stderr)
    with open(os.path.join(out, "trajectory.csv")) as f:
        header = f.readline().strip().split(",")
    d = np.loadtxt(os.path.join(out, "trajectory.csv"), delimiter=",", skiprows=1)
    col = {name: d[:, i] for i, name in enumerate(header)}
    impacts = {name: [] for name in CORNERS}
    with open(os.path.join(out, "events.csv")) as f:
        for row in csv.DictReader(f):
            if row["kind"] == "impact":
                for name in row["contacts"].split(";"):
                    impacts[name].append(float(row["t"]))
    # Saltus' bodies: the rod's angle is Siconos' θ₂, the crank's θ₁.
    e = energy(col["crank.theta"], col["rod.theta"], col["crank.vtheta"], col["rod.vtheta"])
    return dict(t=col["t"], theta1=col["crank.theta"], omega1=col["crank.vtheta"], energy=e,
                theta3=col["slider.theta"], x=col["slider.x"], y=col["slider.y"],
                vx=col["slider.vx"], vy=col["slider.vy"], impacts=impacts)


def onsets(t, impulses):
    """Per corner: times (step ends) where the impulse turns positive after a zero one."""
    out = {}
    for k, name in enumerate(CORNERS):
        p = impulses[:, k] > 0
        out[name] = [float(t[i]) for i in range(1, len(t)) if p[i] and not p[i - 1]]
    return out


def check_driver(sic):
    ref = np.loadtxt(REF_ROWS, delimiter=",", skiprows=2)
    worst = np.zeros(ref.shape[1] - 1)
    for row in ref:
        i = int(np.argmin(np.abs(sic["t"] - row[0])))
        mine = sic["raw"][i, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]].copy()
        mine[0] /= 2 * np.pi  # crank revolutions
        worst = np.maximum(worst, np.abs(mine - row[1:]))
    return worst


def compare(sal, sic, grid, gap_tol):
    """Prints and returns the comparison of Saltus with one Siconos run on the grid."""
    at = {}
    for name, run in (("saltus", sal), ("siconos", sic)):
        _, keep = np.unique(run["t"], return_index=True)
        at[name] = {key: np.interp(grid, run["t"][keep], run[key][keep])
                    for key in ("theta1", "omega1", "theta3", "x", "y", "vx", "vy", "energy")}
    result = {}
    print("  largest differences (Saltus − Siconos):")
    for key, unit in (("y", "m"), ("vy", "m/s"), ("x", "m"), ("vx", "m/s"), ("omega1", "rad/s")):
        d = at["saltus"][key] - at["siconos"][key]
        i = int(np.argmax(np.abs(d)))
        scale = np.max(np.abs(at["siconos"][key]))
        print("    %-7s %.3e %s at t = %.4f s (Siconos' values within ±%.3e)"
              % (key, abs(d[i]), unit, grid[i], scale))
        result["max_diff_" + key] = [float(abs(d[i])), float(grid[i]), float(scale)]
    for when in (0.002, 0.1, grid[-1]):
        i = int(np.argmin(np.abs(grid - when)))
        print("    t = %.3f s: energy %.4f / %.4f J, crank %.4f / %.4f rev, ω₁ %.2f / %.2f rad/s"
              % (grid[i], at["saltus"]["energy"][i], at["siconos"]["energy"][i],
                 at["saltus"]["theta1"][i] / (2 * np.pi), at["siconos"]["theta1"][i] / (2 * np.pi),
                 at["saltus"]["omega1"][i], at["siconos"]["omega1"][i]))
    result["energy_end"] = [float(at["saltus"]["energy"][-1]), float(at["siconos"]["energy"][-1])]
    gaps_sal = corner_gaps(at["saltus"]["y"], at["saltus"]["theta3"])
    gaps_sic = corner_gaps(at["siconos"]["y"], at["siconos"]["theta3"])
    on_sic = onsets(sic["t"], sic["impulses"])
    print("  per corner (in contact: gap ≤ %.0e m on the grid), Saltus / Siconos:" % gap_tol)
    print("    %-13s %-20s %-9s %-18s %s" % ("corner", "first contact (s)", "impacts",
                                            "time in contact", "first impacts"))
    corners = {}
    for k, name in enumerate(CORNERS):
        f_sal = float(np.mean(gaps_sal[:, k] <= gap_tol))
        f_sic = float(np.mean(gaps_sic[:, k] <= gap_tol))
        a, b = sal["impacts"][name], on_sic[name]
        first = "%s / %s" % ("%.5f" % a[0] if a else "-", "%.5f" % b[0] if b else "-")
        print("    %-13s %-20s %-9s %5.1f %% / %5.1f %%  %s / %s" % (
            name, first, "%d / %d" % (len(a), len(b)), 100 * f_sal, 100 * f_sic,
            ", ".join("%.4f" % x for x in a[:4]), ", ".join("%.4f" % x for x in b[:4])))
        corners[name] = dict(impacts_saltus=a, impacts_siconos=b, contact_fraction_saltus=f_sal,
                             contact_fraction_siconos=f_sic)
    result["corners"] = corners
    flight_sal = np.all(gaps_sal > gap_tol, axis=1)
    flight_sic = np.all(gaps_sic > gap_tol, axis=1)
    print("  flight (every gap > %.0e m): %.1f %% / %.1f %% of the time; the same state (flight "
          "or contact) at %.1f %% of the grid times"
          % (gap_tol, 100 * flight_sal.mean(), 100 * flight_sic.mean(),
             100 * np.mean(flight_sal == flight_sic)))
    print("  largest |θ₃| %.1e / %.1e rad; largest penetration %.1e / %.1e m"
          % (np.max(np.abs(at["saltus"]["theta3"])), np.max(np.abs(at["siconos"]["theta3"])),
             max(0.0, -gaps_sal.min()), max(0.0, -gaps_sic.min())))
    result.update(flight_saltus=float(flight_sal.mean()), flight_siconos=float(flight_sic.mean()),
                  flight_agreement=float(np.mean(flight_sal == flight_sic)))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(SOURCE_DIR, "build"))
    parser.add_argument("--steps", default="1e-4,1e-5", help="Siconos steps; the first is the "
                        "published reference's and is checked against its rows")
    parser.add_argument("--gap-tol", type=float, default=1e-6)
    parser.add_argument("--json")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="slider_crank_")
    sal = saltus_run(args.build_dir, tmp)
    grid = np.round(np.arange(0.0, sal["t"][-1] + 1e-12, 1e-4), 10)
    results = {}
    for k, h in enumerate(args.steps.split(",")):
        sic = siconos_run(args.build_dir, tmp, h)
        print("\nSaltus (DOPRI5, rtol 1e-8) against Siconos h = %s, on a 1e-4 s grid:" % h)
        if k == 0:
            driver = check_driver(sic)
            print("  slider_crank_siconos against the published reference's rows: largest |Δ| "
                  "crank rev %.1e, θ₂ %.1e, ω₁ %.1e rad/s, gaps %.1e m"
                  % (driver[0], driver[1], driver[3], driver[6:].max()))
        results[h] = compare(sal, sic, grid, args.gap_tol)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
