#!/usr/bin/env bash
# Applies session 52's prepared diffs, in order, to the machine's copy of main: the PTX norm, then the zero-frame
# taps, made on top of it. The machine's copy has main's tracked files; files a diff creates may be left from an
# earlier call on the same machine, and are removed first (unless the whole stack is applied already).
HERE=benchmarks/results/gpu-logs/session52/scripts
DIFFS="$HERE/ptx_norm.diff $HERE/zero_frame_taps.diff"
if git apply -R --check "$HERE/zero_frame_taps.diff" 2>/dev/null; then
  echo "applied already"
  exit 0
fi
for patch in $DIFFS; do
  git apply --summary "$patch" | sed -n 's/^ create mode [0-7]* //p' | xargs -r rm -f
done
for patch in $DIFFS; do
  git apply "$patch" || { echo "$patch does not apply"; exit 1; }
  echo "applied $patch"
done
