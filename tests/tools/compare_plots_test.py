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
           "wall_seconds", "t_end", "t_reached", "accepted_steps", "rejected_steps",
           "average_step", "smallest_step", "rhs_evaluations", "newton_iterations",
           "jacobian_evaluations", "factorizations", "impacts", "takeoffs", "contacts_closed",
           "time_events", "max_position_violation", "max_velocity_violation",
           "max_acceleration_violation", "error", "reference"]


def row(scene, integrator, rtol, status, wall, error="1e-6"):
    r = {c: "" for c in COLUMNS}
    r.update({"set": "s", "scene": scene, "integrator": integrator, "formulation": "index1",
              "rtol": rtol, "atol": rtol, "status": status, "wall_seconds": wall,
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
            self.assertEqual(compare_plots.main([path]), 0)
            for name in ["wp_a.png", "wp_b.png", "steps_a.png", "profile_s.png", "report.md"]:
                self.assertTrue(os.path.getsize(os.path.join(d, name)) > 0, name)
            with open(os.path.join(d, "report.md")) as f:
                report = f.read()
            # Table 3 row: rho_A(1.2) = 2/3 (it solves 2 of 3), rho_B(1.2) = 2/3.
            self.assertIn("| s | 3 | 0.67 (0.67) | 0.67 (1.00) |", report)
            self.assertIn("step_size_underflow", report)


if __name__ == "__main__":
    unittest.main()
