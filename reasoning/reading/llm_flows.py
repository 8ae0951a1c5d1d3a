"""Reading the flows of a case with an LLM: the CI characteristics asked as JSON.

The model gets the case (fenced as data) and the characteristics of Contextual Integrity
(sender and sender role, recipient and recipient role, subject and subject role, information
type, purpose, consent) for each flow, the main one first (prompt ``ci_extract.v1.txt``). Its
answer is mapped onto the one flow type,
:class:`~privacy_checklist.reasoning.reading.types.Flow`:
each part's text is the phrase the model gave, its span where that phrase occurs in the
narrative (case-insensitive; else ``-1, -1``), and what it resolves to: parties through the
role graph's resolver (the role phrase first, then the name), information through the
attribute graph's (the HIPAA information type it reaches, else ``none``), purpose and consent
through the same cue lexicons as the offline extractor. ``agreement()`` of ``flows.py``
measures it as it measures the offline one (``main_flow``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from privacy_checklist.kg.attributes import information_type
from privacy_checklist.kg.concepts import Resolver
from privacy_checklist.kg.norms import Cues
from privacy_checklist.reasoning.llm.client import Client, Message, json_objects
from privacy_checklist.reasoning.llm.prompting import (
    Call,
    Trace,
    client_name,
    fence,
    field,
    messages,
)
from privacy_checklist.reasoning.reading.flows import CONSENT, CueList
from privacy_checklist.reasoning.reading.types import Flow, Part, Reading

STEP = "ci_extract"
MAX_FLOWS = 5
EMPTY = frozenset(
    {"", "none", "n/a", "na", "unknown", "not specified", "not mentioned", "not stated", "null"}
)
NO_CONSENT = frozenset(
    {"no", "no consent", "not obtained", "without consent", "none given", "not given", "refused"}
)
KEYS = {
    "sender": ("sender",),
    "sender_role": ("sender_role", "sender role"),
    "recipient": ("recipient",),
    "recipient_role": ("recipient_role", "recipient role"),
    "subject": ("subject", "about"),
    "subject_role": ("subject_role", "subject role", "about_role", "about role"),
    "information_type": ("information_type", "information type", "type", "information"),
    "purpose": ("purpose",),
    "consent": ("consent", "consented_by", "consented by"),
}


def _value(entry: dict[str, Any], name: str) -> str:
    value = field(entry, *KEYS[name])
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value if v)
    if value is None or isinstance(value, dict | bool | int | float):
        return ""
    value = str(value).strip().strip("\"'“”").strip()
    return "" if value.lower().rstrip(".") in EMPTY else value


def locate(narrative: str, phrase: str) -> tuple[int, int]:
    """Where ``phrase`` first occurs in the narrative (ignoring case), else ``(-1, -1)``."""
    phrase = phrase.strip().rstrip(".")
    if not phrase:
        return -1, -1
    start = narrative.lower().find(phrase.lower())
    return (start, start + len(phrase)) if start >= 0 else (-1, -1)


def characteristics(text: str) -> list[dict[str, str]]:
    """The flows of an answer as dicts of the nine characteristics.

    Raises:
        ValueError: the answer holds no JSON object with flows.
    """
    found: list[dict[str, Any]] | None = None
    for data in json_objects(text):
        flows = field(data, "flows")
        if isinstance(flows, list):
            found = [f for f in flows if isinstance(f, dict)]
        elif field(data, "sender", "recipient") is not None:
            found = [data]
    if found is None:
        raise ValueError("no JSON object with flows in the answer")
    out = [{name: _value(entry, name) for name in KEYS} for entry in found[:MAX_FLOWS]]
    return [flow for flow in out if any(flow.values())]


class LLMFlowExtractor:
    """Flows read by an LLM (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        role_resolver: Resolver,
        attribute_resolver: Resolver,
        cues: Cues | None = None,
    ) -> None:
        self.client = client
        self.roles = role_resolver
        self.attributes = attribute_resolver
        self.cues = cues or Cues.load()
        self._calls: dict[str, Call] = {}
        self.failures: list[tuple[str, str]] = []

    # ---------------------------------------------------------------- asking
    def messages(self, narrative: str) -> list[Message]:
        return messages(STEP, case=fence(narrative))

    def ask(self, narrative: str, trace: Trace | None = None) -> Call:
        """The model's answer for a narrative (kept, so it is asked once per extractor, unless
        asked on behalf of a method's ``trace``)."""
        if trace is not None:  # a method's request: recorded in its trace, not kept here
            return trace.ask(STEP, self.messages(narrative))
        if narrative not in self._calls:
            self._calls[narrative] = Trace(self.client).ask(STEP, self.messages(narrative))
        return self._calls[narrative]

    def prefetch(self, narratives: Sequence[str]) -> None:
        """Ask for many narratives at once (the client's concurrency)."""
        todo = list(dict.fromkeys(n for n in narratives if n not in self._calls))
        calls = Trace(self.client).ask_all([(STEP, self.messages(n)) for n in todo])
        self._calls.update(zip(todo, calls, strict=True))

    # ---------------------------------------------------------------- reading
    def read(self, text: str) -> Reading:
        """The flows of a narrative as the model reads them (a :class:`~privacy_checklist.
        reasoning.reading.types.Reader`); none when the model failed."""
        return Reading(self.extract(text), reader=client_name(self.client))

    def from_answer(self, narrative: str, answer: str) -> tuple[list[Flow], list[dict[str, str]]]:
        """Flows and their raw characteristics from an answer.

        Raises:
            ValueError: the answer holds no flows.
        """
        found = characteristics(answer)
        return [self.flow(narrative, c) for c in found], found

    def flow(self, narrative: str, c: dict[str, str]) -> Flow:
        return Flow(
            sender=self._party(narrative, c["sender"], c["sender_role"]),
            recipient=self._party(narrative, c["recipient"], c["recipient_role"]),
            subject=self._party(narrative, c["subject"], c["subject_role"]),
            information=self._information(narrative, c["information_type"]),
            purpose=self._cue(narrative, c["purpose"], self.cues.purposes),
            consent=self._consent(narrative, c["consent"]),
        )

    def extract(self, narrative: str) -> list[Flow]:
        """The flows of a narrative; [] when the model failed (recorded in ``failures``)."""
        call = self.ask(narrative)
        if call.text is None:
            self.failures.append((narrative[:60], call.error or "no answer"))
            return []
        try:
            return self.from_answer(narrative, call.text)[0]
        except ValueError as exc:
            self.failures.append((narrative[:60], str(exc)))
            return []

    def main_flow(self, narrative: str) -> Flow | None:
        """The first flow (the model is asked for the main one first)."""
        flows = self.extract(narrative)
        return flows[0] if flows else None

    # ---------------------------------------------------------------- parts
    def _party(self, narrative: str, name: str, role: str) -> Part | None:
        if not name and not role:
            return None
        resolved = ""
        for phrase in (role, name):
            matches = self.roles.resolve(phrase, 1) if phrase else []
            if matches:
                resolved = matches[0].target
                break
        for phrase in (name, role):
            start, end = locate(narrative, phrase) if phrase else (-1, -1)
            if start >= 0:
                return Part(text=narrative[start:end], start=start, end=end, resolved=resolved)
        return Part(text=name or role, start=-1, end=-1, resolved=resolved)

    def _information(self, narrative: str, phrase: str) -> Part | None:
        if not phrase:
            return None
        matches = self.attributes.resolve(phrase, 1)
        start, end = locate(narrative, phrase)
        text = narrative[start:end] if start >= 0 else phrase
        resolved = information_type(matches[0] if matches else None)
        return Part(text=text, start=start, end=end, resolved=resolved)

    def _cue(self, narrative: str, phrase: str, cues: CueList) -> Part | None:
        if not phrase:
            return None
        resolved = next((name for name, pattern in cues if pattern.search(phrase)), "")
        start, end = locate(narrative, phrase)
        text = narrative[start:end] if start >= 0 else phrase
        return Part(text=text, start=start, end=end, resolved=resolved)

    def _consent(self, narrative: str, phrase: str) -> Part | None:
        if not phrase:
            return None
        part = self._cue(narrative, phrase, (*CONSENT, *self.cues.consent_forms))
        if part is not None and not part.resolved and phrase.lower().rstrip(".") in NO_CONSENT:
            return Part(text=part.text, start=part.start, end=part.end, resolved=CONSENT[0][0])
        return part
