"""Install WordNet 3.0 data where NLTK finds it, with no NLTK data server.

Routes, first that works: WordNet already readable; ``nltk.download`` (when online); Debian's
``wordnet-base`` and ``wordnet-sense-index`` packages (installed with apt-get when missing and
allowed), copied into ``<prefix>/share/nltk_data/corpora/wordnet`` with the ``lexnames`` file
NLTK expects and Debian does not ship (generated from Debian's ``lexnames(5WN)`` man page, or
from the standard list below when the man pages are not installed).

Run ``python -m privacy_checklist.ingest.wordnet --install``; ``make`` does it for you.

:func:`nouns` reads the installed data for the graph builds: the noun part only (``index.noun``,
``data.noun``, ``noun.exc``), found where NLTK finds its corpus and read as NLTK reads it, in a
fraction of the time NLTK takes to load all of WordNet (its import alone pulls in SciPy).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

DEBIAN_DIR = Path("/usr/share/wordnet")
DEBIAN_MAN = Path("/usr/share/man/man5/lexnames.5WN.gz")
DEBIAN_PACKAGES = ("wordnet-base", "wordnet-sense-index")
REQUIRED = ("data.noun", "index.noun", "index.sense", "data.verb", "index.verb")

#: WordNet 3.0's lexicographer files, numbered as in its lexnames file (45 entries).
LEXNAMES = (
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
)
_POS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


class WordNetSetupError(Exception):
    """WordNet could not be installed; the message says what to run."""


def default_data_dir() -> Path:
    """``<sys.prefix>/share/nltk_data``: inside a virtual environment NLTK searches it as is."""
    return Path(sys.prefix) / "share" / "nltk_data"


def wordnet_ready(data_dir: Path | None = None) -> bool:
    """True when NLTK can read WordNet and knows that a surgeon is a person."""
    import nltk

    if data_dir is not None and str(data_dir) not in nltk.data.path:
        nltk.data.path.append(str(data_dir))
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        surgeon = wordnet.synset("surgeon.n.01")
        return any(s.name() == "person.n.01" for path in surgeon.hypernym_paths() for s in path)
    except (LookupError, OSError, ValueError, AttributeError):
        return False


def lexnames_text(man_page: Path = DEBIAN_MAN) -> str:
    """The ``lexnames`` file: ``NN<TAB>name<TAB>pos`` for each lexicographer file."""
    names: list[str] = []
    if man_page.exists():
        raw = gzip.decompress(man_page.read_bytes()).decode("utf-8", "replace")
        found = dict(
            (int(m.group(1)), m.group(2))
            for m in re.finditer(
                r"^\s*(\d\d)\s+(?:\\&)?((?:adj|adv|noun|verb)\.[A-Za-z]+)", raw, re.M
            )
        )
        if len(found) == len(LEXNAMES):
            names = [found[i] for i in range(len(LEXNAMES))]
    if not names:
        names = list(LEXNAMES)
    return "".join(f"{i:02d}\t{name}\t{_POS[name.split('.')[0]]}\n" for i, name in enumerate(names))


def _try_download(data_dir: Path) -> bool:
    """``nltk.download('wordnet')`` in a child process, quietly, for at most a minute."""
    code = (
        "import sys, nltk; "
        f"ok = nltk.download('wordnet', download_dir={str(data_dir)!r}, quiet=True, "
        "raise_on_error=False); "
        "sys.exit(0 if ok else 1)"
    )
    try:
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, timeout=60, check=False
        )
    except subprocess.TimeoutExpired:
        return False
    return result.returncode == 0


def _apt_install() -> None:
    if shutil.which("apt-get") is None:
        raise WordNetSetupError(
            "WordNet data is missing and this machine has no apt-get; install WordNet 3.0 "
            "into NLTK's data folder by hand (python -m nltk.downloader wordnet, when online)"
        )
    prefix: list[str] = []
    if os.geteuid() != 0:
        if shutil.which("sudo") is None:
            raise WordNetSetupError(
                "WordNet data is missing; as root run: apt-get install -y --no-install-recommends "
                + " ".join(DEBIAN_PACKAGES)
            )
        prefix = ["sudo", "-n"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    steps = [
        [*prefix, "apt-get", "update", "-qq"],
        [*prefix, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *DEBIAN_PACKAGES],
    ]
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True, env=env, check=False)
        if result.returncode != 0:
            tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or [""]
            raise WordNetSetupError(f"'{' '.join(step)}' failed: {tail[0]}")


def install_from_debian(data_dir: Path, source: Path = DEBIAN_DIR) -> Path:
    """Copy Debian's WordNet files into ``data_dir/corpora/wordnet`` and add ``lexnames``.

    The copy is made in a temporary folder and renamed into place, so an interrupted run
    leaves no half-written corpus.
    """
    missing = [name for name in REQUIRED if not (source / name).exists()]
    if missing:
        raise WordNetSetupError(
            f"{source} lacks {', '.join(missing)}; reinstall {' '.join(DEBIAN_PACKAGES)}"
        )
    target = data_dir / "corpora" / "wordnet"
    tmp = target.with_name("wordnet.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for item in source.iterdir():
        if item.is_file():
            shutil.copy2(item, tmp / item.name)
    (tmp / "lexnames").write_text(lexnames_text(), encoding="utf-8")
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
    return target


def ensure_wordnet(
    data_dir: Path | None = None, *, allow_apt: bool = True, allow_download: bool = True
) -> str:
    """Make WordNet readable by NLTK; returns how it was found or installed."""
    data_dir = data_dir or default_data_dir()
    if wordnet_ready(data_dir):
        return "already installed"
    data_dir.mkdir(parents=True, exist_ok=True)
    if allow_download and _try_download(data_dir) and wordnet_ready(data_dir):
        return "downloaded by nltk"
    if not (DEBIAN_DIR / "data.noun").exists() or not (DEBIAN_DIR / "index.sense").exists():
        if not allow_apt:
            raise WordNetSetupError(
                f"WordNet data is missing; install {' '.join(DEBIAN_PACKAGES)} with apt-get"
            )
        _apt_install()
    install_from_debian(data_dir)
    if not wordnet_ready(data_dir):
        raise WordNetSetupError(f"WordNet was copied to {data_dir} but NLTK still cannot read it")
    return f"installed from Debian's {' and '.join(DEBIAN_PACKAGES)} into {data_dir}"


# --------------------------------------------------------------------------- the noun reader


class WordNetMissing(LookupError):
    """NLTK's data folders hold no readable WordNet."""


