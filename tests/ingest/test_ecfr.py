"""Reading eCFR pages: structure, text with spans, and every kind of bad input."""

from __future__ import annotations

import http.server
import re
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from privacy_checklist.ingest.ecfr import (
    IngestError,
    PartPage,
    decode,
    load_page,
    parse_page,
    read_source,
    split_labels,
)
from privacy_checklist.kg.tree import build_tree


def page(body: str, toc: str = "§ 164.900", part: str = "164") -> str:
    """A small page in the eCFR's own markup."""
    return f"""<!DOCTYPE html><html><head><title>eCFR :: 45 CFR Part {part} -- Test Part</title>
<link rel="canonical" href="https://www.ecfr.gov/current/title-45/part-{part}" /></head><body>
<p>up to date as of 11/20/2023.</p>
<table class="table-of-contents"><tr class="section"><td>{toc}</td></tr></table>
<div class="part" id="part-{part}"><h1>PART {part}—TEST PART</h1>
<div class="subpart" id="subpart-A"><h2>Subpart A—General</h2>
{body}
</div></div></body></html>"""


def marker(label: str) -> str:
    return f'<span class="paragraph-hierarchy"><span class="paren">(</span>{label}<span class="paren">)</span></span>'


def div(pid: str, inner: str, children: str = "", indent: int = 1) -> str:
    return (
        f'<div id="p-{pid}"><p class="indent-{indent}" data-title="{pid}">{marker(pid.rsplit("(", 1)[1][:-1])} '
        f"{inner}</p>{children}</div>"
    )


NESTED = page(
    '<div class="section" id="164.900"><h4>§ 164.900 Nesting.</h4>'
    + div(
        "164.900(a)",
        '<em class="paragraph-heading">Standard.</em> A covered entity may disclose '
        'as <a href="/current/title-45/section-164.900#p-164.900(b)" class="cfr external">paragraph (b)</a> says:',
        div(
            "164.900(a)(1)",
            "One.",
            div(
                "164.900(a)(1)(i)",
                "Roman.",
                div(
                    "164.900(a)(1)(i)(A)",
                    "Upper.",
                    div(
                        "164.900(a)(1)(i)(A)(1)",
                        "Italic one.",
                        div("164.900(a)(1)(i)(A)(1)(i)", "Italic roman.", indent=6),
                        indent=5,
                    ),
                    indent=4,
                ),
                indent=3,
            ),
            indent=2,
        ),
    )
    + div(
        "164.900(b)", "Bee.", '<p class="indent-2 no-hierarchy">(1) Text with no id of its own.</p>'
    )
    + '<p class="citation">[65 FR 82802, Dec. 28, 2000]</p></div>'
)

FLAT = page(
    '<div class="section" id="164.900"><h4>§ 164.900 Definitions.</h4>'
    "<p>As used in this subpart, the following definitions apply:</p>"
    '<p class="indent-1" id="p-164.900(Alpha%20term)"><em class="paragraph-hierarchy">Alpha term</em> means a thing.</p>'
    '<p class="indent-1" id="p-164.900(Beta)"><em class="paragraph-hierarchy">Beta:</em> </p>'
    f'<p class="indent-2" id="p-164.900(Alpha%20term)(1)">{marker("1")} placed under the wrong term by its id.</p>'
    f'<p class="indent-3" id="p-164.900(Beta)(1)(i)">{marker("i")} skips the (1) level.</p>'
    "</div>"
)


def parse(html: str) -> PartPage:
    return parse_page(html, "test.html")


def test_nested_divs_six_levels() -> None:
    parsed = parse(NESTED)
    tree = build_tree([parsed])
    deepest = tree["164.900(a)(1)(i)(A)(1)(i)"]
    assert [n.id for n in tree.path(deepest.id)] == [
        "HIPAA",
        "Part 164",
        "Part 164 Subpart A",
        "164.900",
        "164.900(a)",
        "164.900(a)(1)",
        "164.900(a)(1)(i)",
        "164.900(a)(1)(i)(A)",
        "164.900(a)(1)(i)(A)(1)",
        deepest.id,
    ]
    assert deepest.text == "Italic roman."
    assert deepest.depth == 9
    assert tree.anomalies == []


def test_heading_text_and_link_spans() -> None:
    node = next(n for n in parse(NESTED).nodes if n.id == "164.900(a)")
    assert node.title == "Standard."
    assert node.text == "A covered entity may disclose as paragraph (b) says:"
    assert len(node.links) == 1
    link = node.links[0]
    assert node.text[link.start : link.end] == "paragraph (b)" == link.text
    assert link.href.endswith("#p-164.900(b)")


def test_control_characters_in_a_page_are_spaces(tmp_path: Path) -> None:
    """A stray control character (a vertical tab, an escape, a NUL) reads as a space, and the
    knowledge base built from the page is written whole (GraphML cannot hold them)."""
    from privacy_checklist.kg.kb import build

    dirty = NESTED.replace("A covered entity may", "A covered\x0b\x1b entity\x00 may")
    dirty = dirty.replace("Standard.", "Stan\x01dard.")
    nodes = {n.id: n for n in parse(dirty).nodes}
    assert nodes["164.900(a)"].text == "A covered entity may disclose as paragraph (b) says:"
    assert nodes["164.900(a)"].title == "Stan dard."
    link = nodes["164.900(a)"].links[0]
    assert nodes["164.900(a)"].text[link.start : link.end] == "paragraph (b)"
    build([parse(dirty)]).save(tmp_path / "kb")
    assert (tmp_path / "kb" / "tree.graphml").exists()


