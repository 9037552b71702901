"""The XML store: load_xml, xpath giving nodes, string values, XML, counts and the
values of non-node expressions (compared with the `quire xpath` CLI), explain, and
errors (a malformed query, a malformed document: the database unchanged)."""

import subprocess

import pytest

import quiredb

LIBRARY = """<library>
  <book id="b1" year="1851"><title>Moby-Dick</title><author>Melville</author></book>
  <book id="b2" year="1813"><title>Pride and Prejudice</title><author>Austen</author></book>
  <book id="b3" year="1869"><title>War and Peace</title><author>Tolstoy</author></book>
  <!-- more to come -->
</library>"""


@pytest.fixture
def library(tmp_path):
    folder = tmp_path / "xml"
    folder.mkdir()
    (folder / "a.xml").write_text(LIBRARY)
    (folder / "b.xml").write_text("<library><book id='b4' year='1605'><title>Don Quixote</title></book></library>")
    path = tmp_path / "lib.quire"
    with quiredb.open(path) as db:
        summary = db.load_xml("books", folder)
        assert summary["documents"] == 2
        assert summary["nodes"]["comment"] == 1
    return path


def test_nodes_values_xml_and_counts(library):
    with quiredb.open(library, read_only=True) as db:
        assert db.collections() == ["books"]
        titles = db.xpath("books", "//book/title")
        assert [node.path for node in titles] == ["/library/book/title"] * 4
        assert [node.name for node in titles] == ["title"] * 4
        assert titles == sorted(titles, key=lambda node: node.pre)
        assert db.xpath("books", "//book/title", output="values") == [
            "Moby-Dick", "Pride and Prejudice", "War and Peace", "Don Quixote"]
        assert db.xpath("books", "//book[@year < 1850]/@id", output="values") == ["b2", "b4"]
        assert db.xpath("books", "//book/@id", output="count") == 4
        assert db.xpath("books", "//author", output="xml", limit=1) == ["<author>Melville</author>"]
        assert db.xpath("books", "count(//book)") == 4.0
        assert db.xpath("books", "string(//book[2]/title)") == "Pride and Prejudice"
        assert db.xpath("books", "//book/@year = 1869") is True
        plan = db.explain("books", "//book[author]/title")
        assert "title" in plan


def test_xpath_matches_the_cli(library, quire_bin):
    query = "//book[@year > 1800]/title"
    with quiredb.open(library, read_only=True) as db:
        nodes = db.xpath("books", query)
        values = db.xpath("books", query, output="values")
    cli = subprocess.run([quire_bin, "xpath", str(library), "books", query], check=True, capture_output=True, text=True)
    assert [f"{node.pre}\t{node.path}" for node in nodes] == cli.stdout.splitlines()
    cli = subprocess.run([quire_bin, "xpath", str(library), "books", query, "--values"],
                         check=True, capture_output=True, text=True)
    assert values == cli.stdout.splitlines()


def test_errors_carry_the_message_and_change_nothing(library, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<library><book></library>")
    with quiredb.open(library) as db:
        with pytest.raises(quiredb.Error, match="bad.xml"):
            db.load_xml("books", bad)
        assert db.xpath("books", "//book", output="count") == 4
        with pytest.raises(quiredb.Error, match="(?i)column|position|expected"):
            db.xpath("books", "//book[")
        with pytest.raises(quiredb.Error, match="nowhere"):
            db.xpath("nowhere", "//a")
        with pytest.raises(ValueError, match="output"):
            db.xpath("books", "//a", output="json")
        summary = db.load_xml("more", [bad, library.parent / "xml" / "b.xml"], skip_bad=True)
        assert summary["documents"] == 1 and summary["skipped"][0][0].endswith("bad.xml")


FEED = """<feed xmlns="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/" xml:lang="en">
  <entry><title>One</title><dc:creator>Ann</dc:creator></entry>
  <entry xml:lang="fr"><title>Deux</title><dc:creator>Bob</dc:creator></entry>
</feed>"""


def test_namespaces_bound_or_taken_from_the_data(tmp_path):
    (tmp_path / "feed.xml").write_text(FEED)
    path = tmp_path / "feed.quire"
    with quiredb.open(path) as db:
        db.load_xml("feeds", tmp_path / "feed.xml")
    atom = {"a": "http://www.w3.org/2005/Atom"}
    with quiredb.open(path, read_only=True) as db:
        assert db.xpath("feeds", "//a:entry/a:title", output="values", namespaces=atom) == ["One", "Deux"]
        assert db.xpath("feeds", "//dc:creator", output="values") == ["Ann", "Bob"]
        assert db.xpath("feeds", "//entry[lang('fr')]/title", output="values") == ["Deux"]
        assert db.xpath("feeds", "namespace-uri(/*)") == atom["a"]
        assert db.xpath("feeds", "count(//a:title)", namespaces={"a": "urn:other"}) == 0.0
        assert "entry" in db.explain("feeds", "//a:entry", namespaces=atom)
        assert db.xpath("feeds", "count(//entry)", strict_names=True) == 0.0
        assert db.xpath("feeds", "count(//entry)", default_namespace=atom["a"]) == 2.0
        with pytest.raises(Exception, match="prefix `a`"):
            db.xpath("feeds", "//a:entry")
        with pytest.raises(ValueError, match="namespace prefix"):
            db.xpath("feeds", "//a:entry", namespaces={"a:b": "urn:x"})


def test_variables_are_bound_values(library):
    with quiredb.open(library, read_only=True) as db:
        assert db.xpath("books", "//book[@year < $y]/title", output="values", variables={"y": 1850}) == [
            "Pride and Prejudice", "Don Quixote"]
        assert db.xpath("books", "//book[author = $a]/@id", output="values", variables={"a": "Tolstoy"}) == ["b3"]
        assert db.xpath("books", "count(//book[$all])", variables={"all": False}) == 0.0
        quotes = "O'Brien \"Jr\""
        assert db.xpath("books", "concat($q, '')", variables={"q": quotes}) == quotes
        with pytest.raises(Exception, match="no value is bound"):
            db.xpath("books", "//book[@id = $id]")
        with pytest.raises(TypeError, match="variable id"):
            db.xpath("books", "//book[@id = $id]", variables={"id": [1]})