#: NLTK's rules for nouns (``WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS``).
NOUN_SUBSTITUTIONS = (
    ("s", ""),
    ("ses", "s"),
    ("ves", "f"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
)
#: The pointers the graphs follow: hypernyms, instance hypernyms, hyponyms, instance hyponyms.
POINTERS = ("@", "@i", "~", "~i")


def nltk_data_paths() -> list[str]:
    """The folders NLTK searches for its data, in its order (``nltk.data.path``, which is
    used as it is when NLTK is already imported, so a folder added to it counts)."""
    loaded = sys.modules.get("nltk.data")
    if loaded is not None:
        return [p for p in loaded.path if isinstance(p, str) and p]
    paths = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        paths.append(os.path.expanduser("~/nltk_data"))
    paths += [
        os.path.join(sys.prefix, "nltk_data"),
        os.path.join(sys.prefix, "share", "nltk_data"),
        os.path.join(sys.prefix, "lib", "nltk_data"),
    ]
    if sys.platform.startswith("win"):
        paths += [
            os.path.join(os.environ.get("APPDATA", "C:\\"), "nltk_data"),
            r"C:\nltk_data",
            r"D:\nltk_data",
            r"E:\nltk_data",
        ]
    else:
        paths += [
            "/usr/share/nltk_data",
            "/usr/local/share/nltk_data",
            "/usr/lib/nltk_data",
            "/usr/local/lib/nltk_data",
        ]
    return paths


def _corpus_files(paths: list[str]) -> Callable[[str], bytes]:
    """A reader of the WordNet corpus's files, found as NLTK finds it: a ``corpora/wordnet.zip``
    in any folder first (what ``nltk.download`` installs), then a ``corpora/wordnet`` folder."""
    for folder in paths:
        archive = Path(folder) / "corpora" / "wordnet.zip"
        if archive.is_file():
            try:
                with zipfile.ZipFile(archive) as zf:
                    if "wordnet/index.noun" in zf.namelist():
                        return functools.partial(_read_zip, archive)
            except (OSError, zipfile.BadZipFile):
                continue
    for folder in paths:
        root = Path(folder) / "corpora" / "wordnet"
        if (root / "index.noun").is_file():
            return functools.partial(_read_file, root)
    raise WordNetMissing(f"no corpora/wordnet in NLTK's data folders ({', '.join(paths)})")


def _read_zip(archive: Path, name: str) -> bytes:
    with zipfile.ZipFile(archive) as zf:
        return zf.read(f"wordnet/{name}")


def _read_file(root: Path, name: str) -> bytes:
    return (root / name).read_bytes()


class Synset:
    """A noun synset, with the part of NLTK's ``Synset`` interface the graph builds use."""

    __slots__ = ("_lemma_names", "_name", "_offset", "_pointers", "_wordnet")

    def __init__(
        self,
        wordnet: NounWordNet,
        offset: int,
        name: str,
        lemma_names: list[str],
        pointers: dict[str, list[int]],
    ) -> None:
        self._wordnet = wordnet
        self._offset = offset
        self._name = name
        self._lemma_names = lemma_names
        self._pointers = pointers

    def name(self) -> str:
        return self._name

    def offset(self) -> int:
        return self._offset

    def lemma_names(self) -> list[str]:
        return list(self._lemma_names)

    def _related(self, symbol: str) -> list[Synset]:
        return [self._wordnet.synset_at(o) for o in self._pointers.get(symbol, ())]

    def hypernyms(self) -> list[Synset]:
        return self._related("@")

    def instance_hypernyms(self) -> list[Synset]:
        return self._related("@i")

    def hyponyms(self) -> list[Synset]:
        return self._related("~")

    def instance_hyponyms(self) -> list[Synset]:
        return self._related("~i")

    def hypernym_paths(self) -> list[list[Synset]]:
        """Every path from a root down to this synset (NLTK's ``hypernym_paths``)."""
        above = self.hypernyms() + self.instance_hypernyms()
        if not above:
            return [[self]]
        return [[*path, self] for hypernym in above for path in hypernym.hypernym_paths()]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Synset) and self._name == other._name

    def __lt__(self, other: Synset) -> bool:
        return self._name < other._name

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f"Synset({self._name!r})"


