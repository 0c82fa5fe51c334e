"""The benchmark contenders: whether each is installed, and the one way each is built over a tokenizer file.

Contenders are optional bench/test dependencies: nothing here imports one until a builder runs
(inside a worker process or a script), so `import tokkit.bench.contenders` costs nothing and never
fails. A contender that is not installed is reported in one line (`skip_note`), never a traceback.

>>> missing("json"), missing("no_such_module_here")
(None, 'no_such_module_here is not installed')
>>> runnable, notes = split_installed({"a": ("json", 1), "b": ("no_such_module_here", 2), "c": (None, 3)})
>>> runnable, notes
({'a': (1,), 'c': (3,)}, {'b': 'skipped: no_such_module_here is not installed'})
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re

import tokkit
from tokkit.tokenizer.tiktoken_file import ranks_from_vocab

# The contenders' import names, by the name the tables give them.
MODULES = {"tokenizers": "tokenizers", "tiktoken": "tiktoken", "sentencepiece": "sentencepiece",
           "nanotoken": "nanotoken", "gigatoken": "gigatoken", "fastokens": "fastokens", "tokie": "tokie",
           "transformers": "transformers", "torch": "torch"}


def installed(module: str) -> bool:
    """Whether `module` can be imported here (looked up, not imported)."""
    return importlib.util.find_spec(module) is not None


def missing(need: str | None) -> str | None:
    """Why a contender needing `need` ("module" or "module>=X.Y"; None: nothing) cannot run here, or None."""
    if not need:
        return None
    module, _, least = need.partition(">=")
    if not installed(module):
        return f"{module} is not installed"
    if least:
        have = importlib.metadata.version(module)
        if _release(have) < _release(least):
            return f"{module} {have} is installed; this contender is {module} >= {least}"
    return None


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version ("1.0.0rc3" -> (1, 0, 0))."""
    return tuple(int(x) for x in re.match(r"[\d.]*\d", version).group().split("."))


def skip_note(need: str | None) -> str | None:
    """'skipped: <why>' for a contender that cannot run here, or None when it can."""
    why = missing(need)
    return f"skipped: {why}" if why else None


def split_installed(candidates: dict, log=None) -> tuple[dict, dict]:
    """({name: the rest of its tuple}, {name: skip note}) for {name: (need, *rest)}; each skip said in one line."""
    runnable, notes = {}, {}
    for name, (need, *rest) in candidates.items():
        note = skip_note(need)
        if note:
            notes[name] = note
            if log:
                log(f"{name}: {note}")
        else:
            runnable[name] = tuple(rest)
    return runnable, notes


def require(*needs: str) -> None:
    """Stop a script in one line when a contender it cannot do without is not installed.

    >>> require("json")
    >>> require("no_such_module_here")
    Traceback (most recent call last):
    ...
    SystemExit: no_such_module_here is not installed: this benchmark needs it
    """
    for need in needs:
        why = missing(need)
        if why:
            raise SystemExit(f"{why}: this benchmark needs it")


def _json(path: str) -> str:
    """A tokenizer folder's tokenizer.json, or the file itself."""
    return os.path.join(path, "tokenizer.json") if os.path.isdir(path) else str(path)


# ---------------------------------------------------------------------------------------- builders
def tokenizers_file(path: str):
    """tokenizers' Tokenizer over a folder's tokenizer.json (or the file)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(_json(path))


def nanotoken_file(path: str):
    """nanotoken's Tokenizer over a folder's tokenizer.json (or the file)."""
    from nanotoken import Tokenizer

    return Tokenizer(_json(path))


def gigatoken_file(path: str):
    """gigatoken's Tokenizer over a folder's tokenizer.json (or the file)."""
    import gigatoken

    return gigatoken.Tokenizer(_json(path))


def fastokens_file(path: str):
    """fastokens' Tokenizer over a folder's tokenizer.json (or the file); it reads byte-level files, not
    BertNormalizer ones."""
    import fastokens

    return fastokens.Tokenizer.from_file(_json(path))


def tokie_file(path: str):
    """tokie's Tokenizer (from_json) over a folder's tokenizer.json (or the file)."""
    import tokie

    return tokie.Tokenizer.from_json(_json(path))


def sentencepiece_model(model_file: str):
    """sentencepiece's processor over a .model file."""
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_file=str(model_file))


def tiktoken_from_bytelevel(vocab_dir: str, pattern: str | None = None):
    """A tiktoken Encoding over the folder's byte-level vocabulary: every non-special token ranked by its
    id (tiktoken_file.ranks_from_vocab), split by `pattern` (default: r50k_base's spelling of GPT-2's).
    The one builder of the tiktoken contender."""
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str  # the pattern only: no download

    spec = tokkit.load(vocab_dir).spec
    ranks = ranks_from_vocab(spec.pipeline.model.ids, [a.content for a in spec.added])
    return tiktoken.Encoding("tokkit-bench", pat_str=pattern or r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={})


def transformers_fast(vocab_dir: str):
    """transformers' PreTrainedTokenizerFast over a BERT-style folder's tokenizer.json."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_file=_json(vocab_dir), unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


BUILDERS = {"tokenizers": tokenizers_file, "tiktoken": tiktoken_from_bytelevel,
            "sentencepiece": sentencepiece_model, "nanotoken": nanotoken_file, "gigatoken": gigatoken_file,
            "fastokens": fastokens_file, "tokie": tokie_file, "transformers": transformers_fast}


def build(name: str, path: str, **options):
    """The contender `name` over `path`, or None with its skip line said when it is not installed.

    >>> build("no_such_contender", ".")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no_such_contender: no builder (known: tokenizers, tiktoken, ...)
    """
    if name not in BUILDERS:
        raise ValueError(f"{name}: no builder (known: {', '.join(BUILDERS)})")
    note = skip_note(MODULES[name])
    if note:
        print(f"{name}: {note}")
        return None
    return BUILDERS[name](path, **options)
