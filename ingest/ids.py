"""The eCFR's paragraph ids split into their section and labels, with no HTML and no state.

This is the one splitter of ids: the page reader (:mod:`privacy_checklist.ingest.ecfr`) uses it
for the labels of the page's ids, and :class:`privacy_checklist.kg.ids.RegId` (the value type
everything else uses) builds on it. It lives here because ``ingest/`` is left of ``kg/``.
"""

from __future__ import annotations


def split_labels(node_id: str) -> tuple[str, list[str]]:
    """``"160.103(Health maintenance organization (HMO))(1)"`` -> ("160.103", [term, "1"]).

    Labels are the balanced parenthesised groups after the section number.

    Raises:
        ValueError: the parentheses are unbalanced.
    """
    head = node_id.find("(")
    if head < 0:
        return node_id, []
    labels: list[str] = []
    depth = 0
    start = head
    for i in range(head, len(node_id)):
        ch = node_id[i]
        if ch == "(":
            if depth == 0:
                start = i + 1
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                labels.append(node_id[start:i])
            elif depth < 0:
                raise ValueError(f"unbalanced parentheses in paragraph id {node_id!r}")
    if depth:
        raise ValueError(f"unbalanced parentheses in paragraph id {node_id!r}")
    return node_id[:head], labels