def test_text_without_id_and_notes_are_kept() -> None:
    nodes = {n.id: n for n in parse(NESTED).nodes}
    assert nodes["164.900(b)"].text == "Bee.\n(1) Text with no id of its own."
    assert nodes["164.900"].notes == ["[65 FR 82802, Dec. 28, 2000]"]


def test_flat_definitions_skipped_level_and_layout() -> None:
    parsed = parse(FLAT)
    nodes = {n.id: n for n in parsed.nodes}
    assert nodes["164.900(Alpha term)"].flat and nodes["164.900(Alpha term)"].indent == 1
    assert nodes["164.900"].text == "As used in this subpart, the following definitions apply:"
    tree = build_tree([parsed])
    assert tree["164.900(Beta)(1)(i)"].parent == "164.900(Beta)"
    assert tree["164.900(Alpha term)(1)"].parent == "164.900(Alpha term)"
    kinds = {(a.node, a.kind) for a in tree.anomalies}
    assert ("164.900(Beta)(1)(i)", "skipped-level") in kinds
    assert ("164.900(Alpha term)(1)", "layout-mismatch") in kinds
    assert tree["164.900(Beta)"].title == "Beta"


@pytest.mark.parametrize(
    ("node_id", "section", "labels"),
    [
        ("164.502(a)(1)(i)", "164.502", ["a", "1", "i"]),
        ("160.103(Business associate)(1)(i)", "160.103", ["Business associate", "1", "i"]),
        (
            "160.103(Health maintenance organization (HMO))",
            "160.103",
            ["Health maintenance organization (HMO)"],
        ),
        ("164.502", "164.502", []),
    ],
)
def test_split_labels(node_id: str, section: str, labels: list[str]) -> None:
    assert split_labels(node_id) == (section, labels)


def test_split_labels_unbalanced() -> None:
    with pytest.raises(ValueError, match="unbalanced"):
        split_labels("164.502(a(1)")


# --------------------------------------------------------------------------- the real pages


def test_real_pages_every_id_once(pages: list[PartPage], page_paths: list[Path]) -> None:
    for parsed, path in zip(pages, page_paths, strict=True):
        html = path.read_text(encoding="utf-8")
        ids = [urllib.parse.unquote(i) for i in re.findall(r'id="p-([^"]*)"', html)]
        got = [n.id for n in parsed.nodes if n.kind == "paragraph"]
        assert sorted(got) == sorted(ids)
    assert sum(1 for p in pages for n in p.nodes if n.kind == "paragraph") == 2098
    assert sum(1 for p in pages for n in p.nodes if n.kind == "section") == 144


def test_real_pages_provenance(pages: list[PartPage]) -> None:
    assert [p.part for p in pages] == ["160", "162", "164"]
    assert all(p.up_to_date == "2023-11-20" for p in pages)
    assert pages[2].url == "https://www.ecfr.gov/current/title-45/subtitle-A/subchapter-C/part-164"
    assert pages[2].sha256 == "719ded965489a57286c3f0cda09aee3a0cad5561f80a2e527a87ff0c80715d09"
    assert pages[2].title == "Security and Privacy"


# --------------------------------------------------------------------------- bad input


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.html"
    empty.write_text("  \n")
    with pytest.raises(IngestError, match="is empty"):
        load_page(str(empty))


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        load_page(str(tmp_path / "nope.html"))
    with pytest.raises(IngestError, match="is a directory"):
        load_page(str(tmp_path))


def test_truncated_real_page(tmp_path: Path, page_paths: list[Path]) -> None:
    data = page_paths[2].read_bytes()
    cut = tmp_path / "cut.html"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(IngestError, match="truncated"):
        load_page(str(cut))


def test_body_missing_sections_is_truncated(page_paths: list[Path]) -> None:
    html = page_paths[0].read_text(encoding="utf-8")
    start = html.index('<div class="section" id="160.534">')
    end = html.index("</div>", html.index('<p class="citation">', start)) + len("</div>")
    with pytest.raises(IngestError, match=r"missing, first § 160\.534"):
        parse_page(html[:start] + html[end:], "damaged.html")


def test_not_an_ecfr_page() -> None:
    with pytest.raises(IngestError, match="not an eCFR part page"):
        parse_page("<html><body><p>Hello</p></body></html>", "other.html")
    with pytest.raises(IngestError, match="not HTML"):
        parse_page("just some words", "words.txt")


def test_wrong_encoding() -> None:
    with pytest.raises(IngestError, match="not UTF-8"):
        decode("Section § 164.502".encode("utf-16"), "utf16.html")
    assert decode("<meta charset=latin-1>§".encode("latin-1"), "latin.html").endswith("§")


def test_duplicate_id() -> None:
    with pytest.raises(IngestError, match="occurs twice"):
        parse(
            page(
                '<div class="section" id="164.900"><h4>§ 164.900 X.</h4>'
                + div("164.900(a)", "One.")
                + div("164.900(a)", "Again.")
                + "</div>"
            )
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_network_down_is_one_clear_error() -> None:
    url = f"http://127.0.0.1:{_free_port()}/current/title-45/part-164"
    with pytest.raises(IngestError, match="cannot fetch") as info:
        read_source(url, timeout=5)
    assert "\n" not in str(info.value)


@pytest.fixture()
def served(page_paths: list[Path]) -> Iterator[str]:
    """The real Part 160 page, and a 404, served on 127.0.0.1."""
    body = page_paths[0].read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.endswith("part-160"):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_url_source(served: str) -> None:
    parsed = load_page(f"{served}/current/title-45/part-160", timeout=10)
    assert parsed.part == "160"
    assert sum(1 for n in parsed.nodes if n.kind == "paragraph") == 525
    with pytest.raises(IngestError, match="HTTP 404"):
        load_page(f"{served}/current/title-45/part-999", timeout=10)
