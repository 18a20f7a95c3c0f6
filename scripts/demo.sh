#!/usr/bin/env bash
# The main job on a fresh machine: installs the Debian packages, builds Saltus (Release) and
# simulates the bouncing ball of Siconos' BouncingBallED benchmark (e = 0.9, through the
# accumulation of impacts to rest, t_end = 10 s). Results go to out/bouncing_ball/
# (trajectory.csv, events.csv, summary.json). Safe to run twice.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" -DSALTUS_BUILD_TESTS=OFF
cd "$root"
./build/tools/saltus run examples/bouncing_ball.yaml --out out/bouncing_ball
echo
echo "summary.json:"
cat out/bouncing_ball/summary.json
