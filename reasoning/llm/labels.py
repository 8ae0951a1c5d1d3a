"""The questions an answer may answer, their labels, and the words a JSON field or a final line
may give the labels of the two questions besides the verdict in."""

from __future__ import annotations

#: The questions an answer may answer, with their labels.
QUESTIONS: dict[str, tuple[str, ...]] = {
    "verdict": ("permit", "prohibit", "not_applicable"),
    "applicability": ("applies", "does_not_apply"),
    "compliance": ("complies", "violates"),
}


#: the words a JSON field or a final line may give the other two questions' labels in
TABLES: dict[str, dict[str, str]] = {
    "applicability": {
        w: label
        for label, words in (
            ("applies", ("applies", "apply", "yes", "applicable", "covered", "hipaa applies")),
            (
                "does_not_apply",
                (
                    "does not apply",
                    "does_not_apply",
                    "doesn't apply",
                    "no",
                    "not applicable",
                    "not covered",
                    "inapplicable",
                    "hipaa does not apply",
                ),
            ),
        )
        for w in words
    },
    "compliance": {
        w: label
        for label, words in (
            ("complies", ("complies", "comply", "compliant", "complied", "compliance")),
            (
                "violates",
                ("violates", "violate", "violated", "violation", "non-compliant", "noncompliant"),
            ),
        )
        for w in words
    },
}
