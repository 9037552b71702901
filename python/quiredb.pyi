"""QuireDB from Python: ordered key-value trees, the meteorological data set (answers as
pyarrow Tables) and the native XML store with XPath, in one database file.

>>> import quiredb
>>> db = quiredb.open("data.quire", cache_mib=64)
>>> with db.write() as txn:                # commits at the end, aborts on an exception
...     txn.tree("users", key_type=str)["ada"] = b"Lovelace"
>>> with db.read() as txn:                 # a snapshot; never waits for the writer
...     txn.tree("users", key_type=str)["ada"]
b'Lovelace'
"""

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from os import PathLike
from typing import Any, Literal, Optional, Union, overload

import pyarrow

__version__: str
PARQUET_INPUT: bool
"""True when the module was built with the `parquet` feature: `load_csv` then also reads
`.parquet` files (as the CSV of their rows, with the same options)."""

StrPath = Union[str, PathLike[str]]
Key = Union[bytes, bytearray, str]
Time = Union[int, str, datetime]
"""Unix seconds, an ISO 8601 string (`2014-03-01T12:00`, `...Z`, `...+01:00`) or a
datetime (naive ones are UTC)."""
Durability = Literal["full", "checksummed", "none"]

class Error(Exception):
    """A failure of the engine, a structure, a load or a query; the message is the
    engine's (it names the file, line, column or page)."""

def open(path: StrPath, cache_mib: int = 64, durability: Durability = "checksummed", read_only: bool = False) -> Database:
    """Opens the database file at `path`, creating it when absent (unless `read_only`).

    `cache_mib` is the buffer pool in MiB; `durability` that of every commit unless a
    commit names its own: "full" (data, sync, meta, sync), "checksummed" (one sync, the
    meta verified on open) or "none" (no sync; survives a process crash).

    >>> db = quiredb.open("weather.quire", cache_mib=256, durability="none")
    """