class NounWordNet:
    """WordNet's nouns, read from the corpus files as NLTK reads them: the same synset names
    (``person.n.01``), lemma names, offsets, relations and the same ``synsets(word, "n")``
    (with NLTK's morphology: its exception list, then its suffix rules)."""

    def __init__(self, read: Callable[[str], bytes]) -> None:
        self._data = read("data.noun")
        # lemma -> the rest of its index line, read into offsets when first asked for
        self._index = dict(
            line.split(" ", 1)
            for line in read("index.noun").decode("utf-8").split("\n")
            if line and not line.startswith(" ")
        )
        self._offsets: dict[str, list[int]] = {}
        self._exceptions: dict[str, list[str]] = {}
        for line in read("noun.exc").decode("utf-8").split("\n"):
            terms = line.split()
            if terms:
                self._exceptions[terms[0]] = terms[1:]
        self._synsets: dict[int, Synset] = {}

    def all_lemma_names(self, pos: str = "n") -> list[str]:
        """Every noun lemma as the index spells it (lower case, underscores)."""
        self._nouns_only(pos)
        return list(self._index)

    def offsets(self, lemma: str) -> list[int]:
        """The offsets of ``lemma``'s synsets, most common sense first (empty: no such noun).

        Raises:
            ValueError: the lemma's line of ``index.noun`` is damaged.
        """
        found = self._offsets.get(lemma)
        if found is None:
            rest = self._index.get(lemma)
            if rest is None:
                return []
            tokens = rest.split()  # pos, synsets, pointers, symbols..., senses, tagged, offsets
            try:
                count, skip = int(tokens[1]), int(tokens[2])
                if count <= 0 or int(tokens[3 + skip]) != count:
                    raise ValueError("the synset and sense counts differ")
                found = [int(t) for t in tokens[5 + skip : 5 + skip + count]]
            except (IndexError, ValueError) as exc:
                raise ValueError(f"index.noun, {lemma!r}: damaged ({exc})") from exc
            self._offsets[lemma] = found
        return found

    def synset(self, name: str) -> Synset:
        """The synset called ``name`` (``surgeon.n.01``).

        Raises:
            ValueError: no such noun synset.
        """
        lemma, pos, number = name.lower().rsplit(".", 2)
        self._nouns_only(pos)
        offsets = self.offsets(lemma)
        index = int(number) - 1
        if not 0 <= index < len(offsets):
            raise ValueError(f"no WordNet synset {name!r}")
        return self.synset_at(offsets[index])

    def synsets(self, lemma: str, pos: str = "n") -> list[Synset]:
        """The noun synsets of ``lemma``, most common sense first (NLTK's ``synsets``)."""
        self._nouns_only(pos)
        return [
            self.synset_at(offset)
            for form in self._morphy(lemma.lower())
            for offset in self.offsets(form)
        ]

    def synset_at(self, offset: int) -> Synset:
        """The synset at ``offset`` of ``data.noun``."""
        found = self._synsets.get(offset)
        if found is None:
            found = self._synsets[offset] = self._parse(offset)
        return found

    def _morphy(self, form: str) -> list[str]:
        forms = self._exceptions.get(form)
        if forms is None:
            forms = [
                form[: -len(old)] + new for old, new in NOUN_SUBSTITUTIONS if form.endswith(old)
            ]
        return [f for f in dict.fromkeys([form, *forms]) if f in self._index]

    def _parse(self, offset: int) -> Synset:
        end = self._data.find(b"\n", offset)
        line = self._data[offset : end if end >= 0 else None].decode("utf-8")
        if line[:8] != f"{offset:08d}":
            raise ValueError(f"no WordNet noun synset at offset {offset}")
        tokens = line.split("|", 1)[0].split()
        count = int(tokens[3], 16)
        lemmas = [re.sub(r"\([^()]*\)$", "", t) for t in tokens[4 : 4 + 2 * count : 2]]
        at = 4 + 2 * count
        pointers: dict[str, list[int]] = {}
        for i in range(int(tokens[at])):
            symbol, target, pos, source = tokens[at + 1 + 4 * i : at + 5 + 4 * i]
            if symbol in POINTERS and source == "0000" and pos == "n":
                pointers.setdefault(symbol, []).append(int(target))
        first = lemmas[0].lower()
        sense = self.offsets(first).index(offset) + 1
        return Synset(self, offset, f"{first}.n.{sense:02d}", lemmas, pointers)

    @staticmethod
    def _nouns_only(pos: str) -> None:
        if pos != "n":
            raise ValueError(f"only nouns are read (pos 'n'), not {pos!r}")


