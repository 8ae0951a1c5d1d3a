"""The questions an answer may answer, their labels, the words a JSON field or a final line
may give the labels of the two questions besides the verdict in, and the words with which prose
states a verdict: a predicate ("permitted", "violates"), the rule reaching the case or not ("does
not apply"), and the negations that turn them (read by :mod:`.answers`)."""

from __future__ import annotations

import re

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
            (
                "applies",
                (
                    "applies",
                    "apply",
                    "yes",
                    "applicable",
                    "covered",
                    "hipaa applies",
                    "hipaa covered",
                ),
            ),
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
                    "out of scope",
                    "not hipaa covered",
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

#: the words that negate a statement
NEGATORS = re.compile(
    r"\b(?:not|no|never|neither|nor|cannot|none|nothing|fail(?:s|ed)? to)\b"
    r"|n't\b|\bwithout\s+(?:any\s+)?violat",
    re.I,
)
#: a statement that the rule does not reach the case (negation is part of the phrase)
NOT_COVERED = re.compile(
    r"\b(?:hipaa|the privacy rule|privacy rule|the rule|it|this|these rules|federal law)\s+"
    r"(?:\w+\s+){0,2}?(?:does|do|did|would|will|should)(?:\s+\w+)?\s*(?:not|n't)\s+(?:\w+\s+)?"
    r"(?:apply|govern|cover|reach|regulate|come into play)"
    r"|\bnot\s+(?:\w+\s+)?(?:subject to|covered by|governed by|regulated by|within the scope of)"
    r"\s+(?:hipaa|the privacy rule|the hipaa privacy rule)"
    r"|\b(?:outside|beyond)\s+(?:of\s+)?(?:the\s+)?(?:scope|reach)\s+of\s+(?:hipaa|the\s+"
    r"(?:hipaa\s+)?privacy rule)"
    r"|\b(?:hipaa|the privacy rule)\s+(?:is|was|would be)\s+not\s+applicable"
    r"|\bnot\s+(?:be\s+)?ap+li?cable\b|\binapplicable\b|n't\s+(?:be\s+)?applicable\b"
    r"|\b(?:hipaa|privacy rule|the rule)\s+(?:\w+\s+){0,2}?(?:does\s*not|doesn'?t|dont|do\s*not)\s+"
    r"(?:\w+\s+)?(?:apply|govern|cover|reach|regulate|answer|address)"
    r"|\b(?:is|are)\s+not\s+(?:phi|protected health information)\b"
    r"|\bneither\s+(?:\w+\s+)?(?:permitted|allowed)\s+nor\s+(?:\w+\s+)?(?:prohibited|forbidden)"
    r"|\b(?:hipaa|privacy rule)\s+(?:is\s+)?no[t]?\s+apply"
    r"|\b(?:outside|beyond)\s+(?:of\s+)?(?:the\s+)?(?:hipaa|(?:hipaa\s+)?privacy rule)\b"
    r"|\b(?:hipaa|the (?:hipaa )?privacy rule)\s+(?:does|do|would|is)\s*(?:not|n't)\s*[.!]?\s*$"
    r"|\b(?:is|was|are|were)\s+not\s+(?:a\s+)?covered\s+entit(?:y|ies)",
    re.I,
)
#: a statement that the rule reaches the case
COVERED = re.compile(
    r"\b(?:hipaa|the privacy rule|privacy rule|the rule)\s+(?:\w+\s+){0,2}?(?:applies|apply|"
    r"applied|reaches|covers|governs)\b|\b(?:it|hipaa|the (?:hipaa )?privacy rule)\s+"
    r"(?:\w+\s+){0,3}?(?:appl(?:ies|y)|comes into play)\b"
    r"|\b(?:is|are|was|were|be)\s+(?:\w+\s+)?applicable\s+(?:to|under)\s+(?:hipaa|the (?:hipaa )?"
    r"privacy rule)|\b(?:hipaa|the (?:hipaa )?privacy rule)\s+(?:is|would be)\s+applicable"
    r"|\b(?:subject to|covered by|governed by)\s+(?:hipaa|the (?:hipaa )?privacy rule)"
    r"|\b(?:is|was|are|were)\s+(?:a\s+)?covered\s+entit(?:y|ies)",
    re.I,
)
# predicates: verbs and nouns state a verdict wherever they stand; an adjective or participle
# only after a copula ("is permitted", "was not lawful"), not as a modifier ("the disclosures
# permitted under 164.512", "its lawful basis")
_COPULA = (
    r"(?:is|was|are|were|be|been|being|remains?|seems?|appears?|considered|deemed|isn't|wasn't|"
    r"aren't|weren't|'s)\s*(?:,\s*\w+,\s*|\s(?:\w+\s+){0,2}?)"
)
#: adverbs before a bare label ("probably allowed.", "clearly not lawful.")
_ADVERB = r"(?:(?:most\s+)?(?:likely|probably|generally|clearly)\s+)?(?:not\s+)?"
_PERMIT = (
    rf"{_COPULA}(?:permitted|permissible|allowed|allowable|authorized|lawful|compliant|"
    r"in compliance|consistent with (?:hipaa|the (?:hipaa )?privacy rule))"
    r"|compl(?:y|ies|ied|ying)\b|lawfully|legally permitted|(?:may|can|could) (?:lawfully |"
    r"legally )?(?:share|disclose|release|send|give|tell|inform|provide|discuss)\b"
)
_PROHIBIT = (
    rf"{_COPULA}(?:prohibited|forbidden|impermissible|unlawful|illegal|improper|wrongful|"
    r"non-?compliant|not in compliance)"
    r"|violat(?:es|ed|ing|e)\b|violations?\b|breach(?:ed)?\b(?! notification)|forbids|"
    r"prohibits|bars\b"
    r"|unauthori[sz]ed (?:use|disclosure)|improperly|unlawfully|illegally|wrongfully"
)
_PERMIT += (
    r"|(?<=\band )(?:permitted|permissible|allowed|lawful|compliant)"
    rf"|{_COPULA}permit\b|^\W*{_ADVERB}(?:permitted|permissible|allowed|allowable|lawful|"
    r"compliant)\b"
)
_PROHIBIT += (
    r"|(?<=\band )(?:prohibited|forbidden|impermissible|unlawful|illegal)"
    rf"|{_COPULA}prohibit\b|^\W*{_ADVERB}(?:prohibited|forbidden|impermissible|unlawful|illegal)"
    r"\b"
    # "an authorization was required" (and none was given); "no authorization is required"
    r"|authori[sz]ation (?:\w+ ){0,4}(?:(?:is|was|would be) )?(?:needed|required)"
)
_PERMIT += (
    r"|\b(?:a|an)\s+(?:permitted|permissible|allowed|lawful|authorized)\s+(?:disclosure|use|flow)"
    # "aligns with the permitted uses", "falls within the permitted disclosures", "in line with
    # the Privacy Rule"
    r"|\b(?:aligns?|aligned|falls?|fits?|is consistent|in line|in keeping)\s+(?:with|within|under)"
    r"\s+(?:the\s+|its\s+)?(?:(?:permitted|permissible|allowed)\s+(?:\w+\s+){0,2}?(?:uses?|"
    r"disclosures?|purposes?|exceptions?)|(?:hipaa|the (?:hipaa )?privacy rule|the rule)\b)"
    r"|(?<=hipaa )(?:\w+ )?(?:permits|allows)\b|(?<=rule )(?:\w+ )?(?:permits|allows)\b"
    rf"|{_COPULA}(?:\w+\s+)?compliance\b"
)
_PROHIBIT += (
    r"|\b(?:a|an)\s+(?:prohibited|impermissible|unlawful|improper|illegal)\s+(?:disclosure|use|flow)"
    r"|\bbr(?:oke|eaks?|eaking|oken)\s+(?:the\s+)?(?:hipaa|privacy rule|rule|law)\b"
)
PREDICATE = re.compile(rf"\b(?P<permit>{_PERMIT})|\b(?P<prohibit>{_PROHIBIT})", re.I)
#: the words that hedge a statement or the answer
HEDGES = re.compile(
    r"\bmay or may not\b|\bit depends\b|\bdepend(?:s|ing)? (?:on|upon)\b|\bunclear\b|\buncertain\b"
    r"|\bcannot (?:be )?determin\w*|\bcan(?:not|'t) say\b|\bnot (?:enough|sufficient) "
    r"information\b|\binsufficient (?:information|facts|details)\b|\bmore (?:information|"
    r"context|details) (?:is|are|would be) needed\b|\bdifficult to (?:say|determine)\b"
    r"|\bpossibly\b|\bperhaps\b|\bambiguous\b|\bwhich (?:situation|case|scenario)\b"
    r"|\b(?:does|did)(?: not|n't) (?:tell|say|specify|state|mention)\b|\bonce I (?:have|know)\b"
    r"|\b(?:need|require) (?:more|additional|further) (?:details|information|facts)\b"
    r"|\bneed to know\b|\bbefore I (?:could|can) (?:give|answer|say)\b|\blooks like\b"
    r"|\bboth (?:answers|outcomes|readings|conclusions) (?:are|seem|could)\b"
    r"|\b(?:a|one) single (?:verdict|answer|label)\b|\bno single (?:verdict|answer)\b"
    r"|\bwhich one depends\b"
    r"|\bnot (?:entirely |completely |fully )?(?:sure|certain)\b|\bunsure\b",
    re.I,
)

