#!/usr/bin/env python3
"""Tests of tools/plots/compare_plots.py: performance ratios and profiles (Haddouni et al. 2017,
eq. 37-39) with failed runs counted as unsolved, and the report drawn from a small results.csv."""

import csv
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "plots"))
import compare_plots  # noqa: E402

COLUMNS = ["set", "scene", "integrator", "formulation", "rtol", "atol", "status", "reason",
           "wall_seconds", "cpu_seconds", "repeats", "t_end", "t_reached", "accepted_steps", "rejected_steps",
           "average_step", "smallest_step", "rhs_evaluations", "newton_iterations",
           "jacobian_evaluations", "factorizations", "impacts", "takeoffs", "contacts_closed",
           "time_events", "max_position_violation", "max_velocity_violation",
           "max_acceleration_violation", "error", "reference"]


def row(scene, integrator, rtol, status, wall, error="1e-6"):
    r = {c: "" for c in COLUMNS}
    r.update({"set": "s", "scene": scene, "integrator": integrator, "formulation": "index1",
              "rtol": rtol, "atol": rtol, "status": status, "wall_seconds": wall,
              "cpu_seconds": wall, "repeats": "3", "rhs_evaluations": "100",
              "accepted_steps": "10", "rejected_steps": "0", "average_step": "0.1",
              "max_position_violation": "0", "max_velocity_violation": "1e-9",
              "error": error if status == "ok" else ""})
    if status != "ok":
        r["reason"] = "step_size_underflow: h < h_min, at t = 1"
    return r


# Problems (a, 1e-3), (a, 1e-6), (b, 1e-3): A is fastest on the first two, B takes 1.1x and 3x;
# on the third A failed (its time, though smaller, must not count) and B solved it.
ROWS = [
    row("a", "A", "0.001", "ok", "1.0"), row("a", "B", "0.001", "ok", "1.1"),
    row("a", "A", "1e-06", "ok", "2.0"), row("a", "B", "1e-06", "ok", "6.0"),
    row("b", "A", "0.001", "failed", "0.01"), row("b", "B", "0.001", "ok", "5.0"),
]


class ProfileTest(unittest.TestCase):
    def test_ratios_count_failures_as_unsolved(self):
        problems, solvers, ratios = compare_plots.performance_ratios(ROWS)
        self.assertEqual(solvers, ["A/index1", "B/index1"])
        self.assertEqual(len(problems), 3)
        self.assertAlmostEqual(ratios[("a", 0.001)]["B/index1"], 1.1)  # exact quotient
        self.assertAlmostEqual(ratios[("a", 1e-6)]["B/index1"], 3.0)
        self.assertTrue(math.isinf(ratios[("b", 0.001)]["A/index1"]))
        self.assertAlmostEqual(ratios[("b", 0.001)]["B/index1"], 1.0)

    def test_rho(self):
        problems, _, ratios = compare_plots.performance_ratios(ROWS)
        rho = compare_plots.rho
        self.assertAlmostEqual(rho(ratios, problems, "A/index1", 1.0), 2 / 3)
        self.assertAlmostEqual(rho(ratios, problems, "A/index1", math.inf), 2 / 3)
        self.assertAlmostEqual(rho(ratios, problems, "B/index1", 1.0), 1 / 3)
        self.assertAlmostEqual(rho(ratios, problems, "B/index1", 1.2), 2 / 3)
        self.assertAlmostEqual(rho(ratios, problems, "B/index1", 3.0), 1.0)

    def test_cost_axes(self):
        # Every run has 100 rhs evaluations: on that axis all solvers tie on the solved problems.
        problems, _, ratios = compare_plots.performance_ratios(ROWS, "rhs")
        self.assertAlmostEqual(ratios[("a", 1e-6)]["B/index1"], 1.0)
        self.assertTrue(math.isinf(ratios[("b", 0.001)]["A/index1"]))  # failed stays unsolved
        steps = compare_plots.COSTS["steps"][1](ROWS[0])
        self.assertEqual(steps, 10.0)  # 10 accepted + 0 rejected

    def test_labels_scales_and_error_ratios(self):
        self.assertEqual(compare_plots.rtol_label(1e-4), "1e-4")
        self.assertEqual(compare_plots.rtol_label(0.001), "1e-3")
        ratios = compare_plots.error_over_rtol(ROWS, ["A/index1", "B/index1"])
        # A: errors 1e-6 at rtol 1e-3 and 1e-6 -> ratios 1e-3 and 1; median of two = mean.
        n, median, largest = ratios["A/index1"]
        self.assertEqual(n, 2)
        self.assertAlmostEqual(median, 0.5005)
        self.assertAlmostEqual(largest, 1.0)
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            self.skipTest("matplotlib is not installed for this interpreter")
        fig, axes = plt.subplots(1, 3)
        compare_plots.set_value_scale(axes[0], [0.0, 0.0], 1.0)
        compare_plots.set_value_scale(axes[1], [1e-9, 1e-6], 1.0)
        compare_plots.set_value_scale(axes[2], [0.0, 2.0, 50.0], 1.0)
        self.assertEqual(axes[0].get_yscale(), "linear")  # all zero: no symlog decades
        self.assertEqual(axes[1].get_yscale(), "log")
        self.assertEqual(axes[2].get_yscale(), "symlog")
        plt.close(fig)

    def test_report_and_figures(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed for this interpreter")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results.csv")
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, COLUMNS)
                w.writeheader()
                w.writerows(ROWS)
            with open(os.path.join(d, "provenance.json"), "w") as f:
                f.write('{"saltus_version": "9.9.9", "saltus_commit": "abc", "host": "h", '
                        '"command_line": "saltus compare --set x", "scene_sha256": "d1", '
                        '"collect_command_line": "saltus compare --collect J", '
                        '"scenes": [{"name": "ball", "file": "b.yaml", "sha256": "e3"}]}')
            self.assertEqual(compare_plots.main([path]), 0)
            for name in ["wp_a.png", "wp_b.png", "steps_a.png", "profile_s.png", "report.md"]:
                self.assertTrue(os.path.getsize(os.path.join(d, name)) > 0, name)
            with open(os.path.join(d, "report.md")) as f:
                report = f.read()
            # Table 3 row: rho_A(1.2) = 2/3 (it solves 2 of 3), rho_B(1.2) = 2/3.
            self.assertIn("| s | 3 | 0.67 (0.67) | 0.67 (1.00) |", report)
            self.assertIn("step_size_underflow", report)
            self.assertIn("Saltus 9.9.9 (commit abc) on h: `saltus compare --set x`", report)
            self.assertIn("merged by `saltus compare --collect J`", report)
            self.assertIn("the study's digest d1", report)
            self.assertIn("- ball: `b.yaml` e3", report)
            self.assertIn("| A/index1 | 2 | ", report)  # achieved error / rtol table


if __name__ == "__main__":
    unittest.main()
