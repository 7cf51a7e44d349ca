#!/usr/bin/env bash
# Regenerates the golden bytes in this directory with prime-rl's own code (outside CI).
# Usage: make-golden.sh <prime-rl git dir or clone> <root of a Debian sid chroot with python3-msgspec python3-numpy>
# Exports the pinned commits' types/packer files (not committed here) into the chroot and runs make_golden.py there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$1"
root="$2"
declare -A PINS=(
  [0.8]=60bc29547a8824ad1de7b9af8d265e2b27b2a72d # tag v0.8.0
  [0.9]=559b44772e471d1538537b8805cc77f3824a5e64 # tag v0.8.1.dev67 (main, 2026-08-21): MicroBatch transport
)
declare -A FILES=(
  [0.8]="src/prime_rl/transport/types.py"
  [0.9]="src/prime_rl/transports/rollouts/types.py src/prime_rl/trainer/batch.py"
)
work="$root/tmp/air-golden"
mkdir -p "$here/fields/0.8" "$here/fields/0.9"
rm -rf "$work"
mkdir -p "$work"
cp "$here/make_golden.py" "$here/cases.json" "$work/"
for version in 0.8 0.9; do
  src="$work/src-$version"
  mkdir -p "$src"
  # shellcheck disable=SC2086
  git --git-dir="$(git -C "$repo" rev-parse --absolute-git-dir 2>/dev/null || echo "$repo")" archive "${PINS[$version]}" ${FILES[$version]} |
    tar -x -C "$src" --strip-components=1
  chroot "$root" /usr/bin/python3 "/tmp/air-golden/make_golden.py" "/tmp/air-golden/src-$version" "$version" \
    /tmp/air-golden/cases.json "/tmp/air-golden/out/v$version"
  rm -rf "$here/v$version"
  cp -r "$work/out/v$version" "$here/v$version"
  # The TOML keys of the config classes air writes (plain python3 + ast; any python3 will do).
  cfg="$work/cfg-$version"
  mkdir -p "$cfg"
  git --git-dir="$(git -C "$repo" rev-parse --absolute-git-dir 2>/dev/null || echo "$repo")" archive "${PINS[$version]}" \
    packages/prime-rl-configs/src/prime_rl/configs | tar -x -C "$cfg" --strip-components=3
  for cls in TrainerConfig OrchestratorConfig InferenceConfig; do
    python3 "$here/config_fields.py" "$cfg" "$cls" >"$here/fields/$version/$cls.json"
  done
done
rm -rf "$work"
