"""The meteorological data set: load_csv with the CLI's options and a progress
callback, range/window/knn/agg as pyarrow Tables (compared with the `quire` CLI's
answers and with the CSV written), errors that name the line, the database unchanged
after a failed load, concurrent queries from threads."""

import json
import subprocess
import threading
from pathlib import Path

import pyarrow as pa
import pytest

import quiredb
from conftest import MEASURES, STATIONS


def cli_jsonl(quire_bin, *args):
    out = subprocess.run([quire_bin, *args, "--format", "jsonl"], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_load_summary_and_progress(tmp_path, meteo_rows):
    csv_path, rows = meteo_rows
    calls = []
    with quiredb.open(tmp_path / "w.quire") as db:
        summary = db.load_csv(str(csv_path), progress=lambda *args: calls.append(args))
        assert summary["rows"] == len(rows)
        assert summary["stations"] == len(STATIONS)
        assert summary["measure_names"] == MEASURES
        assert summary["missing"]["temp"] == sum(1 for r in rows if r[2][0] is None)
        assert summary["time_range"] == (min(r[1] for r in rows), max(r[1] for r in rows))
        assert calls and calls[-1][0] == len(rows)  # (rows, bytes read, total bytes)
        assert calls[-1][1] == calls[-1][2] == csv_path.stat().st_size
        assert db.meteo_stats()["records"] == len(rows)


def test_range_is_the_csv_rows_in_time_order(meteo_db, meteo_rows):
    _, rows = meteo_rows
    table = meteo_db.range("changping", "2014-01-02T00:00", "2014-01-05T23:00")
    assert isinstance(table, pa.Table)
    assert table.column_names == ["station", "time", *MEASURES, "record"]
    assert table.schema.field("time").type == pa.timestamp("s", tz="UTC")
    expected = [r for r in rows if r[0] == "changping" and 1388620800 <= r[1] <= 1388620800 + 4 * 86400 - 3600]
    assert table.num_rows == len(expected) == 96
    times = table.column("time").cast(pa.int64()).to_pylist()
    assert times == [r[1] for r in expected]
    for i, measure in enumerate(MEASURES):
        assert table.column(measure).to_pylist() == [r[2][i] for r in expected]
    assert meteo_db.range("changping", limit=7).num_rows == 7
    every = meteo_db.range()  # every station (read on two threads, two chunks)
    keys = list(zip(every.column("station").to_pylist(), every.column("time").cast(pa.int64()).to_pylist()))
    assert keys == sorted((r[0], r[1]) for r in rows)
    assert meteo_db.range("no such station").num_rows == 0
    frame = table.to_pandas()
    assert list(frame["station"].unique()) == ["changping"]
    assert str(frame["time"].dt.tz) == "UTC"


def test_time_bounds_accept_ints_strings_and_datetimes(meteo_db):
    import datetime as dt

    by_text = meteo_db.range("dingling", "2014-01-01T05:00", "2014-01-01T09:00")
    by_int = meteo_db.range("dingling", 1388552400, 1388566800)
    naive = meteo_db.range("dingling", dt.datetime(2014, 1, 1, 5), dt.datetime(2014, 1, 1, 9))
    aware = meteo_db.range("dingling", dt.datetime(2014, 1, 1, 6, tzinfo=dt.timezone(dt.timedelta(hours=1))), 1388566800)
    assert by_text.num_rows == 5
    assert by_text.equals(by_int) and by_text.equals(naive) and by_text.equals(aware)
    with pytest.raises(ValueError, match="2014-13"):
        meteo_db.range("dingling", "2014-13-01")
    with pytest.raises(TypeError):
        meteo_db.range("dingling", 1.5j)


def test_range_matches_the_cli(meteo_db, meteo_path, quire_bin):
    table = meteo_db.range("aotizhongxin", "2014-01-03T00:00", "2014-01-09T00:00")
    cli = cli_jsonl(quire_bin, "range", str(meteo_path), "--station", "aotizhongxin",
                    "--from", "2014-01-03T00:00", "--to", "2014-01-09T00:00")
    assert table.num_rows == len(cli) > 100
    assert table.column("record").to_pylist() == [row["record"] for row in cli]
    for measure in MEASURES:
        assert table.column(measure).to_pylist() == [row["measures"][measure] for row in cli]


def test_window_and_knn_match_the_cli(meteo_db, meteo_path, quire_bin):
    low, high = [0, 1000, -5, 0, 2], [20, 1020, 10, 1, 8]
    table = meteo_db.window(low, high)
    cli = cli_jsonl(quire_bin, "window", str(meteo_path), "--min", ",".join(map(str, low)),
                    "--max", ",".join(map(str, high)))
    assert table.num_rows == len(cli) > 0
    assert table.column("record").to_pylist() == [row["record"] for row in cli]
    for i, measure in enumerate(MEASURES):
        assert all(low[i] <= v <= high[i] for v in table.column(measure).to_pylist())
    point = [10, 1010, 0, 0, 5]
    nearest = meteo_db.knn(point, 25)
    cli = cli_jsonl(quire_bin, "knn", str(meteo_path), "--point", ",".join(map(str, point)), "-k", "25")
    assert nearest.column_names[0] == "distance"
    assert nearest.column("record").to_pylist() == [row["record"] for row in cli]
    assert nearest.column("distance").to_pylist() == pytest.approx([row["distance"] for row in cli])
    assert nearest.column("distance").to_pylist() == sorted(nearest.column("distance").to_pylist())
    with pytest.raises(quiredb.Error, match="5 values needed, got 3"):
        meteo_db.knn([1, 2, 3], 3)


def test_agg_matches_the_cli_and_the_rows(meteo_db, meteo_path, meteo_rows, quire_bin):
    _, rows = meteo_rows
    table = meteo_db.agg("temp", "day", station="changping")
    cli = subprocess.run([quire_bin, "agg", str(meteo_path), "--station", "changping", "--every", "day",
                          "--measure", "temp", "--fn", "mean,min,max,count,sum", "--format", "jsonl"],
                         check=True, capture_output=True, text=True)
    cli = [json.loads(line) for line in cli.stdout.splitlines()]
    assert table.num_rows == len(cli) == 17
    assert table.column("count").to_pylist() == [row["count"] for row in cli]
    for name in ["mean", "min", "max", "sum"]:
        assert table.column(name).to_pylist() == pytest.approx([row[name] for row in cli], abs=1e-6)
    first_day = [r[2][0] for r in rows if r[0] == "changping" and r[1] < 1388534400 + 86400 and r[2][0] is not None]
    assert table.column("max")[0].as_py() == max(first_day)
    every_station = meteo_db.agg("wspm", "month")
    assert every_station.column("station").unique().to_pylist() == STATIONS
    with pytest.raises(quiredb.Error, match="no measure"):
        meteo_db.agg("humidity", "day")
    with pytest.raises(ValueError, match="every"):
        meteo_db.agg("temp", "week")


def test_load_options_are_the_clis(tmp_path):
    csv_path = tmp_path / "semi.csv"
    csv_path.write_text("when;t;p\n2014-01-01 00:00;1,5;1000\n2014-01-01 01:00;M;1001\n")
    with quiredb.open(tmp_path / "o.quire") as db:
        summary = db.load_csv(csv_path, station_name="lab", time="when", measures="t,p", delimiter=";", na=["M"])
        assert summary["rows"] == 2 and summary["missing"] == {"t": 1, "p": 0}
        table = db.range("lab")
        assert table.column("t").to_pylist() == [1.5, None]
        with pytest.raises(ValueError, match="--colour"):
            db.load_csv(csv_path, colour="red")
        with pytest.raises(ValueError, match="preset"):
            db.load_csv(csv_path, preset="nowhere")


def test_a_spreadsheet_loads_as_its_csv(tmp_path):
    sheet = Path(__file__).resolve().parents[2] / "datasets/tests/data/meteo/hilltop_hourly.xlsx"
    with quiredb.open(tmp_path / "x.quire") as db:
        summary = db.load_csv(sheet, station_name="hill", time="Date,Time", measures="Temperature,Rain")
        assert summary["rows"] == 4 and summary["missing"] == {"Temperature (°C)": 1, "Rain (mm)": 1}
        assert db.range("hill").column("Temperature (°C)").to_pylist() == [12.41, 11.97, None, 11.02]
    with quiredb.open(tmp_path / "daily.quire") as db:
        daily = db.load_csv(sheet, station_name="daily", time="Date", measures="Tmax", sheet="Daily")
        assert daily["rows"] == 2 and db.range("daily").column("Tmax").to_pylist() == [18.5, 20.25]


def test_a_zip_archive_loads_the_members_named(tmp_path):
    dwd = Path(__file__).resolve().parents[2] / "datasets/tests/data/meteo/stundenwerte_TU_00003_hist.zip"
    with quiredb.open(tmp_path / "z.quire") as db:
        summary = db.load_csv(
            dwd, member="produkt_*", station="STATIONS_ID", time="MESS_DATUM", time_format="%Y%m%d%H",
            measures="TT_TU,RF_TU",
        )
        assert summary["rows"] == 24
        assert db.range("3").column("TT_TU").to_pylist()[:3] == [5.7, 5.6, 5.5]


def test_a_ghcn_daily_dly_file_loads_as_its_by_year_rows(tmp_path):
    dly = Path(__file__).resolve().parents[2] / "datasets/tests/data/meteo/ghcn_USW00094728.dly"
    with quiredb.open(tmp_path / "g.quire") as db:
        summary = db.load_csv(
            dly, no_header=True, station="0", time="1", time_format="%Y%m%d", variable_column="2",
            value_column="3", measures="TMAX,TMIN", flag_column="3=5",
        )
        assert summary["rows"] == 60 and summary["missing"] == {"TMAX": 1, "TMIN": 1}
        assert db.range("USW00094728").column("TMAX").to_pylist()[:3] == [62, 18, None]


def test_met_office_flags_after_values_and_words(tmp_path):
    station = Path(__file__).resolve().parents[2] / "datasets/tests/data/meteo/metoffice_oxforddata.txt"
    with quiredb.open(tmp_path / "m.quire") as db:
        summary = db.load_csv(
            station, delimiter="whitespace", skip_lines=5, header=True, station_from_preamble="1,1",
            time="yyyy,mm", time_format="%Y %m", measures="rain,sun", suffix_flags="*#", drop_flags="*", na="---",
        )
        assert summary["rows"] == 19 and summary["missing"] == {"rain": 1, "sun": 7}
        table = db.range("Oxford")
        assert table.column("rain").to_pylist()[-2:] == [22.2, None]
        assert table.column("sun").to_pylist()[-2:] == [250.1, 156.9]
    with quiredb.open(tmp_path / "w.quire") as db:
        rain = tmp_path / "rain.csv"
        rain.write_text("station,time,rain\nA,2020-01-01,T\nA,2020-01-02,0.5\n")
        db.load_csv(rain, station="station", time="time", measures="rain", word_value="T=0.001")
        assert db.range("A").column("rain").to_pylist() == [0.001, 0.5]


def test_values_a_quality_flag_drops_are_missing_in_range(tmp_path):
    series = Path(__file__).resolve().parents[2] / "datasets/tests/data/meteo/TG_STAID000005.txt"
    with quiredb.open(tmp_path / "e.quire") as db:
        summary = db.load_csv(
            series, skip_lines=19, station_from_file=True, time="DATE", time_format="%Y%m%d", measures="TG",
            flag_column="TG=Q_TG", drop_flags="1,9", na="-9999",
        )
        assert summary["missing"] == {"TG": 4}
        tg = db.range("TG_STAID000005").column("TG").to_pylist()
        assert tg[3] is None and tg[10] is None and tg.count(None) == 4


def test_bad_row_names_the_line_and_leaves_the_database_unchanged(tmp_path, meteo_rows):
    csv_path, rows = meteo_rows
    bad = tmp_path / "bad.csv"
    bad.write_text("station,time,temp,pres,dewp,rain,wspm\ns,2014-01-01T00:00,1,2,3,4,5\ns,2014-01-01T01:00,1,two,3,4,5\n")
    with quiredb.open(tmp_path / "b.quire") as db:
        db.load_csv(csv_path)
        with pytest.raises(quiredb.Error, match=r"bad\.csv.*unchanged.*line 3, column 4 \(pres\).*two"):
            db.load_csv(bad)
        assert db.meteo_stats()["records"] == len(rows)
        report = tmp_path / "skipped.csv"
        summary = db.load_csv(bad, skip_bad=True, skip_report=report)
        assert summary["skipped_rows"] == 1 and summary["skipped"][0][0] == 3
        assert "two" in report.read_text()
        with pytest.raises(quiredb.Error, match="absent.csv does not exist"):
            db.load_csv(tmp_path / "absent.csv")


def test_queries_from_threads_agree(meteo_db):
    expected = meteo_db.range("dingling")
    results, errors = [], []

    def query():
        try:
            for _ in range(5):
                results.append(meteo_db.range("dingling"))
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=query) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 20 and all(r.equals(expected) for r in results)


