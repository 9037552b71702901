#!/usr/bin/env bash
# The Python package in CI (called by .ci/run after the Rust tests, which built
# target/release/quire with the `parquet` feature): a virtual environment with pinned
# tools, the `quiredb` module built in release (maturin develop, with the `parquet`
# feature like the workspace build before it), the pytest suite (compared with that
# `quire`) and the notebook-style example. Prints its own time.
#
# `python/ci.sh prepare` only makes the virtual environment and installs the tools
# (downloads, no compiling): .ci/run starts it in the background at its beginning, so
# the downloads overlap the Rust builds.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
target=${CARGO_TARGET_DIR:-$PWD/target}
venv=${QUIRE_VENV:-$target/python-venv}

tools=(maturin==1.16.0 pytest==9.2.0 pyarrow==26.0.1 duckdb==1.5.6 pandas==3.1.1 numpy==2.4.6)

prepare() {
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends python3-venv python3-dev
  fi
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "${tools[@]}"
  echo "${tools[*]}" > "$venv/.prepared"
}

prepared() {
  [ "$(cat "$venv/.prepared" 2>/dev/null)" = "${tools[*]}" ]
}

if [ "${1:-}" = prepare ]; then
  prepare
  echo "python environment: prepared in $((SECONDS - started)) s"
  exit 0
fi
prepared || prepare
(cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --release -q --features parquet)
QUIRE_BIN="$target/release/quire" "$venv/bin/python" -m pytest -q python/tests
"$venv/bin/python" examples/python/weather_and_xml.py > /dev/null
echo "python package: built, tested and example run in $((SECONDS - started)) s"