#: a clause that says "not" of what the clause before it said ("X is permitted, while Y is
#: not", "it applies to A but not to B")
ELLIPSIS = re.compile(
    r"^\W*not\s+(?:to|for|in|on|with|of|by|under|as|the|a|an|his|her|their|its)\b"
    r"|\b(?:is|was|are|were|does|did|do|would|will)(?:\s*not|n't)\W*$",
    re.I,
)
#: each label's opposite
OPPOSITE = {
    "permit": "prohibit",
    "prohibit": "permit",
    "complies": "violates",
    "violates": "complies",
    "applies": "does_not_apply",
    "does_not_apply": "applies",
}


_CHOICE = re.compile(r"^\W*\(?[A-Ca-c][).:]\s*")  # "(B) prohibited", "A) permitted"
_NAMED = re.compile(
    r"\b(?:answer|verdict|conclusion|label|determination|classification|result|outcome"
    r"|decision|ruling|classif(?:y|ied|ies)\s+(?:\w+\s+){0,3}?as|(?:categori[sz]|label?l)ed\s+as"
    r"|(?:falls?|belongs?)\s+(?:under|in|into)\s+(?:the\s+)?(?:category|class)(?:\s+of)?)"
    r"\s*(?:is|would be|:|-|–|—)?\s*(?P<value>[^,;.]+)",
    re.I,
)


def named_outright(clause: str, question: str) -> str | None:
    """ "The answer is prohibit", "Verdict: not applicable", "Permitted.": a label named
    outright."""
    from privacy_checklist.reasoning.llm.prompting import label_of

    table = TABLES.get(question)
    match = _NAMED.search(clause)
    if match is not None:
        value = re.split(r"[(\[]", match.group("value"))[0]  # "Permit (164.510(b))"
        value = _CHOICE.sub("", re.sub(r"[^\w\s/'-]", " ", value).strip())
        named = label_of(value, table)
        if named is not None or question != "verdict":
            return named
    bare = _CHOICE.sub("", re.sub(r"[^\w\s/'-]", " ", clause).strip())  # "✅ Permitted"
    if len(bare.split()) <= 3:
        return label_of(bare, table)
    return None
