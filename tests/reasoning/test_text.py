"""The one sentence splitter every reader without a parse uses (reasoning/text.py)."""

from __future__ import annotations

import pytest

from privacy_checklist.reasoning.text import sentence_spans, sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dr. Lee sent J. Doe's chart to Acme Inc. today. The police asked.",
            ["Dr. Lee sent J. Doe's chart to Acme Inc. today.", "The police asked."],
        ),
        (
            'She said "no." Then 3.5 mg was given!  Was it allowed?',
            ['She said "no."', "Then 3.5 mg was given!", "Was it allowed?"],
        ),
        (
            "A plan, e.g. a health plan, paid. It was fine",
            ["A plan, e.g. a health plan, paid.", "It was fine"],
        ),
    ],
)
def test_sentences_end_at_their_punctuation_not_at_a_title_initial_or_number(
    text: str, expected: list[str]
) -> None:
    assert sentences(text) == expected


def test_spans_are_the_words_without_the_spaces_around_them() -> None:
    text = "  First one.   Second one?\n\nthird line\n- an item"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["First one.", "Second one?", "third line\n- an item"]
    by_line = sentence_spans(text, lines=True)
    assert [text[a:b] for a, b in by_line] == [
        "First one.",
        "Second one?",
        "third line",
        "- an item",
    ]
    assert sentence_spans("") == [] and sentence_spans(" \n ") == []
