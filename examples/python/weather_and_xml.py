# %% [markdown]
# # QuireDB from Python: weather records, trees and XML in one file
#
# A notebook-style tour (run it as a script, or cell by cell in Jupyter/VS Code):
#
#     pip install ./python pandas        # from the repository root
#     python examples/python/weather_and_xml.py [beijing_multisite_all_stations.csv.zst]
#
# Without an argument it writes a small synthetic CSV; with the Beijing file of
# ../shared/data/weather it loads the real 420,768 rows (preset "beijing").

# %%
import math
import sys
import tempfile
from pathlib import Path

import quiredb

work = Path(tempfile.mkdtemp(prefix="quiredb-example-"))
db = quiredb.open(work / "tour.quire", cache_mib=128)

# %% [markdown]
# ## Load a meteorological CSV (the options of `quire load-csv`)

# %%
if len(sys.argv) > 1:
    source, options, station, measure = Path(sys.argv[1]), {"preset": "beijing"}, "Dongsi", "TEMP"
else:
    source, options, station, measure = work / "weather.csv", {}, "north", "temp"
    with open(source, "w") as out:
        out.write("station,time,temp,pres,dewp,rain,wspm\n")
        for name, offset in [("north", -3.0), ("south", 4.0)]:
            for hour in range(24 * 59):  # 2014-01-01 … 2014-02-28
                day, h = divmod(hour, 24)
                temp = offset + 8 * math.sin(2 * math.pi * (h - 9) / 24) + day / 10
                stamp = f"2014-{1 + day // 31:02d}-{1 + day % 31:02d}T{h:02d}:00"
                out.write(f"{name},{stamp},{temp:.1f},{1013 - temp / 3:.1f},{temp - 6:.1f},0,{2 + h % 5}\n")

summary = db.load_csv(source, progress=lambda rows, done, total: print(f"  {rows} rows, {done}/{total} bytes"), **options)
print(f"loaded {summary['rows']} rows of {summary['stations']} stations; measures {summary['measure_names']}")

# %% [markdown]
# ## Range queries come back as Arrow tables; pandas is one call away

# %%
january = db.range(station, "2014-01-01", "2014-01-31T23:00")
frame = january.to_pandas()
print(frame[["time", measure]].head())
assert 0 < len(frame) <= 31 * 24 and str(frame["time"].dt.tz) == "UTC"

# %%
monthly = db.agg(measure, "month", station=station).to_pandas()
print(monthly[["start", "count", "mean", "min", "max"]])

# %%
nearest = db.knn([10, 1010, 2, 0, 3], 5).to_pandas()
print(nearest[["distance", "record"]])

# %% [markdown]
# ## Ordered key-value trees in transactions

# %%
with db.write() as txn:  # commits at the end of the block
    notes = txn.tree("notes", key_type=str, value_type=str)
    notes["2014-01-02"] = "first frost"
    notes["2014-01-15"] = "snow"
    notes["2014-02-01"] = "thaw"
try:
    with db.write() as txn:  # an exception aborts: nothing of this block stays
        txn.tree("notes", key_type=str, value_type=str)["2014-03-01"] = "spring?"
        raise RuntimeError("changed my mind")
except RuntimeError:
    pass
with db.read() as txn:
    notes = txn.tree("notes", key_type=str, value_type=str)
    print(notes.range("2014-01", "2014-02"))
    assert len(notes) == 3

# %% [markdown]
# ## An XML collection and XPath

# %%
(work / "stations.xml").write_text(
    "<stations><station id='north' elevation='120'><name>North Hill</name></station>"
    "<station id='south' elevation='15'><name>South Bay</name></station></stations>"
)
db.load_xml("stations", work / "stations.xml")
print(db.xpath("stations", "//station[@elevation > 100]/name", output="values"))
print(db.xpath("stations", "count(//station)"))
print(db.explain("stations", "//station/name"))

# %%
db.close()
print(f"done; the database is {work / 'tour.quire'}")
