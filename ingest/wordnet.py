"""Install WordNet 3.0 data where NLTK finds it, with no NLTK data server.

Routes, first that works: WordNet already readable; ``nltk.download`` (when online); Debian's
``wordnet-base`` and ``wordnet-sense-index`` packages (installed with apt-get when missing and
allowed), copied into ``<prefix>/share/nltk_data/corpora/wordnet`` with the ``lexnames`` file
NLTK expects and Debian does not ship (generated from Debian's ``lexnames(5WN)`` man page, or
from the standard list below when the man pages are not installed).

Run ``python -m privacy_checklist.ingest.wordnet --install``; ``make`` does it for you.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
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
    data_dir: Path | None = None, allow_apt: bool = True, allow_download: bool = True
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
