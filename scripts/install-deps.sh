#!/usr/bin/env bash
# Installs the Debian packages Saltus needs, non-interactively. Safe to run twice: it only
# installs what is missing (and runs `apt-get update` only when something is missing).
set -euo pipefail
packages=(cmake g++ make libeigen3-dev libsiconos-numerics-dev libfcl-dev libboost-graph-dev
          libgtest-dev libgmock-dev libbenchmark-dev libyaml-cpp-dev python3 python3-numpy
          python3-matplotlib python3-yaml libhdf5-dev
          python3-dev pybind11-dev python3-pytest doxygen zlib1g-dev
          parallel python3-pip python3-setuptools
          clang   # clang: the sanitizer build of scripts/sanitize.sh
          munge slurmd slurmctld slurm-client)  # a local Slurm for tests/tools/slurm_test.sh
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
