#!/bin/sh
# `quire agg` against SQLite's GROUP BY over the same generated meteorological rows,
# side by side in one run (issue 24's goal: every station per month over the full
# 57.8 M set faster than SQLite).
#
#   benches/meteo-agg-vs-sqlite.sh [ROWS] [WORKDIR] [RUNS]
#
# ROWS (default 57800000) rows are generated with `quire gen meteo` into WORKDIR
# (default target/meteo-agg; the full set needs ≈ 14 GB there: 2.7 GB CSV, 6.9 GB
# database, 3.9 GB SQLite file), loaded with `quire load-csv` and imported into an
# SQLite table (`.import`, then `NA` set to NULL so that avg/min/max/count skip it as
# `agg` does). Files already there are reused. Then each query runs once to warm the
# page cache and RUNS (default 3) times alternately; the medians of wall and CPU
# (user + system) time are printed, and the two answers are compared bucket by bucket
# (same stations, months and counts, equal min and max, means within 1e-5).
#
# Needs `sqlite3` (apt-get install sqlite3) and GNU time (/usr/bin/time, apt-get
# install time). QUIRE may name a built binary (default: target/release/quire, built
# if absent).
set -eu

ROWS=${1:-57800000}
WORK=${2:-target/meteo-agg}
RUNS=${3:-3}
QUIRE=${QUIRE:-target/release/quire}
command -v sqlite3 >/dev/null || { echo "needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }
[ -x "$QUIRE" ] || cargo build --release --bin quire
mkdir -p "$WORK"
CSV="$WORK/meteo-$ROWS.csv"
DB="$WORK/meteo-$ROWS.quire"
LITE="$WORK/meteo-$ROWS.sqlite"

[ -s "$CSV" ] || "$QUIRE" gen meteo --rows "$ROWS" --out "$CSV"
[ -s "$DB" ] || "$QUIRE" load-csv "$CSV" --db "$DB" --quiet > "$WORK/load.log"
if [ ! -s "$LITE" ]; then
    sqlite3 "$LITE" \
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" \
        "CREATE TABLE obs(station TEXT, time TEXT, temp REAL, pres REAL, dewp REAL, rain REAL, wspm REAL);" \
        ".import --csv --skip 1 $CSV obs" \
        "UPDATE obs SET temp = NULL WHERE temp = 'NA';" > /dev/null
fi

QUERY="SELECT station, substr(time, 1, 7) AS month, avg(temp), min(temp), max(temp), count(temp)
       FROM obs GROUP BY station, month;"

# One timed run: appends "wall cpu" to $WORK/$1.times, the answer to $WORK/$1.csv.
timed() {
    /usr/bin/time -f "%e %U %S" -o "$WORK/$1.time" sh -c "$2" > "$WORK/$1.csv" 2>/dev/null
    awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$WORK/$1.time" >> "$WORK/$1.times"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

QUIRE_CMD="'$QUIRE' agg '$DB' --every month --measure temp --fn mean,min,max,count --format csv"
SQLITE_CMD="sqlite3 -csv '$LITE' \"$QUERY\""
rm -f "$WORK/quire.times" "$WORK/sqlite.times"
sh -c "$QUIRE_CMD" > /dev/null 2>&1
sh -c "$SQLITE_CMD" > /dev/null
i=0
while [ "$i" -lt "$RUNS" ]; do
    timed quire "$QUIRE_CMD"
    timed sqlite "$SQLITE_CMD"
    i=$((i + 1))
done

# The answers agree: quire's CSV has a header and full start times; SQLite's months.
tail -n +2 "$WORK/quire.csv" | paste -d, - "$WORK/sqlite.csv" | awk -F, '
    { n++ }
    $1 != $7 || substr($2, 1, 7) != $8 || $6 != $12 || $4 != $10 + 0 || $5 != $11 + 0 ||
    ($3 - $9 > 1e-5 || $9 - $3 > 1e-5) { bad++; if (bad <= 3) print "differs: " $0 }
    END { printf "answers: %d buckets, %d differ\n", n, bad; exit bad > 0 }'
[ "$(tail -n +2 "$WORK/quire.csv" | wc -l)" -eq "$(wc -l < "$WORK/sqlite.csv")" ] || { echo "bucket counts differ"; exit 1; }

for peer in quire sqlite; do
    wall=$(cut -d' ' -f1 "$WORK/$peer.times" | median)
    cpu=$(cut -d' ' -f2 "$WORK/$peer.times" | median)
    echo "$peer: every station per month over $ROWS rows: median of $RUNS runs $wall s wall, $cpu s CPU (runs: $(cut -d' ' -f1 "$WORK/$peer.times" | tr '\n' ' '))"
done
