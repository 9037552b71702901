"""The two speed goals of issue 25, measured side by side (one run of each, several
repetitions interleaved, medians of CPU and wall time):

1. a range query of >= 1 M rows reaching pandas (`Database.range(...).to_pandas()`)
   against pyarrow reading the same rows from a Parquet file and converting them
   (`pq.read_table(...).to_pandas()`), the file written by pyarrow from the same table;
2. `quire export DB --to DIR` (Parquet, one file, Snappy) against DuckDB's
   `COPY t TO 'x.parquet' (FORMAT parquet)` from a table holding the same rows and
   columns (loaded from a first export), both timed from here.

Usage: python parquet_goals.py QUIRE_BIN WORK_DIR ROWS STATIONS [REPEAT] [--export-only | --range-only]
(the data set is `quire gen meteo --rows ROWS --stations STATIONS`, loaded with
`quire load-csv`; WORK_DIR keeps it for reruns).
"""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

import quiredb


def timed(action):
    """(result, cpu seconds of this process and its children, wall seconds)."""
    before = os.times()
    wall = time.perf_counter()
    result = action()
    wall = time.perf_counter() - wall
    after = os.times()
    cpu = (after.user - before.user) + (after.system - before.system)
    cpu += (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return result, cpu, wall


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def prepare(quire, work, rows, stations):
    csv, db = work / "gen.csv", work / "gen.quire"
    if not db.exists():
        _, cpu, wall = timed(lambda: run(quire, "gen", "meteo", "--rows", str(rows), "--stations", str(stations), "--out", str(csv)))
        print(f"gen meteo: {rows} rows, {csv.stat().st_size / 1e6:.0f} MB in {wall:.1f} s")
        _, cpu, wall = timed(lambda: run(quire, "load-csv", str(csv), "--db", str(db), "--quiet", "--durability", "none"))
        print(f"load-csv: {wall:.1f} s wall, {cpu:.1f} s CPU; database {db.stat().st_size / 1e6:.0f} MB")
    return csv, db


def report(name, samples):
    cpu = statistics.median(s[0] for s in samples)
    wall = statistics.median(s[1] for s in samples)
    print(f"  {name:<44} median CPU {cpu:7.3f} s   wall {wall:7.3f} s   (n={len(samples)})")
    return cpu, wall


def range_goal(db_path, work, repeat):
    db = quiredb.open(db_path, read_only=True, cache_mib=1024)
    stats = db.meteo_stats()
    station = db.range(limit=1)["station"][0].as_py()
    table = db.range(station)
    parquet = work / "range.parquet"
    pq.write_table(table, parquet)
    print(f"goal 1: range of station {station}: {table.num_rows} rows of {stats['records']}, "
          f"{table.nbytes / 1e6:.0f} MB as Arrow; Parquet file {parquet.stat().st_size / 1e6:.0f} MB")
    del table
    ours, theirs = [], []
    for _ in range(repeat):
        frame, cpu, wall = timed(lambda: db.range(station).to_pandas())
        ours.append((cpu, wall))
        rows = len(frame)
        del frame
        frame, cpu, wall = timed(lambda: pq.read_table(parquet).to_pandas())
        theirs.append((cpu, wall))
        assert len(frame) == rows
        del frame
    a = report("quiredb range(...).to_pandas()", ours)
    b = report("pyarrow read_table(parquet).to_pandas()", theirs)
    print(f"  ratio (ours / pyarrow): CPU {a[0] / b[0]:.2f}x, wall {a[1] / b[1]:.2f}x (goal <= 2x)")
    db.close()


def export_goal(quire, csv, db_path, work, repeat):
    con = duckdb.connect(str(work / "peer.duckdb"))
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'records'").fetchone()[0]:
        # The same rows and columns as the export (station, time, measures, record).
        first = work / "export-first"
        run(quire, "export", str(db_path), "--to", str(first))
        _, _, wall = timed(lambda: con.execute(f"CREATE TABLE records AS SELECT * FROM read_parquet('{first}/part-0.parquet')"))
        print(f"duckdb: table of the exported rows loaded in {wall:.1f} s")
    count = con.execute("SELECT count(*) FROM records").fetchone()[0]
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    print(f"goal 2: export of {count} records; duckdb threads {threads}")
    ours, theirs = [], []
    for i in range(repeat):
        out = work / f"export-{i}"
        _, cpu, wall = timed(lambda: run(quire, "export", str(db_path), "--to", str(out)))
        ours.append((cpu, wall))
        size = (out / "part-0.parquet").stat().st_size
        target = work / f"duck-{i}.parquet"
        _, cpu, wall = timed(lambda: con.execute(f"COPY records TO '{target}' (FORMAT parquet)"))
        theirs.append((cpu, wall))
        print(f"  run {i}: quire file {size / 1e6:.0f} MB, duckdb file {target.stat().st_size / 1e6:.0f} MB")
        assert pq.ParquetFile(out / "part-0.parquet").metadata.num_rows == count
    a = report("quire export (scan + writer thread)", ours)
    b = report("duckdb COPY ... TO parquet", theirs)
    print(f"  speed ratio (duckdb time / ours): CPU {b[0] / a[0]:.2f}x, wall {b[1] / a[1]:.2f}x (goal >= 0.5x)")
    print("  (CPU of duckdb is this process's: its worker threads are in it)")


def main():
    quire, work, rows, stations = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    repeat = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5].isdigit() else 3
    work.mkdir(parents=True, exist_ok=True)
    csv, db = prepare(quire, work, rows, stations)
    if "--export-only" not in sys.argv:
        range_goal(db, work, repeat)
    if "--range-only" not in sys.argv:
        export_goal(quire, csv, db, work, repeat)


if __name__ == "__main__":
    main()
