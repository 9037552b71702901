"""Key-value trees and transactions: dict-like and range API with bytes and str keys,
commit at the end of a `with` block, abort on exception, snapshots, one writer at a
time across threads (waiting without the GIL), errors as quiredb.Error."""

import random
import threading

import pytest

import quiredb


def test_bytes_round_trip_and_reopen(tmp_path):
    path = tmp_path / "kv.quire"
    with quiredb.open(path) as db:
        with db.write() as txn:
            t = txn.tree("kv")
            t[b"b"] = b"2"
            t[b"a"] = b"1"
            t[b"\x00\xff"] = b""
    with quiredb.open(path, read_only=True) as db:
        with db.read() as txn:
            t = txn.tree("kv")
            assert t[b"a"] == b"1"
            assert t[b"\x00\xff"] == b""
            assert list(t.items()) == [(b"\x00\xff", b""), (b"a", b"1"), (b"b", b"2")]
            assert len(t) == 3


def test_str_keys_and_values_in_code_point_order(db):
    words = {"pear": "poire", "apple": "pomme", "émeu": "emu", "Zebra": "zèbre"}
    with db.write() as txn:
        t = txn.tree("words", key_type=str, value_type=str)
        t.update(words)
        assert t["émeu"] == "emu"
    with db.read() as txn:
        t = txn.tree("words", key_type=str, value_type=str)
        assert list(t) == sorted(words)
        assert t.range("a", "q") == [("apple", "pomme"), ("pear", "poire")]
        assert t.range("a", "pear", end_inclusive=True) == [("apple", "pomme"), ("pear", "poire")]
        assert t.range(reverse=True, limit=2) == [("émeu", "emu"), ("pear", "poire")]
        assert t.first() == ("Zebra", "zèbre") and t.last() == ("émeu", "emu")
        assert "apple" in t and "plum" not in t
        assert t.get("plum") is None and t.get("plum", "?") == "?"


def test_matches_a_dict_under_random_operations(db):
    seed = random.randrange(1 << 30)
    print(f"seed {seed} (replay: rng = random.Random({seed}))")
    rng = random.Random(seed)
    model = {}
    for _ in range(5):
        with db.write() as txn:
            t = txn.tree("model")
            for _ in range(400):
                key = rng.randbytes(rng.randrange(1, 6))
                if rng.random() < 0.7:
                    value = rng.randbytes(rng.randrange(0, 40))
                    t[key] = value
                    model[key] = value
                elif key in model:
                    assert t.pop(key) == model.pop(key)
                else:
                    with pytest.raises(KeyError):
                        del t[key]
    with db.read() as txn:
        t = txn.tree("model")
        assert len(t) == len(model)
        assert list(t.items()) == sorted(model.items())  # streamed past one chunk
        low, high = sorted(rng.sample(sorted(model), 2))
        assert t.range(low, high) == [(k, v) for k, v in sorted(model.items()) if low <= k < high]


def test_exception_aborts_the_transaction(db):
    with db.write() as txn:
        txn.tree("t")[b"kept"] = b"1"
    with pytest.raises(ZeroDivisionError):
        with db.write() as txn:
            t = txn.tree("t")
            t[b"lost"] = b"2"
            del t[b"kept"]
            1 / 0
    with db.read() as txn:
        assert list(txn.tree("t").items()) == [(b"kept", b"1")]


def test_explicit_abort_and_ended_transactions(db):
    txn = db.write()
    txn.tree("t")[b"k"] = b"v"
    txn.abort()
    with pytest.raises(ValueError, match="ended"):
        txn.tree("t")
    with pytest.raises(quiredb.Error, match="t"):
        with db.read() as snapshot:
            snapshot.tree("t")  # never committed: no such tree
    txn = db.write()
    txn.tree("t")[b"k"] = b"v"
    txn.commit(durability="full")
    with pytest.raises(ValueError):
        txn.commit()
    with db.read() as snapshot:
        assert snapshot.tree("t")[b"k"] == b"v"


def test_snapshot_does_not_see_later_commits(db):
    with db.write() as txn:
        txn.tree("t")[b"k"] = b"old"
    snapshot = db.read()
    with db.write() as txn:
        txn.tree("t")[b"k"] = b"new"
    assert snapshot.tree("t")[b"k"] == b"old"
    snapshot.close()
    with db.read() as fresh:
        assert fresh.tree("t")[b"k"] == b"new"


def test_read_only_tree_and_type_errors(db):
    with db.write() as txn:
        txn.tree("t")[b"k"] = b"v"
    with db.read() as txn:
        t = txn.tree("t")
        with pytest.raises(TypeError, match="read-only"):
            t[b"k"] = b"w"
        with pytest.raises(TypeError):
            t[42]
    with pytest.raises(TypeError):
        db.write().tree("t", key_type=int)


def test_engine_errors_carry_the_engine_message(db):
    with pytest.raises(quiredb.Error, match="(?i)key"):
        with db.write() as txn:
            txn.tree("t")[b"x" * 100_000] = b"v"
    with db.read() as txn:
        with pytest.raises(quiredb.Error):
            txn.tree("t")  # the failed transaction created nothing


def test_second_writer_in_the_same_thread_is_refused(db):
    with db.write():
        with pytest.raises(RuntimeError, match="already has a write transaction"):
            db.write()


def test_writers_of_several_threads_take_turns(db):
    def work(thread):
        for i in range(20):
            with db.write() as txn:
                t = txn.tree("counter")
                t[b"n"] = str(int(t.get(b"n", b"0")) + 1).encode()
                t[f"{thread}-{i}".encode()] = b""

    with db.write() as txn:
        txn.tree("counter")
    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with db.read() as txn:
        t = txn.tree("counter")
        assert t[b"n"] == b"80"
        assert len(t) == 81


def test_a_waiting_writer_releases_the_gil(db):
    # The main thread holds the write turn; another thread asks for it. If the waiting
    # thread held the GIL, the main thread could never commit: the join would time out.
    txn = db.write()
    txn.tree("t")[b"first"] = b"1"
    done = threading.Event()

    def second():
        with db.write() as other:
            other.tree("t")[b"second"] = b"2"
        done.set()

    thread = threading.Thread(target=second)
    thread.start()
    assert not done.wait(0.2)  # waits for the turn
    txn.commit()
    thread.join(timeout=30)
    assert done.is_set()
    with db.read() as snapshot:
        assert list(snapshot.tree("t").keys()) == [b"first", b"second"]


def test_closed_database(tmp_path):
    db = quiredb.open(tmp_path / "x.quire")
    db.close()
    with pytest.raises(ValueError, match="closed"):
        db.write()


def test_open_errors_name_the_file(tmp_path):
    bad = tmp_path / "not-a-db.quire"
    bad.write_bytes(b"this is not a QuireDB file" * 1000)
    with pytest.raises(quiredb.Error, match="not-a-db.quire"):
        quiredb.open(bad)
    with pytest.raises(ValueError, match="durability"):
        quiredb.open(tmp_path / "y.quire", durability="sometimes")
