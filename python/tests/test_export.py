"""`quire export` (feature `parquet`) read back with pyarrow and DuckDB as
Hive-partitioned data sets, compared row by row with the database's own answer
(`Database.range` over every station); and `quire xpath --format parquet`."""

import subprocess

import pyarrow as pa
import pyarrow.csv  # noqa: F401  (pa.csv)
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import quiredb
from conftest import MEASURES


@pytest.fixture(scope="module")
def exporting_quire(quire_bin):
    probe = subprocess.run([quire_bin, "export", "--help"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"{quire_bin} was built without the `parquet` feature (cargo build --release --features parquet)")
    return quire_bin


def export(quire_bin, db_path, out, *flags):
    subprocess.run([quire_bin, "export", str(db_path), "--to", str(out), *flags], check=True, capture_output=True)


def database_rows(meteo_db):
    table = meteo_db.range()  # every station, in (station, time) order
    return table.sort_by([("station", "ascending"), ("time", "ascending")])


@pytest.mark.parametrize("partition_by", ["station", "year", "station,year"])
def test_pyarrow_reads_the_hive_partitions(exporting_quire, meteo_path, meteo_db, tmp_path, partition_by):
    out = tmp_path / "export"
    export(exporting_quire, meteo_path, out, "--partition-by", partition_by)
    dataset = ds.dataset(out, format="parquet", partitioning="hive")
    table = dataset.to_table()
    expected = database_rows(meteo_db)
    if "station" not in partition_by:
        assert sorted(p.name for p in out.iterdir()) == ["year=2014"]
    else:
        assert sorted(p.name for p in out.iterdir()) == sorted(f"station={s}" for s in pc.unique(expected["station"]).to_pylist())
    if "year" in table.column_names:
        table = table.drop_columns(["year"])
    table = table.select(expected.column_names).cast(expected.schema)
    table = table.sort_by([("station", "ascending"), ("time", "ascending")])
    assert table.num_rows == expected.num_rows
    assert table.equals(expected), "exported rows differ from the database's"


def test_duckdb_reads_the_export_row_by_row(exporting_quire, meteo_path, meteo_db, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "export"
    export(exporting_quire, meteo_path, out, "--partition-by", "station,year")
    con = duckdb.connect()
    got = con.execute(
        f"SELECT station, epoch(time)::BIGINT AS t, {', '.join(MEASURES)}, record "
        f"FROM read_parquet('{out}/**/*.parquet', hive_partitioning = true) ORDER BY station, t"
    ).fetchall()
    expected = database_rows(meteo_db)
    want = list(zip(
        expected["station"].to_pylist(),
        expected["time"].cast(pa.int64()).to_pylist(),
        *[expected[m].to_pylist() for m in MEASURES],
        expected["record"].to_pylist(),
    ))
    assert len(got) == len(want)
    assert got == want
    years = con.execute(f"SELECT DISTINCT year FROM read_parquet('{out}/**/*.parquet', hive_partitioning = true)").fetchall()
    assert years == [(2014,)]
    kind = con.execute(f"DESCRIBE SELECT time FROM read_parquet('{out}/**/*.parquet')").fetchone()[1]
    assert kind == "TIMESTAMP WITH TIME ZONE"


def test_arrow_ipc_and_unpartitioned(exporting_quire, meteo_path, meteo_db, tmp_path):
    out = tmp_path / "ipc"
    export(exporting_quire, meteo_path, out, "--format", "arrow-ipc")
    table = pa.ipc.open_file(out / "part-0.arrow").read_all()
    assert table.equals(database_rows(meteo_db))
    flat = tmp_path / "flat"
    export(exporting_quire, meteo_path, flat)
    exported = pq.read_table(flat / "part-0.parquet")
    assert exported.schema.field("time").type == pa.timestamp("ms", tz="UTC")  # Parquet has no seconds
    expected = database_rows(meteo_db)
    assert exported.cast(expected.schema).equals(expected)


def test_bad_partitioning_is_refused(exporting_quire, meteo_path, tmp_path):
    result = subprocess.run([exporting_quire, "export", str(meteo_path), "--to", str(tmp_path / "x"),
                             "--partition-by", "month"], capture_output=True, text=True)
    assert result.returncode != 0 and "month" in result.stderr


def test_xpath_results_as_parquet(exporting_quire, tmp_path):
    xml = tmp_path / "a.xml"
    xml.write_text("<r><b id='1'>one</b><b id='2'>two</b></r>")
    db_path = tmp_path / "x.quire"
    with quiredb.open(db_path) as db:
        db.load_xml("c", xml)
    out = tmp_path / "r.parquet"
    subprocess.run([exporting_quire, "xpath", str(db_path), "c", "//b/@id", "--format", "parquet", "--out", str(out)],
                   check=True, capture_output=True)
    table = pq.read_table(out)
    assert table.column_names == ["pre", "size", "level", "name", "path", "value"]
    assert table["value"].to_pylist() == ["1", "2"]
    with quiredb.open(db_path, read_only=True) as db:
        assert table["pre"].to_pylist() == [node.pre for node in db.xpath("c", "//b/@id")]


def test_parquet_input_loads_like_the_csv(tmp_path, meteo_rows, meteo_db):
    if not quiredb.PARQUET_INPUT:
        pytest.skip("the module was built without the `parquet` feature (maturin develop --features parquet)")
    csv_path, rows = meteo_rows
    source = pa.csv.read_csv(csv_path, convert_options=pa.csv.ConvertOptions(strings_can_be_null=True))
    parquet = tmp_path / "weather.parquet"
    pq.write_table(source, parquet, row_group_size=500)
    with quiredb.open(tmp_path / "p.quire") as db:
        summary = db.load_csv(parquet)
        assert summary["rows"] == len(rows)
        got, want = db.range(), meteo_db.range()
        for name in ["station", "time", *MEASURES]:
            assert got[name].equals(want[name]), name
