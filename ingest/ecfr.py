"""Read eCFR part pages (a URL or a saved file) into plain records, one per regulation unit.

The page nests most paragraphs as ``<div id="p-164.502(a)(1)(i)">`` holding a ``<p>``, but the
definitions of 160.103 are flat ``<p id=...>`` elements whose nesting shows only in their ids
and indent classes. This module keeps what the page says (ids, headings, own text, hyperlinks
with their character spans, the element that encloses each unit) and decides nothing about the
tree: :mod:`privacy_checklist.kg.tree` does that. It keeps no state.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

import lxml.html
from lxml import etree

from privacy_checklist.ingest.ids import split_labels  # the one splitter of ids

#: The live pages, for when the machine is online.
LIVE_URLS: dict[str, str] = {
    part: f"https://www.ecfr.gov/current/title-45/subtitle-A/subchapter-C/part-{part}"
    for part in ("160", "162", "164")
}
MAX_BYTES = 50_000_000


class IngestError(Exception):
    """A source could not be read as an eCFR part page; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Link:
    """A hyperlink inside a unit's text: ``text[start:end]`` is what the page shows."""

    start: int
    end: int
    text: str
    href: str
    css: str


@dataclass(slots=True)
class RawNode:
    """One unit of the page (part, subpart, section, appendix or paragraph), as the page has it.

    ``dom_parent`` is the id of the unit whose element encloses this one (for the flat
    definitions of 160.103 that is the section). ``notes`` are editorial lines kept with the
    unit: source citations ("[65 FR 82802, Dec. 28, 2000 ...]"), authority and source notes.
    """

    id: str
    kind: str
    _: KW_ONLY
    dom_parent: str | None
    title: str | None
    text: str = ""
    label: str | None = None
    links: list[Link] = field(default_factory=list)
    flat: bool = False
    indent: int | None = None
    term: bool = False
    notes: list[str] = field(default_factory=list)
    extra_blocks: int = 0


@dataclass(frozen=True, slots=True)
class PartPage:
    """A parsed eCFR part page and where it came from."""

    part: str
    title: str
    url: str
    source: str
    up_to_date: str | None
    sha256: str
    nodes: tuple[RawNode, ...]
    toc_sections: tuple[str, ...]


# --------------------------------------------------------------------------- reading sources