class Database:
    """An open database file; `close()` it or use it in a `with` block."""

    @property
    def path(self) -> str: ...
    def write(self) -> WriteTransaction:
        """Starts the write transaction, waiting (GIL released) for another thread's to
        end. RuntimeError if this thread already has one open."""
    def read(self) -> ReadTransaction:
        """Starts a snapshot reader."""
    def close(self) -> None: ...
    def __enter__(self) -> Database: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

    # The meteorological data set.
    def load_csv(
        self,
        paths: Union[StrPath, Sequence[StrPath]],
        *,
        progress: Optional[Callable[[int, int, int], object]] = None,
        skip_bad: bool = False,
        batch: Optional[int] = None,
        index_measures: Union[str, Sequence[str], None] = None,
        skip_report: Optional[StrPath] = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Loads CSV files, folders or zip archives (`.gz`/`.zst` decompressed; a zip's
        data files, or the members `member="produkt_*"` names) into the queue, the
        (station, time) B+tree and the R*-tree, in one transaction (one per `batch`
        rows), like `quire load-csv --db`. `index_measures` names the R*-tree's 1 to 8
        dimensions (default: the first eight measures at most), or is "none" for no
        R*-tree (then `window` and `knn` raise quiredb.Error). `options` are that command's column-mapping
        flags with `_` for `-`: `preset="beijing"`, `station="site"`,
        `time="year,month,day,hour"`, `time_format="%d/%m/%Y %H:%M"`, `measures=[...]`,
        `delimiter=";"`, `no_header=True`, `na=["M", -99]`, `time_zone="Europe/Berlin"`,
        `wide="months"`, …; without them the file is `station,time,` five measures.
        `progress(rows, bytes_read, total_bytes)` is called about every 0.2 s. A bad
        row raises quiredb.Error naming the file and line, and the database is
        unchanged (with `skip_bad` it is skipped and listed in `skip_report`).
        Returns the summary: rows, skipped_rows, complete_rows, measure_names, missing,
        stations, time_range, bytes, batches, skipped.

        >>> db.load_csv("beijing.csv.zst", preset="beijing", progress=print)
        """
    def range(self, station: Optional[str] = None, start: Optional[Time] = None, end: Optional[Time] = None, *, limit: Optional[int] = None) -> pyarrow.Table:
        """Records of `station` (every station when None) with start <= time <= end, in
        (station, time) order. Columns: station, time (timestamp[s, UTC]), one float64
        per measure (null when missing), record (the line as loaded). The columns come
        in chunks of at most 65,536 rows; without a limit two threads read the two
        halves of the keys (from two snapshots of one commit).

        >>> db.range("Dongsi", "2014-01-01", "2014-01-31T23:00").to_pandas()
        """
    def window(self, low: Sequence[float], high: Sequence[float]) -> pyarrow.Table:
        """Records whose indexed measures (the R*-tree's 1 to 8 dimensions) lie in [low, high]; columns: the
        measures, record."""
    def knn(self, point: Sequence[float], k: int) -> pyarrow.Table:
        """The k records nearest to `point` (one value per R*-tree dimension), nearest first; columns:
        distance, the measures, record."""
    def agg(self, measure: str, every: Literal["hour", "day", "month", "year"], *, station: Optional[str] = None, start: Optional[Time] = None, end: Optional[Time] = None) -> pyarrow.Table:
        """Per-station buckets of one measure; columns: station, start, rows, count,
        sum, min, max, mean (null for a bucket without values).

        >>> db.agg("TEMP", "month", station="Dongsi").to_pandas()
        """
    def meteo_stats(self) -> dict[str, Any]:
        """records, keys, points, rtree_height, measure_names, pages."""

    # The XML store.
    def load_xml(self, name: str, paths: Union[StrPath, Sequence[StrPath]], *, skip_bad: bool = False, progress: Optional[Callable[[int, int, int], object]] = None) -> dict[str, Any]:
        """Loads XML files and folders (their .xml files, `.zst` allowed) into
        collection `name` in one transaction; `progress(documents, bytes, total)`.

        >>> db.load_xml("auction", "xmark.xml")
        """
    @overload
    def xpath(self, name: str, query: str, *, output: Literal["nodes"], limit: Optional[int] = None, namespaces: Optional[dict[str, str]] = None, variables: Optional[dict[str, Union[str, float, bool]]] = None, strict_names: bool = False, default_namespace: Optional[str] = None) -> list[Node]: ...
    @overload
    def xpath(self, name: str, query: str, *, output: Literal["values", "xml"], limit: Optional[int] = None, namespaces: Optional[dict[str, str]] = None, variables: Optional[dict[str, Union[str, float, bool]]] = None, strict_names: bool = False, default_namespace: Optional[str] = None) -> list[str]: ...
    @overload
    def xpath(self, name: str, query: str, *, output: Literal["count"], limit: Optional[int] = None, namespaces: Optional[dict[str, str]] = None, variables: Optional[dict[str, Union[str, float, bool]]] = None, strict_names: bool = False, default_namespace: Optional[str] = None) -> int: ...
    @overload
    def xpath(self, name: str, query: str, *, output: Literal["auto"] = "auto", limit: Optional[int] = None, namespaces: Optional[dict[str, str]] = None, variables: Optional[dict[str, Union[str, float, bool]]] = None, strict_names: bool = False, default_namespace: Optional[str] = None) -> Union[list[Node], float, str, bool]:
        """XPath 1.0 over a collection: its nodes in document order, or with "auto" the
        number, string or boolean of an expression like `count(//item)`.
        `namespaces` binds the query's prefixes to URIs; a prefix it lacks stands for
        the one URI the collection's names use with it, and `title` matches the local
        name in any namespace. `variables` gives `$name` a value (a str, a number or a
        bool), with no quoting. `strict_names` reads `title` as XPath 1.0 (lxml, BaseX)
        does: in no namespace; `default_namespace` puts unprefixed element tests in a URI.

        >>> db.xpath("auction", "//person[profile/@income > 50000]/name", output="values")
        >>> db.xpath("feeds", "//a:entry/dc:creator", namespaces={"a": "http://www.w3.org/2005/Atom"})
        """
    def explain(self, name: str, query: str, *, namespaces: Optional[dict[str, str]] = None, variables: Optional[dict[str, Union[str, float, bool]]] = None, strict_names: bool = False, default_namespace: Optional[str] = None) -> str:
        """Runs the query and gives its plan with each operator's rows and time."""
    def collections(self) -> list[str]: ...

class WriteTransaction:
    """The write transaction. In a `with` block it commits at the end and aborts if the
    block raises; it belongs to the thread that started it."""

    def tree(self, name: str, key_type: type = bytes, value_type: type = bytes) -> Tree:
        """The tree `name`, created when absent; keys/values are given back as
        `key_type`/`value_type` (bytes or str, stored as UTF-8)."""
    def drop_tree(self, name: str) -> None: ...
    def commit(self, durability: Optional[Durability] = None) -> None: ...
    def abort(self) -> None: ...
    def __enter__(self) -> WriteTransaction: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

class ReadTransaction:
    """A snapshot: sees the last commit before it began, whatever is committed later."""

    def tree(self, name: str, key_type: type = bytes, value_type: type = bytes) -> Tree:
        """The tree `name` (quiredb.Error when absent); read-only."""
    def close(self) -> None: ...
    def __enter__(self) -> ReadTransaction: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

class Tree:
    """An ordered key-value tree: a dict whose iteration is in key order (bytes order,
    i.e. code point order for str keys), with range queries.

    >>> t = txn.tree("words", key_type=str, value_type=str)
    >>> t.update({"pear": "poire", "apple": "pomme"})
    >>> t.range("a", "b")
    [('apple', 'pomme')]
    """

    @property
    def name(self) -> str: ...
    def __getitem__(self, key: Key) -> Any: ...
    def __setitem__(self, key: Key, value: Key) -> None: ...
    def __delitem__(self, key: Key) -> None: ...
    def __contains__(self, key: Key) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> TreeIter: ...
    def get(self, key: Key, default: Any = None) -> Any: ...
    def pop(self, key: Key, default: Any = ...) -> Any: ...
    def update(self, entries: Union[Mapping[Key, Key], Iterable[tuple[Key, Key]]]) -> None: ...
    def range(self, start: Optional[Key] = None, end: Optional[Key] = None, *, end_inclusive: bool = False, reverse: bool = False, limit: Optional[int] = None) -> list[tuple[Any, Any]]:
        """Entries with start <= key < end (None: unbounded), ascending or `reverse`."""
    def first(self) -> Optional[tuple[Any, Any]]: ...
    def last(self) -> Optional[tuple[Any, Any]]: ...
    def keys(self) -> TreeIter: ...
    def values(self) -> TreeIter: ...
    def items(self) -> TreeIter: ...

class TreeIter(Iterator[Any]):
    """Streams a tree in key order, 256 entries at a time."""

    def __next__(self) -> Any: ...

class Node:
    """A node of an XPath answer."""

    pre: int
    """Its number in the collection (document order)."""
    level: int
    size: int
    """Number of descendants."""
    path: str
    """Path from the document node, e.g. `/site/people/person/@id`."""
    name: str
    """The path's last step: `person`, `@id`, `text()`."""
