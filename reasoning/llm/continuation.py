"""Where a model's own answer ends.

A model prompted with worked examples (few-shot), or a base model, often goes on after its
answer and writes the next turn of the prompt: a new "Case:" with its own "Answer:", a repeated
example, a new question. What it writes there answers a case nobody asked about, so its labels
are not the answer's. The answer is the text before the first line that opens such a turn,
once the answer has begun; an answer that opens by restating its case ("Case: ...") keeps it.
"""

from __future__ import annotations

import re

#: a line that opens another turn of the prompt: "Case:", "Question 2:", "### Example", "User:"
_TURN = re.compile(
    r"(?im)^[ \t>*#]*(?:new |next |another )?(?:case|question|scenario|example|input|q|user|human"
    r"|instruction)(?:[ \t]*#?\d{1,3})?[ \t]*[*]*[:.][ \t]*\S?"
)


def own_answer(text: str) -> str:
    """The answer without the next turns a model went on to write (see the module docstring)."""
    for turn in _TURN.finditer(text):
        before = text[: turn.start()]
        if before.strip():
            return before.rstrip()
    return text
