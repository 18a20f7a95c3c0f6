#!/usr/bin/env bash
# Installs what the benchmarks in bench/ need, non-interactively:
#   libbenchmark-dev        Google Benchmark (the BM_* programs)
#   libsiconos-kernel-dev   Siconos 4.4 kernel, optional: only the Siconos comparison driver
#                           (bench/siconos_event_driven) uses it
#   python3, python3-numpy  bench/compare_siconos.py
#   libsundials-dev         SUNDIALS 6 (CVODE, IDA), optional: only bench/andrews_sundials
#                           (Andrews' squeezer side by side, bench/compare_sundials.py) uses it;
#                           --no-sundials skips it (it brings OpenMPI and PETSc with it)
#   python3-siconos, python3-yaml  bench/pile_siconos.py (Siconos' Moreau–Jean on the pile;
#                           with the Siconos packages, so --no-siconos skips them too)
# Safe to run any number of times: it checks each package with dpkg-query, and runs
# `apt-get update` and `apt-get install` only when something is missing.
# Usage: scripts/install-bench-deps.sh [--no-siconos] [--no-sundials]
set -euo pipefail

packages=(libbenchmark-dev python3 python3-numpy)
with_siconos=1
with_sundials=1
for arg in "$@"; do
  case "$arg" in
    --no-siconos) with_siconos=0 ;;
    --no-sundials) with_sundials=0 ;;
    -h | --help)
      sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "install-bench-deps: unknown argument '$arg' (known: --no-siconos, --no-sundials)" >&2
      exit 2
      ;;
  esac
done
((with_siconos)) && packages+=(libsiconos-kernel-dev python3-siconos python3-yaml)
((with_sundials)) && packages+=(libsundials-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-bench-deps: all present (${packages[*]})" >&2
  exit 0
fi

echo "install-bench-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
# libsundials-dev brings libhdf5-mpi-dev, whose hdf5.pc alternative outranks the serial one that
# Saltus links (tools/CMakeLists.txt): keep pkg-config on the serial HDF5.
serial_pc=/usr/lib/x86_64-linux-gnu/pkgconfig/hdf5-serial.pc
if ((with_sundials)) && [ -e "$serial_pc" ] && update-alternatives --list hdf5.pc >/dev/null 2>&1; then
  "${sudo_cmd[@]}" update-alternatives --set hdf5.pc "$serial_pc"
fi
