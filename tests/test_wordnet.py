"""WordNet data for NLTK, installed with no NLTK data server (``make`` runs the installer)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from privacy_checklist.ingest import wordnet as wnsetup


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
