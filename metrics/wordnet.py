"""Offline WordNet 3.0 for METEOR, built from Debian's ``wordnet-base`` and ``wordnet-sense-index``.

``python -m metrics.wordnet`` arranges /usr/share/wordnet as the nltk corpus
directory ``<NLTK_DATA>/corpora/wordnet/`` (default ``<repo>/var/nltk_data``). It is
idempotent: files already in place with the right size are left alone. Debian ships
no ``lexnames`` file, so it is written from the fixed list in lexnames(5WN).
Nothing is downloaded.
"""

import os
import shutil
import sys
import warnings
from functools import lru_cache
from pathlib import Path

from metrics.base import MetricUnavailable, setting

SETUP_COMMAND = "python -m metrics.wordnet"
DEBIAN_WORDNET = Path("/usr/share/wordnet")
REPO_ROOT = Path(__file__).resolve().parents[1]

# The files nltk's WordNetCorpusReader reads (its _FILES), lexnames apart.
COPIED_FILES = [
    "cntlist.rev",
    "index.sense",
    *(f"{kind}.{pos}" for kind in ("index", "data") for pos in ("adj", "adv", "noun", "verb")),
    *(f"{pos}.exc" for pos in ("adj", "adv", "noun", "verb")),
]

# lexnames(5WN): file number, name, syntactic category (1 noun, 2 verb, 3 adjective, 4 adverb).
LEXNAMES = [
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1),
    ("noun.animal", 1), ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1),
    ("noun.cognition", 1), ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1),
    ("noun.food", 1), ("noun.group", 1), ("noun.location", 1), ("noun.motive", 1),
    ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1), ("noun.plant", 1),
    ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1),
    ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2),
    ("verb.competition", 2), ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2),
    ("verb.emotion", 2), ("verb.motion", 2), ("verb.perception", 2), ("verb.possession", 2),
    ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2), ("adj.ppl", 3),
]  # fmt: skip


def lexnames_text():
    return "".join(f"{number:02d}\t{name}\t{category}\n" for number, (name, category) in enumerate(LEXNAMES))


def nltk_data_dir(value=None):
    """The first directory of NLTK_DATA (nltk reads it as a path list), else ``<repo>/var/nltk_data``."""
    if value is not None:
        return Path(value)
    return Path(setting("NLTK_DATA", str(REPO_ROOT / "var" / "nltk_data")).split(os.pathsep)[0])


def wordnet_dir(data_dir=None):
    return nltk_data_dir(data_dir) / "corpora" / "wordnet"


def install_wordnet(data_dir=None, source=DEBIAN_WORDNET):
    """Copy the Debian files and write lexnames; return the corpus directory."""
    missing = [name for name in COPIED_FILES if not (Path(source) / name).is_file()]
    if missing:
        raise MetricUnavailable(
            f"WordNet files {missing} are missing from {source}: install the Debian packages "
            "wordnet-base and wordnet-sense-index, then run " + SETUP_COMMAND
        )
    target = wordnet_dir(data_dir)
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED_FILES:
        origin, copy = Path(source) / name, target / name
        if not copy.is_file() or copy.stat().st_size != origin.stat().st_size:
            shutil.copyfile(origin, copy)
    lexnames = target / "lexnames"
    if not lexnames.is_file() or lexnames.read_text() != lexnames_text():
        lexnames.write_text(lexnames_text())
    return target


@lru_cache(maxsize=4)
def load_wordnet(data_dir=None):
    """An nltk WordNetCorpusReader over the offline corpus, or MetricUnavailable naming the setup command."""
    root = wordnet_dir(data_dir).resolve()
    needed = [*COPIED_FILES, "lexnames"]
    if not all((root / name).is_file() for name in needed):
        raise MetricUnavailable(
            f"WordNet is not set up in {root} (NLTK_DATA): run `{SETUP_COMMAND}` "
            "(needs the Debian packages wordnet-base and wordnet-sense-index)"
        )
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    # nltk >= 3.9 refuses to read corpora outside the directories on nltk.data.path.
    data_root = str(root.parents[1])
    if data_root not in nltk.data.path:
        nltk.data.path.append(data_root)
    # No Open Multilingual Wordnet: METEOR only looks up English synsets.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return WordNetCorpusReader(str(root), omw_reader=None)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    target = install_wordnet(argv[0] if argv else None)
    version = load_wordnet.__wrapped__(str(target.parents[1])).get_version()
    print(f"WordNet {version} ready in {target}")


if __name__ == "__main__":
    main()
