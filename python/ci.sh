#!/usr/bin/env bash
# The Python package in CI (called by .ci/run after the Rust tests, which built
# target/release/quire with the `parquet` feature): a virtual environment with pinned
# tools, the `quiredb` module built in release (maturin develop, with the `parquet`
# feature like the workspace build before it, so little is rebuilt), the pytest suite
# (compared with that `quire`) and the notebook-style example. Prints its own time.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
target=${CARGO_TARGET_DIR:-$PWD/target}
venv=${QUIRE_VENV:-$target/python-venv}
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends python3-venv python3-dev
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check \
  maturin==1.16.0 pytest==9.2.0 pyarrow==26.0.1 duckdb==1.5.6 pandas==3.1.1 numpy==2.4.6
(cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --release -q --features parquet)
QUIRE_BIN="$target/release/quire" "$venv/bin/python" -m pytest -q python/tests
"$venv/bin/python" examples/python/weather_and_xml.py > /dev/null
echo "python package: built, tested and example run in $((SECONDS - started)) s"
