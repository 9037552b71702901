"""Shared fixtures of the quiredb test suite: a small meteorological CSV written here
(deterministic), a database loaded from it, and the `quire` command line whose answers
the Python API is compared with (QUIRE_BIN, or target/release/quire)."""

import os
import random
import shutil
from pathlib import Path

import pytest

import quiredb

REPO = Path(__file__).resolve().parents[2]
STATIONS = ["aotizhongxin", "changping", "dingling"]
HOURS = 400  # per station
MEASURES = ["temp", "pres", "dewp", "rain", "wspm"]


def write_meteo_csv(path: Path, seed: int = 7) -> list[tuple]:
    """Writes station,time,temp,pres,dewp,rain,wspm rows (some values NA) and gives
    them back as (station, unix seconds, [values or None])."""
    rng = random.Random(seed)
    rows = []
    with open(path, "w") as out:
        out.write("station,time,temp,pres,dewp,rain,wspm\n")
        for station in STATIONS:
            for hour in range(HOURS):
                seconds = 1388534400 + hour * 3600  # 2014-01-01T00:00Z
                day, rest = divmod(hour, 24)
                stamp = f"2014-{1 + day // 31:02d}-{1 + day % 31:02d}T{rest:02d}:00"
                values = [
                    round(rng.uniform(-10, 30), 1),
                    round(rng.uniform(990, 1030), 1),
                    round(rng.uniform(-20, 20), 1),
                    round(rng.choice([0.0, 0.0, 0.0, rng.uniform(0, 5)]), 1),
                    round(rng.uniform(0, 10), 1),
                ]
                if rng.random() < 0.05:
                    values[rng.randrange(5)] = None
                text = ",".join("NA" if v is None else str(v) for v in values)
                out.write(f"{station},{stamp},{text}\n")
                rows.append((station, seconds, values))
    return rows


@pytest.fixture(scope="session")
def meteo_rows(tmp_path_factory):
    path = tmp_path_factory.mktemp("csv") / "weather.csv"
    rows = write_meteo_csv(path)
    return path, rows


@pytest.fixture(scope="session")
def quire_bin():
    """The `quire` executable of this checkout."""
    given = os.environ.get("QUIRE_BIN")
    if given:
        assert Path(given).is_file(), f"QUIRE_BIN={given} does not exist"
        return given
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for candidate in [target / "release" / "quire", target / "debug" / "quire", shutil.which("quire")]:
        if candidate and Path(candidate).is_file():
            return str(candidate)
    pytest.skip("no `quire` executable: build it (cargo build --release) or set QUIRE_BIN")


@pytest.fixture
def db(tmp_path):
    database = quiredb.open(tmp_path / "test.quire", cache_mib=16)
    yield database
    database.close()


@pytest.fixture(scope="session")
def meteo_path(tmp_path_factory, meteo_rows):
    """The file of a database loaded once from the CSV."""
    csv_path, _ = meteo_rows
    path = tmp_path_factory.mktemp("db") / "weather.quire"
    with quiredb.open(path) as db:
        db.load_csv(csv_path)
    return path


@pytest.fixture(scope="session")
def meteo_db(meteo_path):
    """The loaded database, read-only (the `quire` CLI may read it at the same time)."""
    db = quiredb.open(meteo_path, read_only=True)
    yield db
    db.close()
