#!/usr/bin/python3
"""Runs a scene with two integrators through the Python module and plots the height of the
first body against time, with the impacts marked (matplotlib).

    PYTHONPATH=build/python examples/python/two_integrators.py [SCENE.yaml] [--out plot.png]

By default: examples/bouncing_ball.yaml, integrators dopri5 at rtol 1e-8 and at rtol 1e-4 (or a
second integrator of the table when there is one), plot written to out/two_integrators.png.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import saltus  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("scene", nargs="?", default=os.path.join(root, "examples", "bouncing_ball.yaml"))
parser.add_argument("--out", default=os.path.join("out", "two_integrators.png"))
args = parser.parse_args()

model = saltus.Model.from_scene_file(args.scene)
names = saltus.integrators()
fig, ax = plt.subplots(figsize=(8, 4))
runs = []
if len(names) > 1:
    runs = [(names[0], model.options), (names[1], model.options)]
else:
    loose = model.options
    loose.rtol, loose.atol = 1e-4, 1e-6
    runs = [(names[0], model.options), (names[0] + " rtol 1e-4", loose)]
for label, opts in runs:
    opts.integrator = label.split()[0]
    sim = None
    for formulation in [opts.formulation, "index1", "index2", "index3", "ggl"]:
        opts.formulation = formulation  # the first one the integrator supports
        try:
            sim = saltus.Simulation(model, opts)
            break
        except saltus.InvalidArgument as error:
            reason = error
    if sim is None:
        raise SystemExit(f"{label}: {reason}")
    label += f" ({opts.formulation})"
    traj, result = sim.run(model.t_end)
    stats = sim.stats
    print(f"{label:28s} {result.status:10s} steps {stats['accepted_steps']:6d} "
          f"impacts {stats['impacts']:4d} wall {stats['wall_seconds']:.3f} s")
    ax.plot(traj.t, traj.q[:, 1], label=f"{label} ({stats['accepted_steps']} steps)")
    impacts = [e.t for e in traj.events if e.kind == saltus.EventKind.impact]
    ax.plot(impacts, [0.0] * len(impacts), "|", markersize=8)
ax.set_xlabel("t (s)")
ax.set_ylabel(model.position_names[1] + " (m)")
ax.set_title(model.name)
ax.legend()
os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
fig.savefig(args.out, dpi=120)
print("wrote", args.out)
