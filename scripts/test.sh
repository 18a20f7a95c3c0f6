#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs the Debian packages, builds (Release, with
# tests, warnings as errors) and runs ctest. Safe to run twice.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" -DSALTUS_BUILD_TESTS=ON -DSALTUS_WERROR=ON
cd "$root/build"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
