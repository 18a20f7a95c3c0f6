#!/bin/bash
# The Slurm path of `saltus compare --emit-jobs` on a real, local single-node Slurm (issue 21 §8):
# starts munged, slurmctld and slurmd (Debian munge and slurm-wlm) as root on 127.0.0.1 with a
# configuration and ports of its own, submits the emitted slurm.sh with `sbatch --wait`, collects
# the study and checks that every run finished and that it gives the rows of the same study run
# locally. Skipped (exit 77) with the reason when the packages are missing, when not root (slurmd
# runs jobs as their user) or when the daemons do not come up; the daemons it started are
# stopped on exit.
#
# usage: slurm_test.sh SALTUS_EXECUTABLE
set -u
saltus=$1
skip() {
  echo "SKIPPED: $*"
  exit 77
}
for program in munged slurmctld slurmd sbatch sinfo; do
  command -v "$program" > /dev/null || skip "$program is not installed (Debian munge, slurm-wlm)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs"
[ -r /etc/munge/munge.key ] || skip "no /etc/munge/munge.key (Debian munge creates it)"

dir=$(mktemp -d /tmp/saltus_slurm_test.XXXXXX)
port=$((20000 + $$ % 20000))  # a pair of ports of this test's own
host=$(hostname -s)
stop() {
  for pidfile in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2> /dev/null
  done
  sleep 1
  rm -rf "$dir"
}
trap stop EXIT
mkdir -p "$dir"/state "$dir"/spool
cat > "$dir"/slurm.conf << EOF
ClusterName=saltustest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf
munged --socket="$dir"/munge.socket --pid-file="$dir"/munged.pid --log-file="$dir"/munged.log \
  --seed-file="$dir"/munge.seed --force || skip "munged did not start"
slurmctld || skip "slurmctld did not start: $(tail -3 "$dir"/slurmctld.log 2> /dev/null)"
slurmd || skip "slurmd did not start: $(tail -3 "$dir"/slurmd.log 2> /dev/null)"
for _ in $(seq 40); do
  sinfo -h -o %t 2> /dev/null | grep -q idle && break
  sleep 0.5
done
sinfo -h -o %t | grep -q idle || skip "the node did not become idle: $(tail -3 "$dir"/slurmd.log)"

fail() {
  echo "FAILED: $*"
  exit 1
}
# A study of two runs on the bouncing disk with its closed form (no reference run).
cat > "$dir"/disk.yaml << 'EOF'
scene: disk
gravity: [0, -9.81]
bodies:
  - {name: ball, mass: 1, inertia: 0.004, position: [0.3, 1, 0.2], velocity: [0.5, 0, 1]}
contacts:
  - {name: floor, type: disk_line, body_a: ground, body_b: ball, normal_a: [0, 1], radius_b: 0.1,
     restitution: 0.9}
simulation:
  t_end: 2
reference:
  analytic: bouncing_disk
  step: 0.05
EOF
study=(--scenes "$dir"/disk.yaml --integrators dopri5 --rtol 1e-4,1e-6 --repeat 1 --no-plots)
"$saltus" compare "${study[@]}" --out "$dir"/local > /dev/null || fail "the local study failed"
"$saltus" compare "${study[@]}" --emit-jobs "$dir"/jobs > /dev/null || fail "--emit-jobs failed"
(cd / && timeout 300 sbatch --wait "$dir"/jobs/slurm.sh > "$dir"/sbatch.out 2>&1) ||
  fail "sbatch --wait: $(cat "$dir"/sbatch.out) $(cat "$dir"/jobs/runs/slurm_*.out 2> /dev/null)"
"$saltus" compare --collect "$dir"/jobs > /dev/null || fail "--collect failed"
# Rows without the timing columns (wall and CPU times differ between two runs).
rows() { cut -d, -f1-8,11- "$1" | sort; }
header=$(head -1 "$dir"/jobs/results.csv)
case "$header" in
  set,scene,integrator,formulation,rtol,atol,status,reason,wall_seconds,cpu_seconds,*) ;;
  *) fail "results.csv columns changed: $header (update this test's cut)" ;;
esac
[ "$(rows "$dir"/local/results.csv)" = "$(rows "$dir"/jobs/results.csv)" ] ||
  fail "the Slurm study's rows differ from the local one's"
ok=$(grep -c ',ok,' "$dir"/jobs/results.csv)
[ "$ok" = 2 ] || fail "$ok of 2 runs finished: $(cat "$dir"/jobs/results.csv)"
echo "sbatch ran the 2 jobs of slurm.sh on a local Slurm; --collect gave the local rows"
