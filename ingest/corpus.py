"""The labelled corpus: narratives written by many independent writers, each labelled with its
verdict, the paragraphs it rests on, its flows (each party's words and role, the information
and its type, the purpose) and the facts the law's conditions ask about (stated true, stated
false or not stated, with the words that state it), and the writer who wrote it.

One JSON object a line (``bench/data/corpus/WRITER.jsonl``; the format is in
``bench/corpus/make_briefs.py``). :func:`read_corpus` keeps the usable narratives and lists the
others by file, line and reason — never a silent drop: a line that is not JSON, a missing or
unknown verdict, an empty text, a repeated id, words said to be the text's that are not in it.
:meth:`Narrative.case` is the narrative as a case of :mod:`~privacy_checklist.ingest.cases`, so
``pcheck eval --cases FILE.jsonl`` scores a writer's set as it scores a case CSV.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privacy_checklist.ingest.cases import CSV_LABELS, Case, CaseFileError, SkippedRow, case_label

#: the parts of a labelled flow, as the writers label them
PARTS = ("sender", "recipient", "subject", "information", "purpose")


@dataclass(frozen=True, slots=True)
class Said:
    """A labelled part or fact: the words of the text that say it ("" when it is not said),
    and what they are (a role, an information type, a purpose's kind)."""

    words: str
    term: str = ""


@dataclass(frozen=True, slots=True)
class LabelledFlow:
    """A flow as its writer labelled it: its parts, and whether the verdict is about it."""

    parts: Mapping[str, Said]
    deciding: bool = False


@dataclass(frozen=True, slots=True)
class LabelledFact:
    """A condition of the deciding flow: stated true, stated false or not stated (None)."""

    kind: str
    value: bool | None
    words: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Narrative:
    """One narrative of the corpus and its labels (see the module docstring)."""

    id: str
    writer: str
    text: str
    verdict: str
    paragraphs: tuple[str, ...] = ()
    assignment: str = ""
    twin: str = ""
    changed: str = ""
    flows: tuple[LabelledFlow, ...] = ()
    facts: tuple[LabelledFact, ...] = ()
    line: int = 0

    @property
    def deciding(self) -> LabelledFlow | None:
        return next((f for f in self.flows if f.deciding), None)

    def case(self) -> Case:
        """The narrative as a case (its paragraphs as the gold regulations)."""
        return Case(
            case_id=self.id,
            text=self.text,
            label=CSV_LABELS[self.verdict],
            expected=self.verdict,
            regulations=(str(list(self.paragraphs)),) if self.paragraphs else (),
            line=self.line,
        )


@dataclass
class Corpus:
    """The usable narratives of some corpus files, and the lines skipped (with why)."""

    narratives: list[Narrative]
    skipped: list[tuple[str, SkippedRow]]

    @property
    def writers(self) -> list[str]:
        return sorted({n.writer for n in self.narratives})


def twin_pairs(narratives: Iterable[Narrative]) -> list[tuple[Narrative, Narrative]]:
    """The twin pairs among ``narratives`` whose gold verdicts differ (each pair once, in the
    order of their ids): the pairs a reader must tell apart by the deciding fact."""
    ids = {n.id: n for n in narratives}
    keys = sorted(
        {
            tuple(sorted((n.id, n.twin)))
            for n in ids.values()
            if n.twin in ids and ids[n.twin].verdict != n.verdict
        }
    )
    return [(ids[a], ids[b]) for a, b in keys]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _said(value: object, term_key: str) -> Said:
    if isinstance(value, Mapping):
        return Said(_text(value.get("words")), _text(value.get(term_key)))
    return Said("")


def _flows(value: object) -> tuple[LabelledFlow, ...]:
    keys = {"information": "type", "purpose": "kind"}
    out = []
    for flow in value if isinstance(value, list) else []:
        if isinstance(flow, Mapping):
            parts = {p: _said(flow.get(p), keys.get(p, "role")) for p in PARTS}
            out.append(LabelledFlow(parts, flow.get("deciding") is True))
    return tuple(out)


def _facts(value: object) -> tuple[LabelledFact, ...]:
    out = []
    for fact in value if isinstance(value, list) else []:
        if isinstance(fact, Mapping) and isinstance(fact.get("kind"), str):
            said = fact.get("value")
            out.append(
                LabelledFact(
                    fact["kind"],
                    said if isinstance(said, bool) else None,
                    _text(fact.get("words")),
                )
            )
    return tuple(out)


def _problem(data: Any, seen: Mapping[str, int]) -> str | None:
    """Why a line cannot be used, or None."""
    if not isinstance(data, Mapping):
        return "not a JSON object"
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        return "no text"
    if case_label(data.get("verdict")) is None:
        return f"verdict {data.get('verdict')!r} is not permit, prohibit or not_applicable"
    ident = data.get("id")
    if not isinstance(ident, str) or not ident:
        return "no id"
    if ident in seen:
        return f"id {ident!r} again (first on line {seen[ident]})"
    for flow in _flows(data.get("flows")):
        for name, said in flow.parts.items():
            if said.words and said.words not in text:
                return f"{name} words {said.words[:40]!r} are not in the text"
    for fact in _facts(data.get("conditions")):
        if fact.words and fact.words not in text:
            return f"{fact.kind} words {fact.words[:40]!r} are not in the text"
    return None


def read_corpus(paths: Iterable[Path | str]) -> Corpus:
    """The narratives of corpus files (JSON lines), each file one writer's (the writer is the
    file's name unless a line names its own ``writer``).

    Raises:
        CaseFileError: a file that does not exist or is not UTF-8.
    """
    narratives: list[Narrative] = []
    skipped: list[tuple[str, SkippedRow]] = []
    seen: dict[str, int] = {}
    for path in map(Path, paths):
        if not path.is_file():
            raise CaseFileError(f"{path}: no such corpus file")
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise CaseFileError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                skipped.append((str(path), SkippedRow(number, f"not JSON ({exc.msg})")))
                continue
            problem = _problem(data, seen)
            if problem is not None:
                skipped.append((str(path), SkippedRow(number, problem)))
                continue
            seen[data["id"]] = number
            paragraphs = data.get("paragraphs")
            narratives.append(
                Narrative(
                    id=data["id"],
                    writer=_text(data.get("writer")) or path.stem,
                    text=data["text"],
                    verdict=str(case_label(data["verdict"])),
                    paragraphs=tuple(p for p in paragraphs if isinstance(p, str))
                    if isinstance(paragraphs, list)
                    else (),
                    assignment=_text(data.get("assignment")),
                    twin=_text(data.get("twin")),
                    changed=_text(data.get("changed")),
                    flows=_flows(data.get("flows")),
                    facts=_facts(data.get("conditions")),
                    line=number,
                )
            )
    return Corpus(narratives, skipped)
