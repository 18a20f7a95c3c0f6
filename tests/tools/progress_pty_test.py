"""The progress bar of `saltus run` as a user sees it (issue 21, section 3): stderr on a
pseudo-terminal, an event-heavy run of a few seconds (a generated pile of 40 spheres, about 2 s). The bar appears
within half a second of the run's start (ProgressBar's delay, 0.4 s, plus the scene's set-up),
is redrawn at least twice a second (steps, events and outputs; at most every 0.1 s), counts the
events, gives a time left, and is erased at the end; with stderr not a terminal nothing is drawn.

Usage: progress_pty_test.py SALTUS_EXECUTABLE"""
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time
import unittest

SALTUS = None
DRAW = re.compile(r"\[[# ]{20}\]\s+([0-9.]+) %\s+t = (\S+) of (\S+) s\s+(\d+) events\s+(.*)")


def run_on_a_terminal(args):
    """Runs saltus with stderr on a pty; returns (exit code, [(seconds since launch, text)] of
    every redraw, the seconds the process ran)."""
    master, slave = pty.openpty()
    start = time.monotonic()
    process = subprocess.Popen([SALTUS] + args, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    draws, pending = [], ""
    while True:
        ready, _, _ = select.select([master], [], [], 0.05)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 4096).decode()
        except OSError:  # EIO: the child closed the terminal
            break
        now = time.monotonic() - start
        pending += chunk
        parts = pending.split("\r")
        pending = parts.pop()
        draws += [(now, p) for p in parts if DRAW.search(p)]
    code = process.wait()
    os.close(master)
    return code, draws, time.monotonic() - start


class ProgressOnATerminal(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.scene = os.path.join(self.dir.name, "pile.yaml")
        subprocess.run([SALTUS, "generate", "sphere_pile", "--n", "40", "--seed", "3", "--out",
                        self.scene], check=True, stdout=subprocess.DEVNULL)

    def tearDown(self):
        self.dir.cleanup()

    def test_drawn_early_and_often_with_events_and_time_left(self):
        out = os.path.join(self.dir.name, "out")
        code, draws, seconds = run_on_a_terminal(
            ["run", self.scene, "--t-end", "1.5", "--out", out])
        self.assertEqual(code, 0)
        if seconds < 1.5:
            self.skipTest("the run took %.2f s: too short to watch the bar" % seconds)
        self.assertGreaterEqual(len(draws), 2, draws)
        # First draw: the 0.4 s delay plus set-up; 0.5 s asked, 0.3 s margin for a loaded machine.
        self.assertLess(draws[0][0], 0.8, draws[:3])
        gaps = [b[0] - a[0] for a, b in zip(draws, draws[1:])]
        gaps.sort()
        self.assertLess(gaps[len(gaps) // 2], 0.5, gaps)  # median: twice a second at least
        events = [int(DRAW.search(text).group(4)) for _, text in draws]
        self.assertEqual(events, sorted(events))
        self.assertGreater(events[-1], 0)
        self.assertTrue(any("left" in text for _, text in draws), draws[-1])

    def test_silent_when_stderr_is_not_a_terminal(self):
        out = os.path.join(self.dir.name, "out2")
        result = subprocess.run([SALTUS, "run", self.scene, "--t-end", "0.3", "--out", out],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("\r", result.stderr)


if __name__ == "__main__":
    SALTUS = sys.argv.pop(1)
    unittest.main()
