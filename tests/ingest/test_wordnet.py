"""WordNet data for NLTK, installed with no NLTK data server (``make`` runs the installer)."""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import pytest

from privacy_checklist.ingest import wordnet as wnsetup
from tests.conftest import REPO


def test_lexnames_file() -> None:
    lines = wnsetup.lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3"
    assert lines[3] == "03\tnoun.Tops\t1"
    assert lines[18] == "18\tnoun.person\t1"
    assert lines[44] == "44\tadj.ppl\t3"


def test_lexnames_from_debian_man_page_matches(tmp_path: Path) -> None:
    if not wnsetup.DEBIAN_MAN.exists():
        pytest.skip("Debian's lexnames(5WN) man page is not installed")
    assert wnsetup.lexnames_text(wnsetup.DEBIAN_MAN) == wnsetup.lexnames_text(tmp_path / "none.gz")


def test_lexnames_from_a_man_page_with_other_names(tmp_path: Path) -> None:
    page = "".join(f"{i:02d}\t{name}\tdescription\n" for i, name in enumerate(wnsetup.LEXNAMES))
    page = page.replace("noun.person", "noun.people")
    man = tmp_path / "lexnames.5WN.gz"
    man.write_bytes(gzip.compress(page.encode()))
    assert "18\tnoun.people\t1" in wnsetup.lexnames_text(man)


def test_install_from_a_folder_is_complete(tmp_path: Path) -> None:
    if not (wnsetup.DEBIAN_DIR / "data.noun").exists():
        pytest.skip("Debian's WordNet is not installed")
    target = wnsetup.install_from_debian(tmp_path)
    assert (target / "lexnames").read_text().count("\n") == 45
    assert (target / "index.sense").stat().st_size > 1_000_000
    assert not (target.parent / "wordnet.tmp").exists()


def test_install_refuses_an_incomplete_source(tmp_path: Path) -> None:
    (tmp_path / "data.noun").write_text("")
    with pytest.raises(wnsetup.WordNetSetupError, match="lacks"):
        wnsetup.install_from_debian(tmp_path / "out", source=tmp_path)


def test_wordnet_is_ready_after_setup() -> None:
    """`make setup` installed WordNet 3.0 where NLTK finds it: a surgeon is a person."""
    assert wnsetup.wordnet_ready(), "run: make setup (it installs WordNet for NLTK)"
    from nltk.corpus import wordnet

    names = {s.name() for path in wordnet.synset("surgeon.n.01").hypernym_paths() for s in path}
    assert {"doctor.n.01", "health_professional.n.01", "person.n.01"} <= names


# --------------------------------------------------------------------------- the noun reader

SEEDS = REPO / "ontologies"


def seeded_synsets() -> list[str]:
    """Every synset the role and attribute seeds name."""
    roles = json.loads((SEEDS / "roles.json").read_text(encoding="utf-8"))
    attributes = json.loads((SEEDS / "attributes.json").read_text(encoding="utf-8"))
    names = [
        anchor["synset"] if isinstance(anchor, dict) else anchor
        for role in roles["roles"]
        for anchor in role.get("wordnet", [])
    ]
    return names + [name for name, _ in attributes.get("wordnet", [])]


def test_noun_reader_reads_what_nltk_reads() -> None:
    """The graph builds' reader and NLTK agree on every seeded synset and every synset below
    it: names, lemmas, offsets, relations, hypernym paths, and the senses of each lemma in
    NLTK's order (which weighs the aliases)."""
    assert wnsetup.wordnet_ready(), "run: make setup (it installs WordNet for NLTK)"
    from nltk.corpus import wordnet

    ours = wnsetup.nouns()
    seen: set[str] = set()
    stack = [wordnet.synset(name) for name in seeded_synsets()]
    assert len(stack) > 50
    while stack:
        theirs = stack.pop()
        if theirs.name() in seen:
            continue
        seen.add(theirs.name())
        mine = ours.synset(theirs.name())
        assert (mine.name(), mine.offset(), mine.lemma_names()) == (
            theirs.name(),
            theirs.offset(),
            theirs.lemma_names(),
        )
        for relation in ("hypernyms", "instance_hypernyms", "hyponyms", "instance_hyponyms"):
            expected = sorted(s.name() for s in getattr(theirs, relation)())
            assert sorted(s.name() for s in getattr(mine, relation)()) == expected, relation
        assert sorted([s.name() for s in p] for p in mine.hypernym_paths()) == sorted(
            [s.name() for s in p] for p in theirs.hypernym_paths()
        )
        for lemma in theirs.lemma_names():
            assert [s.name() for s in ours.synsets(lemma, "n")] == [
                s.name() for s in wordnet.synsets(lemma, "n")
            ], lemma
        stack += theirs.hyponyms() + theirs.instance_hyponyms()
    assert len(seen) > 3000
    for word in ("surgeons", "women", "glasses", "data", "police", "Medicare", "xqzv"):
        assert [s.name() for s in ours.synsets(word)] == [
            s.name() for s in wordnet.synsets(word, "n")
        ]
    assert set(ours.all_lemma_names("n")) == set(wordnet.all_lemma_names("n"))
    with pytest.raises(ValueError, match="only nouns"):
        ours.synset("run.v.01")
    with pytest.raises(ValueError, match="no WordNet synset"):
        ours.synset("surgeon.n.99")


@pytest.fixture
def nltk_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """NLTK's data folders replaced by an empty one (yielded with the real folders); the
    reader's cache emptied before and after, so each test reads what is installed."""
    real = wnsetup.nltk_data_paths()
    folder = tmp_path / "nltk_data"
    (folder / "corpora").mkdir(parents=True)
    monkeypatch.setattr(wnsetup, "nltk_data_paths", lambda: [str(tmp_path / "none"), str(folder)])
    wnsetup.nouns.cache_clear()
    yield folder, real
    wnsetup.nouns.cache_clear()


def test_noun_reader_reads_nltk_s_zip(nltk_data: tuple[Path, list[str]]) -> None:
    """``nltk.download`` installs ``corpora/wordnet.zip``; the reader reads it as NLTK does."""
    folder, real = nltk_data
    sources = [Path(p) / "corpora" / "wordnet" for p in real]
    source = next((s for s in sources if (s / "index.noun").is_file()), None)
    if source is None:
        pytest.skip("WordNet is installed as a zip here, not as a folder")
    with zipfile.ZipFile(folder / "corpora" / "wordnet.zip", "w") as archive:
        for name in ("index.noun", "data.noun", "noun.exc"):
            archive.write(source / name, f"wordnet/{name}")
    surgeon = wnsetup.nouns().synset("surgeon.n.01")
    assert "person.n.01" in {s.name() for path in surgeon.hypernym_paths() for s in path}


def test_missing_wordnet_names_the_command(nltk_data: tuple[Path, list[str]]) -> None:
    from privacy_checklist.kg.roles import RoleGraphError, wordnet_nouns

    with pytest.raises(wnsetup.WordNetMissing):
        wnsetup.nouns()
    with pytest.raises(RoleGraphError, match=r"ingest\.wordnet --install"):
        wordnet_nouns()