@functools.cache
def nouns() -> NounWordNet:
    """WordNet's nouns from the corpus NLTK would load, read once per process.

    Raises:
        WordNetMissing: no WordNet where NLTK looks, or one that does not know that a
            surgeon is a person (the check :func:`wordnet_ready` makes).
    """
    try:
        wordnet = NounWordNet(_corpus_files(nltk_data_paths()))
        surgeon = wordnet.synset("surgeon.n.01")
    except (OSError, KeyError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise WordNetMissing(f"WordNet's nouns are not readable ({exc})") from exc
    if not any(s.name() == "person.n.01" for path in surgeon.hypernym_paths() for s in path):
        raise WordNetMissing("WordNet's nouns do not say that a surgeon is a person")
    return wordnet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m privacy_checklist.ingest.wordnet",
        description="Install WordNet 3.0 for NLTK with no NLTK data server (see OFFLINE.md).",
    )
    parser.add_argument("--install", action="store_true", help="install it if it is missing")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="NLTK data folder (default: <venv>/share/nltk_data)",
    )
    parser.add_argument("--no-apt", action="store_true", help="never call apt-get")
    args = parser.parse_args(argv)
    if not args.install:
        ready = wordnet_ready(args.data_dir or default_data_dir())
        print("WordNet: ready" if ready else "WordNet: missing (run with --install)")
        return 0 if ready else 1
    try:
        how = ensure_wordnet(args.data_dir, allow_apt=not args.no_apt)
    except WordNetSetupError as exc:
        print(f"wordnet: {exc}", file=sys.stderr)
        return 1
    print(f"WordNet 3.0: {how}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
