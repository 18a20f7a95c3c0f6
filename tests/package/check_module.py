"""Checks an installed Python module `saltus` (tests/package/run_package_test.cmake).

Usage: check_module.py PREFIX SCENE. The module imported must come from PREFIX (not from a build
tree on the path), and a run of SCENE (the shipped bouncing ball, first impact at
sqrt(2 h / g) = 0.428 s) to t = 0.5 s must finish with exactly one impact.
"""
import sys

import saltus

prefix, scene = sys.argv[1], sys.argv[2]
if not saltus.__file__.startswith(prefix):
    sys.exit("saltus imported from %s, not from %s" % (saltus.__file__, prefix))
sim = saltus.Simulation(saltus.Model.from_scene_file(scene))
result = sim.advance_to(0.5)
if not result.ok or sim.stats["impacts"] != 1:
    sys.exit("run to 0.5 s: ok = %s, impacts = %s (expected True, 1)"
             % (result.ok, sim.stats["impacts"]))
print("saltus", saltus.__version__, saltus.__file__, "impacts", sim.stats["impacts"])