def test_no_meteorological_data(db):
    with pytest.raises(quiredb.Error, match="no meteorological data"):
        db.range("x")


def test_real_beijing_data_matches_the_cli(tmp_path, quire_bin):
    from conftest import REPO

    source = REPO.parent / "shared" / "data" / "weather" / "beijing_multisite_all_stations.csv.zst"
    if not source.exists():
        pytest.skip(f"real data absent: {source} (see ../shared/data/README.md)")
    path = tmp_path / "beijing.quire"
    with quiredb.open(path) as db:
        summary = db.load_csv(source, preset="beijing")
    assert summary["rows"] == 420_768 and summary["stations"] == 12
    with quiredb.open(path, read_only=True) as db:
        table = db.range("Dongsi", "2016-02-01", "2016-02-29T23:00")
        assert table.num_rows == 29 * 24
        cli = cli_jsonl(quire_bin, "range", str(path), "--station", "Dongsi", "--from", "2016-02-01", "--to", "2016-02-29T23:00")
        assert table.column("record").to_pylist() == [row["record"] for row in cli]
        assert table.column("TEMP").to_pylist() == [row["measures"]["TEMP"] for row in cli]
        monthly = db.agg("PRES", "year", station="Wanliu")
        assert monthly.column("start").cast(pa.int64()).to_pylist()[0] == 1356998400  # 2013-01-01
