#!/usr/bin/python3
"""Checks the figures stated in the header comments of examples/**/*.yaml against a run.

Each check names an example, the quantity its header states, the stated value, the value measured
from `saltus run` (trajectory.csv, events.csv, summary.json) or read from the scene file itself,
and the tolerance with its origin. Prints a Markdown table; exit 1 if a check disagrees.

  scripts/check_examples.py [--saltus build/tools/saltus] [--only NAME] [--skip-dir friction]

The tolerances: figures printed with k significant digits agree to half a unit of the k-th digit
(plus the run's error); event times agree to the root finder's tolerance (1e-6 s here, far below
the printed digits); "at rest" heights agree to the projection tolerance (1e-6 m).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G = 9.81


class Run:
    """One `saltus run` of a scene: rows (dicts of floats), events (dicts) and the summary."""

    def __init__(self, saltus, scene, args, workdir):
        self.saltus, self.scene, self.args, self.workdir = saltus, scene, args, workdir

    def __getattr__(self, name):  # the run happens when its rows, events or summary are read
        if name not in ("rows", "events", "summary"):
            raise AttributeError(name)
        self._run()
        return getattr(self, name)

    def _run(self):
        saltus, scene, args, workdir = self.saltus, self.scene, self.args, self.workdir
        out = os.path.join(workdir, scene.replace("/", "_") + "_" + str(abs(hash(tuple(args)))))
        cmd = [saltus, "run", os.path.join(ROOT, "examples", scene + ".yaml"), "--out", out]
        done = subprocess.run(cmd + list(args), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
        with open(os.path.join(out, "trajectory.csv")) as f:
            self.rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
        with open(os.path.join(out, "events.csv")) as f:
            self.events = list(csv.DictReader(f))
        with open(os.path.join(out, "summary.json")) as f:
            self.summary = json.load(f)

    def start(self):
        """summary.json of a run to 1e-9 s: the energy at t = 0 and the topology."""
        if not hasattr(self, "_start"):
            self._start = Run(self.saltus, self.scene, ["--t-end", "1e-9"], self.workdir).summary
        return self._start

    def start_energy(self):
        return self.start()["energy_final"]

    def first(self, kind, contact=None, after=-1.0):
        for e in self.events:
            if e["kind"] == kind and float(e["t"]) > after and (
                    contact is None or contact in e["contacts"].split(";")):
                return e
        return None

    def last(self, kind):
        hits = [e for e in self.events if e["kind"] == kind]
        return hits[-1] if hits else None

    def at(self, t):
        """The last row at or before t (after an event: its post-event row)."""
        best = self.rows[0]
        for r in self.rows:
            if r["t"] <= t + 1e-12:
                best = r
        return best

    def final(self):
        return self.rows[-1]


def scene_file(scene):
    with open(os.path.join(ROOT, "examples", scene + ".yaml")) as f:
        return yaml.safe_load(f)


def body(scene_doc, name):
    return next(b for b in scene_doc["bodies"] if b["name"] == name)


# ---- The checks: (scene, quantity, stated, measure(run or None), tolerance, origin) ----------

def checks():
    c = []
    # Bouncing ball (planar) and its compare-set copy.
    for scene in ("bouncing_ball", "sets/scenes/bouncing_disk"):
        c += [(scene, "first impact t1 = sqrt(2*0.9/9.81) (s)", 0.428353,
               lambda R: float(R.first("impact")["t"]), 1e-6, "6 digits printed"),
              (scene, "impacts accumulate at t_inf (s)", 8.13871,
               lambda R: float(R.first("contact_closed", after=1.0)["t"]), 2e-3,
               "the loop closes the contact after the last bounce above its threshold"),
              (scene, "rest: centre height (m)", 0.1, lambda R: R.final()["ball.y"]
               if "ball.y" in R.final() else R.final()["disk.y"], 1e-6, "projection tolerance")]
    c += [("bouncing_ball", "inertia 2/5 m r^2 (kg m^2)", 0.004,
           lambda _: body(scene_file("bouncing_ball"), "ball")["inertia"], 1e-12, "exact")]
    # Ball on a table (spatial).
    c += [("spatial/ball_on_table", "first impact t1 (s)", 0.319275,
           lambda R: float(R.first("impact")["t"]), 1e-6, "6 digits printed"),
          ("spatial/ball_on_table", "first impulse m (1 + e) v1, v1 = 3.13209 (N s)",
           1.8 * 3.13209, lambda R: float(R.first("impact")["impulse"].split(";")[0]), 1e-5,
           "6 digits of v1"),
          ("spatial/ball_on_table", "impacts accumulate at t_inf (s)", 2.87348,
           lambda R: float(R.first("contact_closed", after=0.5)["t"]), 2e-3,
           "threshold closing before t_inf"),
          ("spatial/ball_on_table", "rest: centre height (m)", 0.82,
           lambda R: R.final()["ball.z"], 1e-6, "projection tolerance")]
    # Rocking block: inertia of a 0.4 x 0.2 block, left corner height, rest.
    c += [("rocking_block", "inertia m (w^2 + h^2)/12 (kg m^2)", (0.4**2 + 0.2**2) / 12,
           lambda _: body(scene_file("rocking_block"), "block")["inertia"], 1e-12, "exact"),
          ("rocking_block", "initial left corner height (m)", 0.0505,
           lambda R: R.rows[0]["block.y"] - 0.2 * math.sin(R.rows[0]["block.theta"]) -
           0.1 * math.cos(R.rows[0]["block.theta"]), 5e-5, "3 significant digits"),
          ("rocking_block", "rest on both corners: centre height (m)", 0.1,
           lambda R: R.final()["block.y"], 1e-6, "projection tolerance"),
          ("rocking_block", "rest on both corners: angle (rad)", 0.0,
           lambda R: R.final()["block.theta"], 1e-6, "projection tolerance")]
    # Slider-crank with a stop.
    c += [("slider_crank_stop", "initial slider centre x_s = sqrt(0.6^2 - 0.2^2) (m)", 0.565685,
           lambda R: R.rows[0]["slider.x"], 1e-6, "6 digits printed"),
          ("slider_crank_stop", "initial rod angle (rad)", -0.339837,
           lambda R: R.rows[0]["rod.theta"], 1e-6, "6 digits printed"),
          ("slider_crank_stop", "slider velocity at start (m/s)", 2.0,
           lambda R: R.rows[0]["slider.vx"], 1e-6, "consistent initial velocity"),
          ("slider_crank_stop", "slider centre at the first impact (m)", 0.7,
           lambda R: R.at(float(R.first("impact")["t"]))["slider.x"], 1e-6,
           "event location tolerance")]
    # Newton's cradle: simultaneous impact, e = 1.
    V = math.sqrt(2 * G * 0.4 * (1 - math.cos(0.5)))
    c += [("spatial/newtons_cradle", "V = sqrt(2 g 0.4 (1 - cos 0.5)) (m/s)", 0.980169, lambda _: V,
           1e-6, "arithmetic of the header"),
          ("spatial/newtons_cradle", "impulse of 1-2: m (1 + 0.6) V (N s)", 0.2 * 1.6 * 0.980169,
           lambda R: float(R.first("impact")["impulse"].split(";")[0]), 1e-5,
           "6 digits of V; event location tolerance"),
          ("spatial/newtons_cradle", "ball 1 after: -0.6 V (m/s)", -0.6 * 0.980169,
           lambda R: R.at(float(R.first("impact")["t"]))["ball1.vx"], 1e-5, "as above"),
          ("spatial/newtons_cradle", "ball 5 after: 0.4 V (m/s)", 0.4 * 0.980169,
           lambda R: R.at(float(R.first("impact")["t"]))["ball5.vx"], 1e-5, "as above")]
    # Spinning top: steady precession, constant tilt.
    c += [("spatial/spinning_top", "tilt stays 0.3 rad (max deviation, rad)", 0.0,
           lambda R: max(abs(tilt(r, "top") - 0.3) for r in R.rows), 1e-6, "integrator tolerance"),
          ("spatial/spinning_top", "precession rate Omega (rad/s)", 0.82453619590491523,
           lambda R: precession(R, "top"), 1e-6, "integrator tolerance")]
    # Spatial slider-crank: closed-form slider position.
    c += [("spatial/slider_crank", "slider x(t) = sqrt(0.3^2 - p_y^2 - p_z^2), max error (m)", 0.0,
           lambda R: max(abs(r["slider.x"] - slider_x(r["t"])) for r in R.rows), 1e-6,
           "constraint tolerance")]
    # Box stack and tumbling box at rest.
    c += [("spatial/box_stack", "rest heights 0.1, 0.28, 0.42 (max error, m)", 0.0,
           lambda R: max(abs(R.final()[b + ".z"] - h) for b, h in
                         zip(("low", "middle", "top"), (0.1, 0.28, 0.42))), 1e-6,
           "projection tolerance"),
          ("spatial/tumbling_box", "rest on its largest face: z (m)", 0.05,
           lambda R: R.final()["box.z"], 1e-6, "projection tolerance"),
          ("spatial/tumbling_box", "horizontal momentum x kept (kg m/s)", 0.2,
           lambda R: R.final()["box.vx"], 1e-6, "frictionless")]
    # Double pendulum (spatial, Haug): conservative energy.
    c += [("spatial/double_pendulum", "energy stays E0 = -382.59 J (final, J)", -382.59,
           lambda R: R.summary["energy_final"], 1e-3, "IFToMM criterion 1e-3 J")]
    # Frictional spheres (friction3d).
    c += [("friction3d/rolling_sphere", "slip ends t* = 2 v0/(7 mu g) (s)", 0.1456240,
           lambda R: float(R.first("stick")["t"]), 1e-6, "7 digits printed"),
          ("friction3d/rolling_sphere", "rolling speed 5/7 v0 (m/s)", 0.7142857,
           lambda R: R.final()["ball.vx"], 1e-6, "7 digits printed"),
          ("friction3d/sphere_sidespin", "slip ends t* (s)", 0.1628126,
           lambda R: float(R.first("stick")["t"]), 1e-6, "7 digits printed"),
          ("friction3d/sphere_sidespin", "v_x after (m/s)", 0.7142857,
           lambda R: R.final()["ball.vx"], 1e-6, "7 digits printed"),
          ("friction3d/sphere_sidespin", "v_y after (m/s)", -0.1428571,
           lambda R: R.final()["ball.vy"], 1e-6, "7 digits printed"),
          ("friction3d/billiard_draw", "collision t_c (s)", 0.193334,
           lambda R: float(R.first("impact", after=0.01)["t"]), 1e-6, "6 digits printed"),
          ("friction3d/billiard_draw", "cue ball rolls back at (m/s)", -0.871913,
           lambda R: R.final()["cue.vx"], 1e-6, "6 digits printed"),
          ("friction3d/billiard_draw", "object ball rolls at (m/s)", 1.157628,
           lambda R: R.final()["object.vx"], 1e-6, "6 digits printed"),
          ("friction3d/rolling_resistance", "stops at x_s = v0^2/(2a) (m)", 0.17839,
           lambda R: R.final()["ball.x"] - R.rows[0]["ball.x"], 1e-3,
           "Moreau-Jean h = 1e-3: O(h) in the stopping time"),
          ("friction3d/box_incline_slide", "a = g (sin a - mu cos a) (m/s^2)", 1.0247,
           lambda R: -2 * (R.final()["box.x"] - R.rows[0]["box.x"]) / R.final()["t"] ** 2, 5e-5,
           "5 significant digits"),
          ("friction3d/pile_friction", "top centre height z (m)", 0.1316497,
           lambda R: R.final()["top.z"], 1e-6, "projection tolerance"),
          ("friction3d/sphere_oblique_impact", "dv_x = -mu P_N/m, P_N/m = sqrt(1 + 2 g 1 mm) (m/s)",
           -0.2 * math.sqrt(1 + 2 * G * 1e-3),
           lambda R: R.at(float(R.first("impact")["t"]))["ball.vx"] - 10.0, 1e-6,
           "just after the impact; the header rounds P_N to 1.0 N s ('approximately')"),
          ("friction3d/sphere_oblique_impact", "no sideways deflection: v_y after (m/s)", 0.0,
           lambda R: R.at(float(R.first("impact")["t"]))["ball.vy"], 1e-9, "exact cone"),
          ("friction3d/ball_chain_friction", "struck balls roll at 5/7 0.5 (m/s)", 0.357143,
           lambda R: R.final()["b3.vx"], 1e-6, "6 digits printed"),
          ("friction3d/ball_chain_friction", "struck balls roll from (s)", 0.372812,
           lambda R: float(R.first("stick", after=0.3)["t"]), 1e-6, "6 digits printed"),
          ("friction3d/ball_chain_friction", "striker rolls from (s)", 0.518436,
           lambda R: float(R.last("stick")["t"]), 1e-6, "6 digits printed"),
          ("friction3d/ball_chain_friction", "striker rolls at (m/s)", -0.071429,
           lambda R: R.final()["striker.vx"], 1e-6, "6 digits printed")]
    # Flexible beam sliding with friction.
    c += [("flexible/sliding_beam", "stops at t = v0/(mu g) (s)", 0.3398,
           lambda R: next(r["t"] for r in R.rows if abs(r["beam.vx"]) < 1e-9), 0.01,
           "output_step 0.01 s"),
          ("flexible/sliding_beam", "slides v0^2/(2 mu g) = 0.16989 m (+ sag term, m)", 0.16989,
           lambda R: R.final()["beam.x"] - R.rows[0]["beam.x"], 1e-4,
           "plus mu times the sag drop, 2.7e-5 m")]
    # Rest states and kinematic facts.
    c += [("ball_stack", "rest: centre heights 0.1, 0.3, 0.5 (max error, m)", 0.0,
           lambda R: max(abs(R.final()[b + ".y"] - h) for b, h in
                         zip(("bottom", "middle", "top"), (0.1, 0.3, 0.5))), 1e-6,
           "projection tolerance"),
          ("planar/driven_slider_crank", "the pin stays at x = 0.4 m (max deviation, m)", 0.0,
           lambda R: max(abs(r["pin.x"] - 0.4) for r in R.rows), 1e-6, "constraint tolerance"),
          ("spatial/rest_on_terrain", "lying cylinders rest at z = 0.05 m (max error, m)", 0.0,
           lambda R: max(abs(R.final()[b + ".z"] - 0.05) for b in ("cyl_lying_m", "cyl_lying_b")),
           1e-6, "projection tolerance"),
          ("spatial/rest_on_terrain", "standing cylinders rest at z = 0.15 m (max error, m)", 0.0,
           lambda R: max(abs(R.final()[b + ".z"] - 0.15)
                         for b in ("cyl_standing_m", "cyl_standing_b")), 1e-6,
           "projection tolerance"),
          ("spatial/rest_on_terrain", "flat ellipsoids rest at z = 0.06 m (max error, m)", 0.0,
           lambda R: max(abs(R.final()[b + ".z"] - 0.06) for b in ("egg_m", "egg_b")), 1e-6,
           "projection tolerance")]
    # "Energy never increases at an impact" (largest E+ - E- over the events, J; 1e-9 J: the
    # round-off of the energy sums) and "no sphere leaves the box".
    for scene in ("spatial/sphere_pile_20", "spatial/sphere_in_bowl", "spatial/tumbling_box",
                  "spatial/box_stack", "flexible/beam_stop"):
        c.append((scene, "largest energy rise at an event (J)", 0.0,
                  lambda R: max([0.0] + [float(e["energy_after"]) - float(e["energy_before"])
                                         for e in R.events]), 1e-9, "never increases"))
    c.append(("spatial/sphere_pile_20", "spheres stay in the box: max |x|, |y| + r - 0.3125 (m)",
              0.0, lambda R: max(0.0, max(abs(v) for r in R.rows for k, v in r.items()
                                          if k.endswith((".x", ".y"))) + 0.05 - 0.3125), 1e-6,
              "contact tolerance"))
    # Conservative mechanisms: the energy drift over the run.
    c += [("spatial/bricard", "energy drift over 10 s (J)", 0.0,
           lambda R: R.summary["energy_final"] - R.start_energy(), 1e-3,
           "IFToMM criterion 1e-3 J"),
          ("spatial/n_chain_8", "T + V stays at its initial value (relative drift)", 0.0,
           lambda R: (R.summary["energy_final"] - R.start_energy()) / R.start_energy(), 1e-6,
           "integrator tolerance")]
    # Stated topologies (summary.json "topology" of a run to 1e-9 s).
    for scene, key, value in (("spatial/bricard", "constraint_rows", 30),
                              ("spatial/bricard", "rank_of_G", 29),
                              ("spatial/bricard", "degrees_of_freedom", 1),
                              ("spatial/excited_chain_8", "constraint_rows", 46),
                              ("spatial/excited_chain_8", "degrees_of_freedom", 8),
                              ("spatial/n_chain_8", "constraint_rows", 24),
                              ("spatial/n_chain_8", "degrees_of_freedom", 24),
                              ("spatial/four_link", "constraint_rows", 18),
                              ("spatial/four_link", "degrees_of_freedom", 0)):
        c.append((scene, f"topology: {key}", value,
                  lambda R, key=key: R.start()["topology"][key], 0, "exact"))
    # Stated masses and inertias against the scene files.
    c += [("planar/sprung_pendulum", "inertia m L^2/12 (kg m^2)", 2 * 1.2**2 / 12,
           lambda _: body(scene_file("planar/sprung_pendulum"), "bar")["inertia"], 1e-12, "exact"),
          ("spatial/double_pendulum", "bar 1 mass 7800 * 4 * 0.05^2 (kg)", 78.0,
           lambda _: body(scene_file("spatial/double_pendulum"), "bar1")["mass"], 1e-12, "exact"),
          ("spatial/double_pendulum", "bar 1 transverse J m (w^2 + L^2)/12", 78 * (0.05**2 + 16) / 12,
           lambda _: body(scene_file("spatial/double_pendulum"), "bar1")["inertia"][1], 1e-9,
           "exact"),
          ("spatial/newtons_cradle", "string length sqrt(0.2^2 + 0.4^2) (m)", 0.447214,
           lambda _: math.hypot(0.2, 0.4), 1e-6, "arithmetic of the header")]
    for scene, b, m, h in (("spatial/box_stack", "low", 2, (0.2, 0.15, 0.1)),
                           ("spatial/box_stack", "middle", 1.5, (0.15, 0.12, 0.08)),
                           ("spatial/box_stack", "top", 1, (0.1, 0.1, 0.06)),
                           ("spatial/tumbling_box", "box", 1, (0.15, 0.1, 0.05))):
        c.append((scene, f"{b}: solid box J = m/3 diag(...), max error (kg m^2)", 0.0,
                  lambda _, scene=scene, b=b, m=m, h=h: box_inertia_error(scene, b, m, h), 1e-9,
                  "exact"))
    for name, J in (("cyl_lying_m", (0.008125, 0.008125, 0.00125)),
                    ("egg_m", (0.002, 0.00272, 0.00328))):
        c.append(("spatial/rest_on_terrain", f"{name}: stated J (max error, kg m^2)", 0.0,
                  lambda _, name=name, J=J: max(
                      abs(a - b) for a, b in
                      zip(body(scene_file("spatial/rest_on_terrain"), name)["inertia"], J)), 1e-12,
                  "cylinder m(3r^2 + L^2)/12, m r^2/2; ellipsoid m(b^2 + c^2)/5 ..."))
    # Planar friction (examples/friction/).
    xe = 0.3 * G / 100
    c += [("friction/friction_oscillator", "x_e = mu m g / k (m)", 0.02943, lambda _: xe, 5e-6,
           "arithmetic of the header"),
          ("friction/friction_oscillator", "sticks to the belt at t1 (s)", 0.074719,
           lambda R: float(R.first("stick")["t"]), 1e-6, "6 digits printed"),
          ("friction/friction_oscillator", "slips again at t2 (s)", 0.182668,
           lambda R: float(R.first("slip", after=0.075)["t"]), 1e-6, "6 digits printed"),
          ("friction/incline_slide", "a = g (sin a - mu cos a) from -2 x(t)/t^2 (m/s^2)", 1.024683,
           lambda R: -2 * (R.final()["block.x"] - R.rows[0]["block.x"]) / R.final()["t"] ** 2,
           1e-6, "7 digits printed; x is along the slope (the ground line)"),
          ("friction/incline_stick", "no event after the initial closing (count)", 0,
           lambda R: sum(float(e["t"]) > 0 for e in R.events), 0, "exact"),
          ("friction/rolling_disk", "slip ends t* = s0/(3 mu g) (s)", 0.509684,
           lambda R: float(R.first("stick")["t"]), 1e-6, "6 digits printed"),
          ("friction/rolling_disk", "then rolls at (m/s)", 2.0, lambda R: R.final()["disk.vx"],
           1e-6, "integrator tolerance"),
          ("friction/sliding_block", "stops (stick) at t* = v0/(mu g) (s)", 0.679579,
           lambda R: float(R.first("stick")["t"]), 1e-6, "6 digits printed"),
          ("friction/sliding_block", "after s = v0^2/(2 mu g) (m)", 0.679579,
           lambda R: R.final()["block.x"] - R.rows[0]["block.x"], 1e-6, "6 digits printed"),
          ("friction/rocking_block_friction", "Housner factor w+/w- at the first impact", 0.7,
           lambda R: ratio_at_first(R, "rocker.vtheta", "rocker_left"), 1e-6,
           "1 - (3/2) sin^2 atan(0.1/0.2), exact"),
          ("friction/kane_pendulum", "energy gain at the impact, E+/E- - 1", 0.36,
           lambda R: kinetic_gain(R), 0.005, "'approximately 36 %'"),
          ("friction/painleve_rod", "rough rod: tangential impact at t = 0 (s)", 0.0,
           lambda R: float(R.first("tangential_impact")["t"]), 1e-12, "exact")]
    # Parameters of compare-set scenes.
    c += [("sets/scenes/four_bar", "coupler length sqrt(1.2^2 + 0.4^2) (m)", 1.264911,
           lambda _: math.hypot(1.2, 0.4), 1e-6, "arithmetic of the header"),
          ("sets/scenes/stiff_torsion_chain", "omega0 of a 120 deg swing (rad/s)", 4.6981,
           lambda _: math.sqrt(2 * 2 * G * 1.0 * 1.5 / (2 * 4 / 3)), 5e-5,
           "arithmetic: I = m l^2/3, m = 2, l = 2")]
    return c


def ratio_at_first(R, column, contact):
    """column just after / just before the first impact of `contact` (the two event rows)."""
    t = float(R.first("impact", contact=contact)["t"])
    at = [r[column] for r in R.rows if r["t"] == t]
    return at[-1] / at[0]


def kinetic_gain(R, bodies=("rod1", "rod2"), m=1.0, J=1.0 / 12):
    """K+/K- - 1 at the first impact: K from the two event rows of planar bodies (m, J)."""
    t = float(R.first("impact")["t"])
    at = [r for r in R.rows if r["t"] == t]

    def K(r):
        return sum(0.5 * m * (r[b + ".vx"] ** 2 + r[b + ".vy"] ** 2) + 0.5 * J * r[b + ".vtheta"] ** 2
                   for b in bodies)

    return K(at[-1]) / K(at[0]) - 1


def box_inertia_error(scene, name, m, h):
    hx, hy, hz = h
    J = (m / 3 * (hy**2 + hz**2), m / 3 * (hx**2 + hz**2), m / 3 * (hx**2 + hy**2))
    b = body(scene_file(scene), name)
    return max(abs(b["mass"] - m), *(abs(a - c) for a, c in zip(b["inertia"], J)))


def quat_axis_z(row, b):
    w, x, y, z = (row[b + k] for k in (".qw", ".qx", ".qy", ".qz"))
    return (2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y))


def tilt(row, b):
    return math.acos(max(-1.0, min(1.0, quat_axis_z(row, b)[2])))


def precession(R, b):
    """Mean azimuth rate of the symmetry axis over the run (unwrapped)."""
    phi = [math.atan2(*quat_axis_z(r, b)[:2][::-1]) for r in R.rows]
    total = sum(math.remainder(b2 - a, 2 * math.pi) for a, b2 in zip(phi, phi[1:]))
    return total / (R.rows[-1]["t"] - R.rows[0]["t"])


def slider_x(t):
    theta = math.pi / 2 - 2 * math.pi * t
    py, pz = 0.1 + 0.08 * math.cos(theta), 0.12 + 0.08 * math.sin(theta)
    return math.sqrt(0.3**2 - py**2 - pz**2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--saltus", default=os.path.join(ROOT, "build", "tools", "saltus"))
    ap.add_argument("--only", help="check only scenes whose name contains this")
    ap.add_argument("--skip-dir", action="append", default=[],
                    help="skip examples/DIR/ (repeatable)")
    args = ap.parse_args()
    runs = {}
    failed = 0
    print("| example | quantity | stated | measured | |diff| | tol | origin | ok |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for scene, what, stated, measure, tol, origin in checks():
            if args.only and args.only not in scene:
                continue
            if any(scene.startswith(d.rstrip("/") + "/") for d in args.skip_dir):
                continue
            try:
                needs_run = measure.__code__.co_varnames[:1] != ("_",)
                if needs_run and scene not in runs:
                    runs[scene] = Run(args.saltus, scene, [], work)
                got = float(measure(runs.get(scene)))
                diff = abs(got - stated)
                ok = diff <= tol
                cells = [f"{stated:.10g}", f"{got:.10g}", f"{diff:.2g}"]
            except Exception as e:  # a missing event or column is a failed check
                ok, cells = False, [f"{stated:.10g}", f"error: {e}"[:80], "-"]
            failed += not ok
            print(f"| {scene} | {what} | " + " | ".join(cells) +
                  f" | {tol:g} | {origin} | {'yes' if ok else '**NO**'} |", flush=True)
    print(f"\n{failed} check(s) disagree.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