def read_source(source: str, timeout: float = 30.0) -> bytes:
    """The bytes of a page given as a URL or a file path.

    Raises:
        IngestError: the network is down, the server refused, the file is missing, empty or
            larger than 50 MB.
    """
    if re.match(r"^https?://", source, re.I):
        request = urllib.request.Request(
            source, headers={"User-Agent": "privacy-checklist/0.1 (+ingest)", "Accept": "text/html"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                data: bytes = response.read(MAX_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise IngestError(
                f"{source}: the server answered HTTP {exc.code} {exc.reason}"
            ) from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise IngestError(
                f"{source}: cannot fetch ({reason}); is the machine online? "
                "A saved page works too: --source FILE.html"
            ) from exc
    else:
        path = Path(source)
        if not path.exists():
            raise IngestError(f"{source}: no such file")
        if path.is_dir():
            raise IngestError(f"{source}: is a directory; pass the part pages' .html files")
        if path.stat().st_size > MAX_BYTES:
            raise IngestError(
                f"{source}: larger than {MAX_BYTES // 1_000_000} MB; not an eCFR part page"
            )
        data = path.read_bytes()
    if not data.strip():
        raise IngestError(f"{source}: is empty")
    if len(data) > MAX_BYTES:
        raise IngestError(
            f"{source}: larger than {MAX_BYTES // 1_000_000} MB; not an eCFR part page"
        )
    return data


def decode(data: bytes, source: str) -> str:
    """Decode a page as UTF-8 (what the eCFR serves), or the charset its ``<meta>`` names."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        declared = re.search(rb'charset=["\']?([A-Za-z0-9_-]+)', data[:4096])
        if declared:
            name = declared.group(1).decode("ascii")
            try:
                return data.decode(name)
            except (LookupError, UnicodeDecodeError):
                pass
        raise IngestError(
            f"{source}: not UTF-8 text (bad byte at offset {exc.start}); eCFR pages are UTF-8, "
            "so this file is damaged or not an eCFR page"
        ) from exc


# --------------------------------------------------------------------------- text with spans


def _control(ch: str) -> bool:
    """A character no text of the regulation holds and XML cannot: a control character
    (category Cc: NUL, escape, backspace ...), a lone surrogate, a non-character or the mark
    of a byte that could not be decoded; read as a
    space, so one stray byte in a page neither reaches the graphs nor stops their writing."""
    return unicodedata.category(ch) in ("Cc", "Cs") or ch in ("\ufffd", "\ufffe", "\uffff")


def _plain(text: str) -> str:
    """Text with white space and control characters collapsed to single spaces, stripped."""
    return " ".join("".join(" " if _control(ch) else ch for ch in text).split())


def _normalize(raw: str, spans: list[tuple[int, int, etree._Element]]) -> tuple[str, list[Link]]:
    """Collapse white space and strip, carrying link spans over to the new offsets."""
    new_at: list[int] = []
    out: list[str] = []
    pending_space = False
    length = 0
    for ch in raw:
        if ch.isspace() or _control(ch):
            if length:
                pending_space = True
            new_at.append(length + (1 if pending_space else 0))
            continue
        if pending_space:
            out.append(" ")
            length += 1
            pending_space = False
        new_at.append(length)
        out.append(ch)
        length += 1
    new_at.append(length)
    text = "".join(out)
    links: list[Link] = []
    for start, end, anchor in spans:
        s, e = min(new_at[start], len(text)), min(new_at[end], len(text))
        while s < e and text[s] == " ":
            s += 1
        while e > s and text[e - 1] == " ":
            e -= 1
        if e > s:
            links.append(
                Link(
                    s,
                    e,
                    text[s:e],
                    anchor.get("href", ""),
                    " ".join(anchor.get("class", "").split()),
                )
            )
    return text, links


def _classes(el: etree._Element) -> set[str]:
    return set((el.get("class") or "").split())


def _segments(
    el: etree._Element, skip: frozenset[str], anchor: etree._Element | None = None
) -> Iterator[tuple[str, etree._Element | None]]:
    """Text pieces of an element in order, each with the anchor it sits in (or None)."""
    if el.text:
        yield el.text, anchor
    for child in el:
        if (
            isinstance(child.tag, str)
            and not (_classes(child) & skip)
            and child.tag not in ("script", "style")
        ):
            inner = child if child.tag == "a" else anchor
            sep = " " if child.tag in ("td", "th", "br", "p", "div", "tr") else ""
            if sep:
                yield sep, None
            yield from _segments(child, skip, inner)
            if child.tag == "td" or child.tag == "th":
                yield " | ", None
            elif child.tag == "tr":
                yield "\n", None
        if child.tail:
            yield child.tail, anchor


def render(el: etree._Element, skip: frozenset[str] = frozenset()) -> tuple[str, list[Link]]:
    """An element's text, white space collapsed, with its hyperlinks as spans."""
    parts: list[str] = []
    spans: list[tuple[int, int, etree._Element]] = []
    pos = 0
    open_anchor: etree._Element | None = None
    open_start = 0
    for piece, anchor in _segments(el, skip):
        if anchor is not open_anchor:
            if open_anchor is not None:
                spans.append((open_start, pos, open_anchor))
            open_anchor, open_start = anchor, pos
        parts.append(piece)
        pos += len(piece)
    if open_anchor is not None:
        spans.append((open_start, pos, open_anchor))
    return _normalize("".join(parts), spans)


def _table_text(table: etree._Element) -> tuple[str, list[Link]]:
    """A table as text: one line a row, cells joined by " | ", links kept with their spans."""
    rows: list[str] = []
    links: list[Link] = []
    offset = 0
    for tr in table.iter("tr"):
        cells: list[str] = []
        length = 0
        for td in tr:
            if td.tag not in ("td", "th"):
                continue
            text, cell_links = render(td)
            if not text:
                continue
            start = offset + length + (3 * len(cells))
            links.extend(
                Link(k.start + start, k.end + start, k.text, k.href, k.css) for k in cell_links
            )
            length += len(text)
            cells.append(text)
        if cells:
            row = " | ".join(cells)
            rows.append(row)
            offset += len(row) + 1
    return "\n".join(rows), links


# --------------------------------------------------------------------------- the page

_MARKER_CLASSES = frozenset({"paragraph-hierarchy", "paragraph-heading"})
_HEADING_ONLY = frozenset({"paragraph-heading"})


def _paragraph_id(el: etree._Element) -> str | None:
    raw = el.get("id") or ""
    return urllib.parse.unquote(raw[2:]) if raw.startswith("p-") else None


def _indent(el: etree._Element) -> int | None:
    for cls in _classes(el):
        if cls.startswith("indent-") and cls[7:].isdigit():
            return int(cls[7:])
    return None


class _PageReader:
    def __init__(self, part: str, source: str) -> None:
        self.part = part
        self.source = source
        self.nodes: list[RawNode] = []
        self.by_id: dict[str, RawNode] = {}

    def add(self, node: RawNode) -> RawNode:
        if node.id in self.by_id:
            raise IngestError(f"{self.source}: the id {node.id!r} occurs twice in the page")
        self.nodes.append(node)
        self.by_id[node.id] = node
        return node

    def append_block(self, node: RawNode, text: str, links: list[Link]) -> None:
        """Add text that has no paragraph id of its own to the unit that holds it."""
        if not text:
            return
        shift = len(node.text) + 1 if node.text else 0
        node.text = f"{node.text}\n{text}" if node.text else text
        node.links.extend(
            Link(k.start + shift, k.end + shift, k.text, k.href, k.css) for k in links
        )
        node.extra_blocks += 1

    # structure ---------------------------------------------------------------------------
    def walk(self, el: etree._Element, parent: RawNode) -> None:
        for child in el:
            if not isinstance(child.tag, str):
                continue
            cls = _classes(child)
            if child.tag == "div" and "subpart" in cls:
                self.subpart(child, parent)
            elif child.tag == "div" and "section" in cls:
                self.section(child, parent)
            elif child.tag == "div" and "appendix" in cls:
                self.appendix(child, parent)
            elif child.tag == "div" and cls & {"authority", "source", "editorial-note"}:
                parent.notes.append(_plain(child.text_content()))
            elif child.tag == "div":
                self.walk(child, parent)

    def subpart(self, el: etree._Element, parent: RawNode) -> None:
        letter = (el.get("id") or "").removeprefix("subpart-")
        heading = el.find("h2")
        title = _plain(heading.text_content()) if heading is not None else ""
        title = re.sub(r"^Subparts?\s+[A-Z–-]+\s*[—-]\s*", "", title)
        node = self.add(
            RawNode(
                f"Part {self.part} Subpart {letter}", "subpart", dom_parent=parent.id, title=title
            )
        )
        self.walk(el, node)

    def section(self, el: etree._Element, parent: RawNode) -> None:
        sid = el.get("id") or ""
        if not re.fullmatch(r"\d+\.\d+[a-z]?", sid):
            raise IngestError(f"{self.source}: a section has the unexpected id {sid!r}")
        heading = el.find("h4")
        title = _plain(heading.text_content()) if heading is not None else ""
        title = re.sub(r"^§+\s*[\d.]+[a-z]?\s*", "", title)
        node = self.add(RawNode(sid, "section", dom_parent=parent.id, title=title))
        self.body(el, node)

    def appendix(self, el: etree._Element, parent: RawNode) -> None:
        heading = el.find("h4")
        title = _plain(heading.text_content()) if heading is not None else ""
        name, _, subtitle = title.partition("—")
        node = self.add(
            RawNode(name.strip(), "appendix", dom_parent=parent.id, title=subtitle.strip() or None)
        )
        for child in el:
            if not isinstance(child.tag, str) or child.tag == "h4":
                continue
            tables = [child] if child.tag == "table" else list(child.iter("table"))
            if tables:
                for table in tables:
                    self.append_block(node, *_table_text(table))
            elif "citation" in _classes(child):
                node.notes.append(_plain(child.text_content()))
            else:
                self.append_block(node, *render(child))

    def body(self, children: Iterable[etree._Element], holder: RawNode) -> None:
        """Children of a section or paragraph element: paragraphs, and text with no id."""
        for child in children:
            if not isinstance(child.tag, str) or child.tag in ("h4", "h3", "h2"):
                continue
            pid = _paragraph_id(child)
            if pid is not None and child.tag == "div":
                self.div_paragraph(child, pid, holder)
            elif pid is not None and child.tag == "p":
                self.flat_paragraph(child, pid, holder)
            elif "citation" in _classes(child):
                holder.notes.append(_plain(child.text_content()))
            elif child.tag == "table" or child.find(".//table") is not None:
                for table in [child] if child.tag == "table" else child.iter("table"):
                    self.append_block(holder, *_table_text(table))
            else:
                self.append_block(holder, *render(child))

    def _own(self, p: etree._Element, node_id: str, dom_parent: str, *, flat: bool) -> RawNode:
        heading = p.find(".//em[@class='paragraph-heading']")
        title = _plain(heading.text_content()) if heading is not None else None
        term_el = p.find(".//em[@class='paragraph-hierarchy']")
        is_term = term_el is not None or p.get("data-term") == "true"
        skip = _HEADING_ONLY if is_term else _MARKER_CLASSES
        text, links = render(p, skip)
        _, labels = split_labels(node_id)
        label = labels[-1] if labels else None
        if is_term and term_el is not None and title is None:
            title = _plain(term_el.text_content()).rstrip(":").strip()
        return RawNode(
            node_id,
            "paragraph",
            dom_parent=dom_parent,
            title=title,
            text=text,
            label=label,
            links=links,
            flat=flat,
            indent=_indent(p),
            term=is_term,
        )

    def div_paragraph(self, el: etree._Element, pid: str, holder: RawNode) -> None:
        first = next((c for c in el if isinstance(c.tag, str) and c.tag == "p"), None)
        if first is not None:
            node = self.add(self._own(first, pid, holder.id, flat=False))
        else:
            node = self.add(
                RawNode(
                    pid,
                    "paragraph",
                    dom_parent=holder.id,
                    title=None,
                    label=split_labels(pid)[1][-1],
                )
            )
        self.body([c for c in el if c is not first], node)

    def flat_paragraph(self, el: etree._Element, pid: str, holder: RawNode) -> None:
        self.add(self._own(el, pid, holder.id, flat=True))


def parse_page(html: str, source: str, sha256: str = "") -> PartPage:
    """Parse one eCFR part page.

    Raises:
        IngestError: the page is not an eCFR part page, or is truncated (sections that its
            table of contents lists are missing, or the document does not end).
    """
    if "<" not in html[:2000]:
        raise IngestError(f"{source}: not HTML; expected an eCFR part page")
    try:
        doc = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError) as exc:
        raise IngestError(f"{source}: not parseable as HTML ({exc})") from exc
    part_divs = doc.xpath(
        "//div[contains(concat(' ', @class, ' '), ' part ')][starts-with(@id, 'part-')]"
    )
    if not part_divs:
        raise IngestError(
            f"{source}: not an eCFR part page (no <div class='part' id='part-N'>); "
            "pass the page of 45 CFR Part 160, 162 or 164 from ecfr.gov"
        )
    part_el = part_divs[0]
    part = part_el.get("id", "").removeprefix("part-")
    if not html.rstrip().lower().endswith("</html>"):
        raise IngestError(
            f"{source}: truncated (the page does not end with </html>); download it again"
        )
    toc = tuple(
        m.group(1)
        for row in doc.xpath("//table[contains(@class,'table-of-contents')]//tr")
        if "section" in _classes(row) and "reserved" not in _classes(row)
        for m in [re.search(r"§\s*(\d+\.\d+[a-z]?)", row.text_content())]
        if m
    )
    h1 = part_el.find("h1")
    title = _plain(h1.text_content()) if h1 is not None else f"PART {part}"
    title = re.sub(r"^PART\s+\d+\s*[—-]\s*", "", title)
    head_title = doc.findtext(".//title") or ""
    if "--" in head_title and head_title.rsplit("--", 1)[1].strip().lower() == title.lower():
        title = head_title.rsplit("--", 1)[1].strip()  # "Security and Privacy", not upper case
    canonical = doc.xpath("//link[@rel='canonical']/@href")
    url = (
        canonical[0]
        if canonical
        else (source if source.startswith("http") else LIVE_URLS.get(part, ""))
    )
    stamp = re.search(r"up to date as of (\d{1,2})/(\d{1,2})/(\d{4})", html)
    up_to_date = (
        f"{stamp.group(3)}-{int(stamp.group(1)):02d}-{int(stamp.group(2)):02d}" if stamp else None
    )

    reader = _PageReader(part, source)
    if title.isupper():
        title = title.capitalize()
    root = reader.add(RawNode(f"Part {part}", "part", dom_parent=None, title=title))
    reader.walk(part_el, root)
    sections = {n.id for n in reader.nodes if n.kind == "section"}
    missing = [s for s in toc if s not in sections]
    if missing:
        raise IngestError(
            f"{source}: truncated or damaged: {len(missing)} section(s) listed in its table of "
            f"contents are missing, first § {missing[0]}"
        )
    if not sections:
        raise IngestError(f"{source}: the page holds no sections")
    return PartPage(
        part, root.title or "", url, source, up_to_date, sha256, tuple(reader.nodes), toc
    )


def load_page(source: str, timeout: float = 30.0) -> PartPage:
    """Read, check and parse one eCFR part page from a URL or a file."""
    data = read_source(source, timeout)
    html = decode(data, source)
    return parse_page(html, source, hashlib.sha256(data).hexdigest())
