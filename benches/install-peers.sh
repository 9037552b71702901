#!/usr/bin/env bash
# Installs the native peer engines of the benchmark harness (Debian packages):
# Berkeley DB 5.3, libspatialindex, Boost (Geometry rtree), BaseX.
# Idempotent: does nothing when every package is already installed; runs
# `apt-get update` at most once, and only when something must be installed.
set -euo pipefail
packages=(libdb5.3-dev libspatialindex-dev libboost-dev basex)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-peers: all peer packages present (${packages[*]})"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-peers: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
