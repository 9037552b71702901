#!/usr/bin/env python3
"""Answers of lxml (libxml2, XPath 1.0) and BaseX (XQuery 3.1) to queries.txt over
doc.xml, written to answers.tsv for the reference evaluator's cross-check
(`xml/tests/xpath1/mod.rs`). Run from this folder: python3 answers.py [basex.jar]

Columns: query, lxml's answer, BaseX's answer ('error: …' when BaseX refuses what
XPath 1.0 allows, e.g. a non-numeric string compared with a number, or 1 div 0).
An answer is `nodes <count> <fnv64 hex>` (FNV-1a over the nodes' string values joined
by newlines, in document order), `number <value>`, `string <value>` or `boolean <b>`.
"""
import math
import os
import subprocess
import sys
import tempfile

import lxml.etree as etree

# Separators no value of doc.xml holds (control characters are not XML 1.0).
SEP = "\u241f"
END = "\u241e"
XSEP = SEP
XEND = END


def fnv(values):
    h = 0xCBF29CE484222325
    for i, v in enumerate(values):
        for b in (b"\n" if i else b"") + v.encode():
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def number(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def string_value(item):
    if isinstance(item, str):
        return str(item)
    if isinstance(item, etree._ProcessingInstruction):
        return item.text or ""
    return item.xpath("string(.)")


def lxml_answer(doc, query):
    r = doc.xpath(query)
    if isinstance(r, list):
        return f"nodes {len(r)} {fnv([string_value(i) for i in r])}"
    if isinstance(r, bool):
        return f"boolean {str(r).lower()}"
    if isinstance(r, float):
        return f"number {number(r)}"
    return f"string {r}"


def basex_answers(jar, queries):
    """One JVM for all queries; each prints one line tagged by its kind."""
    with tempfile.TemporaryDirectory() as db:
        commands = ["SET CHOP false", f"CREATE DB x1 {os.path.abspath('doc.xml')}"]
        for q in queries:
            xq = (
                f"let $r := ({q}) return if ($r instance of node()*) then "
                f"string-join(('nodes', string(count($r)), $r ! string(.)), '{XSEP}') "
                f"else if ($r instance of xs:boolean) then 'boolean{XSEP}' || string($r) "
                f"else if ($r instance of xs:numeric) then 'number{XSEP}' || string($r) "
                f"else 'string{XSEP}' || string($r)"
            )
            commands.append(f"XQUERY (try {{ {xq} }} catch * {{ 'error{XSEP}' || $err:code }}) || '{XEND}'")
        script = f"{db}/answers.bxs"
        with open(script, "w", encoding="utf-8") as f:
            f.write("\n".join(commands) + "\n")
        args = ["java", f"-Dorg.basex.DBPATH={db}", "-cp", jar, "org.basex.BaseX", "-c", script]
        run = subprocess.run(args, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"BaseX failed: {run.stderr[-2000:]}")
        out = run.stdout
    answers = []
    for chunk in out.split(END)[:-1]:
        parts = chunk.lstrip("\n").split(SEP)
        kind = parts[0]
        if kind == "nodes":
            answers.append(f"nodes {parts[1]} {fnv(parts[2:])}")
        elif kind == "number":
            answers.append(f"number {number(float(parts[1].replace('INF', 'inf')))}")
        else:
            answers.append(f"{kind} {parts[1] if len(parts) > 1 else ''}")
    return answers


def main():
    jar = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/java/basex.jar"
    queries = [q for q in open("queries.txt", encoding="utf-8").read().split("\n") if q.strip()]
    doc = etree.parse("doc.xml")
    lxml = [lxml_answer(doc, q) for q in queries]
    basex = basex_answers(jar, queries)
    assert len(basex) == len(queries), f"{len(basex)} BaseX answers for {len(queries)} queries"
    with open("answers.tsv", "w", encoding="utf-8") as out:
        for q, a, b in zip(queries, lxml, basex):
            out.write(f"{q}\t{a}\t{b}\n")
    differ = sum(a != b for a, b in zip(lxml, basex))
    print(f"{len(queries)} queries; lxml and BaseX differ on {differ}")


main()
