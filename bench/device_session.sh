#!/usr/bin/env bash
# The per-step entry point of earlier results, kept for their commands. Each step is a phase of
# bench/h100_session.sh, the one implementation (see there for what each writes and its time limits):
#   bash .device/run.sh bash bench/device_session.sh STEP...
# Steps: export, compare, fusion (= bench), gemm (= micro), or any other phase name of h100_session.sh;
# the summary is always made. Measures and reports; asserts nothing.
root=$(cd "$(dirname "$0")/.." && pwd)
phases=()
for step in "$@"; do
  case $step in
    fusion) phases+=(bench) ;;
    gemm) phases+=(micro) ;;
    *) phases+=("$step") ;;
  esac
done
[ ${#phases[@]} -gt 0 ] || { echo "usage: device_session.sh STEP... (export, compare, fusion, gemm, ...)" >&2; exit 2; }
PHASES=$(IFS=,; echo "${phases[*]},summarize") exec bash "$root/bench/h100_session.sh"
