"""Tokenizer: a pipeline of components (tokkit.tokenizer.spec) with the compiled encoder plan.py picks.

>>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "low", "##er"],
...                              merges=None, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
>>> tok.encode("Lower [SEP] LOW")
[4, 5, 3, 4]
>>> tok.decode([2, 4, 5, 3])
'[CLS] lower [SEP]'
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from tokkit._files import atomic_write, dump_json
from tokkit._native.text_api import text_lengths
from tokkit._threads import SLICES_PER_THREAD, resolve_threads, run_shared, run_sliced, split_by_size
from tokkit.errors import TokkitError
from tokkit.tokenizer.decode import decode
from tokkit.tokenizer.files import vocab_files
from tokkit.tokenizer.gc_pause import paused_gc
from tokkit.tokenizer.hf_json import encode_defaults, special_tokens_map, to_json, tokenizer_config
from tokkit.tokenizer.load import load_spec
from tokkit.tokenizer.encoders import build_encoder
from tokkit.tokenizer.post import Template
from tokkit.tokenizer.recipes import byte_level_spec, char_bpe_spec, wordpiece_spec
from tokkit.tokenizer.spec import KINDS, Spec
from tokkit.tokenizer.trim import space_counts, trim

__all__ = ["Tokenizer", "Encoding", "load"]
SENTENCEPIECE_FILE = "tokenizer.model"  # the name transformers' sentencepiece-based tokenizers look for


@dataclass(frozen=True)
class Encoding:
    """One encoded text: ids, their tokens, (start, end) code-point offsets and word numbers.

    A special token written in the text has its own word number, as in `tokenizers`.
    """

    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]
    word_ids: list[int]


class Tokenizer:
    """Encode and decode with any supported pipeline (WordPiece, BPE, byte-level BPE, Unigram, WordLevel).

    Build one with `tokkit.load(path)`, `tokkit.train(...)` or `Tokenizer.from_trained(...)`.
    Instances hold no open files and no global state: they are safe to share between threads,
    survive `fork`, and pickle as plain data.

    Lone surrogates (which `tokenizers` cannot even receive from Python) never crash: they are
    treated as ordinary characters; byte-level BPE encodes their 3-byte "surrogatepass" form,
    and `decode` gives U+FFFD in their place.
    """

    def __init__(self, spec: Spec, *, split_special_tokens: bool = False):
        self._spec = spec
        self.split_special_tokens = bool(split_special_tokens)
        self._vocab = spec.vocab
        self._template = spec.template
        self._kernel = None
        self._spaces = None

    # ------------------------------------------------------------------------------ construction
    @classmethod
    def from_trained(cls, *, kind: str, vocab: list[str], merges: list[tuple[str, str]] | None,
                     special_tokens: list[str], lowercase: bool | None = None, strip_accents: bool | None = None,
                     pattern: str | None = None) -> "Tokenizer":
        """Wrap a trainer's output: `vocab` in id order (specials first), merges in rank order, in the
        pipeline tokkit.tokenizer.recipes builds for `kind`.

        `lowercase=None` means True for "wordpiece" (bert-base-uncased) and False for "bpe"
        (tokenizers' CharBPE normalizer); "bytelevel" has no normalizer (`pattern`: its Split regex).
        """
        specials = list(special_tokens)
        if kind == "wordpiece":
            spec = wordpiece_spec(list(vocab), specials, lowercase=lowercase is not False, strip_accents=strip_accents)
        elif kind == "bpe":
            spec = char_bpe_spec(list(vocab), merges, specials, lowercase=bool(lowercase), strip_accents=strip_accents)
        elif kind == "bytelevel":
            spec = byte_level_spec(list(vocab), merges, specials, pattern=pattern)
        else:
            raise TokkitError(f"unknown tokenizer kind {kind!r} (one of {', '.join(KINDS[:3])})")
        return cls(spec)

    # ------------------------------------------------------------------------------ properties
    @property
    def kind(self) -> str:
        """The model's family: "wordpiece", "bpe" (char BPE with </w>, or SentencePiece-style BPE),
        "bytelevel" (BPE over GPT-2 byte symbols), "unigram" or "wordlevel".
        """
        return self._spec.kind

    @property
    def vocab_size(self) -> int:
        """One more than the highest id the tokenizer writes (a file may leave some ids unused)."""
        return len(self._vocab)

    @property
    def special_tokens(self) -> list[str]:
        """The special tokens, in id order."""
        return [a.content for a in self._spec.added if a.special]

    @property
    def special_ids(self) -> list[int]:
        return [a.id for a in self._spec.added if a.special]

    @property
    def model_max_length(self) -> int:
        return self._spec.model_max_length

    @property
    def template(self) -> Template | None:
        """The post-processor's template (the special tokens around a text or a pair), or None."""
        return self._template

    @property
    def encode_defaults(self) -> dict:
        """The defaults `tokkit.encode` takes from this tokenizer's file (truncation and padding), if any."""
        return encode_defaults(self._spec.extra)

    @property
    def spec(self) -> Spec:
        return self._spec

    @cached_property
    def _ids(self) -> dict[str, int]:
        """token -> id, built on first use (encoding never reads it; a 128k vocabulary's dict is a
        part of a load worth skipping)."""
        return self._spec.token_ids()

    def get_vocab(self) -> dict[str, int]:
        return dict(self._ids)

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, idx: int) -> str | None:
        return self._vocab[idx] if 0 <= idx < len(self._vocab) else None

    def __repr__(self) -> str:
        return f"Tokenizer(kind={self.kind!r}, vocab_size={self.vocab_size})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Tokenizer) and self._spec == other._spec and \
            self.split_special_tokens == other.split_special_tokens

    # ------------------------------------------------------------------------------ pickling
    def __getstate__(self):
        return {"spec": self._spec, "split_special_tokens": self.split_special_tokens}

    def __setstate__(self, state):
        self.__init__(state["spec"], split_special_tokens=state["split_special_tokens"])

    # ------------------------------------------------------------------------------ encoding
    @property
    def _encoder(self):
        """The compiled encoder plan.py builds (on first use; read-only afterwards, so threads share it)."""
        if self._kernel is None:
            with paused_gc():  # the descriptions' many small containers need no collection while built
                self._kernel = build_encoder(self._spec, self.split_special_tokens)
        return self._kernel

    def trimmed_offsets(self, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray, first: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
        """Offsets after the post-processor's `trim_offsets` (unchanged when it has none).

        `first` marks each sequence's first token (tokenizers trims every sequence on its own).
        """
        post = self._template
        if post is None or not post.trim_offsets:
            return starts, ends
        if self._spaces is None:
            self._spaces = space_counts(self._vocab)
        return trim(ids, starts, ends, first, *self._spaces, add_prefix_space=post.add_prefix_space)

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`, without the template's [CLS]/[SEP].

        >>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a"], merges=None, special_tokens=["[UNK]"])
        >>> tok.encode("a b")
        [1, 0]
        """
        return self._encoder.encode(as_str(text))

    def encode_to_numpy(self, text: str) -> np.ndarray:
        """Token ids of `text` as one numpy uint32 array: the same ids as `encode`, with no Python
        int per token (the encoder writes into one flat buffer with the GIL released).

        >>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a"], merges=None, special_tokens=["[UNK]"])
        >>> tok.encode_to_numpy("a b a")
        array([1, 0, 1], dtype=uint32)
        """
        return self._encoder.encode_numpy(as_str(text))

    def encode_with_offsets(self, text: str) -> Encoding:
        """`encode` plus tokens, code-point offsets into `text` and word numbers.

        The offsets are trimmed as the post-processor says (tokenizers does so even without the
        template's special tokens).
        """
        ids, starts, ends, words = self._encoder.encode_full(as_str(text))
        vocab = self._vocab
        if self._template is not None and self._template.trim_offsets and ids:
            first = np.arange(len(ids)) == 0
            s, e = self.trimmed_offsets(np.array(ids), np.array(starts), np.array(ends), first)
            starts, ends = s.tolist(), e.tolist()
        return Encoding(ids=ids, tokens=[vocab[i] for i in ids], offsets=list(zip(starts, ends)), word_ids=words)

    def encode_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """Encode many texts on `num_threads` threads (default: all cores); the GIL is released.

        The batch is cut into a few slices per thread of about equal characters. Each row is a
        plain list of ints, kept out of the cycle collector (see tokkit._native.rows.rows_to_lists).

        >>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a", "##b"], merges=None,
        ...                              special_tokens=["[UNK]"])
        >>> tok.encode_batch(["ab a", "", "b"], num_threads=2)
        [[1, 2, 1], [], [0]]
        """
        texts, sizes = check_texts(texts)
        parts = run_sliced(lambda a, b: self._encoder.encode_many(texts, a, b), sizes, num_threads)
        rows = parts[0]
        for part in parts[1:]:
            rows.extend(part)
        return rows

    def encode_batch_flat(self, texts: Sequence[str], *, num_threads: int | None = None
                          ) -> tuple[np.ndarray, np.ndarray]:
        """Encode many texts into one uint32 id array plus int64 row offsets (CSR layout).

        Row r is `ids[offsets[r]:offsets[r + 1]]`, equal to `encode_batch(texts)[r]`; `offsets`
        has len(texts) + 1 entries and starts at 0. No Python object is made per token, and the
        GIL is released while encoding, so `num_threads` threads (default: all cores) run at once.

        >>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a", "##b"], merges=None,
        ...                              special_tokens=["[UNK]"])
        >>> ids, offsets = tok.encode_batch_flat(["ab a", "", "b"], num_threads=2)
        >>> ids.tolist(), offsets.tolist()
        ([1, 2, 1, 0], [0, 3, 3, 4])
        """
        texts, sizes = check_texts(texts)
        kernel = self._encoder
        if not texts:
            return np.empty(0, dtype=np.uint32), np.zeros(1, dtype=np.int64)
        job = flat_job(kernel, texts, sizes, num_threads)
        if job is None:
            return join_flat(run_sliced(lambda a, b: kernel.encode_flat(texts, a, b), sizes, num_threads))
        run_shared(job.work, sizes, num_threads)
        if job.plan_join():
            run_shared(job.join_work, sizes, num_threads)
        return job.result()

    # ------------------------------------------------------------------------------ decoding
    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> str:
        """Text for `ids` with the decoder's rules (WordPiece `##` joining, exact bytes, `</w>` spaces).

        >>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a", "##b", "."], merges=None,
        ...                              special_tokens=["[UNK]"])
        >>> tok.decode([1, 2, 1, 3])
        'ab a.'
        """
        skip = set(self.special_ids) if skip_special_tokens else ()
        return decode(self._spec.pipeline.decoder, self._vocab, ids, skip)

    def decode_batch(self, batch: Iterable[Iterable[int]], *, skip_special_tokens: bool = False) -> list[str]:
        return [self.decode(ids, skip_special_tokens=skip_special_tokens) for ids in batch]

    # ------------------------------------------------------------------------------ saving
    def save(self, directory: str | os.PathLike) -> Path:
        """Write tokenizer.json, the vocab files and transformers' side files into `directory`.

        Each file goes to a temporary name and is renamed into place; the same tokenizer always
        gives byte-identical files.
        """

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        spec = self._spec
        atomic_write(out / "tokenizer.json", dump_json(to_json(spec)))
        for name, text in vocab_files(spec).items():
            atomic_write(out / name, text)
        atomic_write(out / "tokenizer_config.json", dump_json(tokenizer_config(spec)))
        atomic_write(out / "special_tokens_map.json", dump_json(special_tokens_map(spec)))
        if spec.sentencepiece_model is not None:
            atomic_write(out / SENTENCEPIECE_FILE, spec.sentencepiece_model)
        return out


# ---------------------------------------------------------------------------------------- helpers
def as_str(text) -> str:
    """`text` as an exact str: subclasses (numpy.str_, enum members) are copied, anything else is a TypeError."""
    if type(text) is str:
        return text
    if isinstance(text, str):
        return str.__str__(text)
    raise TypeError(f"text must be str, not {type(text).__name__}")


def check_texts(texts, name: str = "texts") -> tuple[list[str], np.ndarray]:
    """`texts` as a new list of exact str (subclasses copied) and their lengths (what threads balance
    on); anything else is a TypeError naming the type and the batch index."""

    if isinstance(texts, str):
        raise TypeError(f"{name} must be a sequence of str, not a single str")
    texts = list(texts)
    return texts, text_lengths(texts, name)


def flat_job(kernel, texts: list[str], sizes: np.ndarray, num_threads: int | None):
    """The compiled encoder's shared job over `texts` cut as run_sliced cuts them, or None where the
    kernel has none (the general path, the lanes, a custom split pattern)."""
    slices = split_by_size(sizes, resolve_threads(num_threads, len(sizes)) * SLICES_PER_THREAD)
    return kernel.flat_job(texts, [a for a, _ in slices] + [len(texts)])


def join_flat(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate per-slice (ids, row pointers) pairs into one (ids, offsets) pair.

    >>> join_flat([(np.array([5, 6], np.uint32), np.array([0, 2])), (np.array([7], np.uint32), np.array([0, 0, 1]))])
    (array([5, 6, 7], dtype=uint32), array([0, 2, 2, 3]))
    """
    if len(parts) == 1:
        return parts[0]
    ids = np.concatenate([p[0] for p in parts])
    offsets = np.empty(1 + sum(len(p[1]) - 1 for p in parts), dtype=np.int64)
    offsets[0] = 0
    at, base = 1, 0
    for _, ptr in parts:
        n = len(ptr) - 1
        np.add(ptr[1:], base, out=offsets[at:at + n])
        at += n
        base += int(ptr[-1])
    return ids, offsets


def load(path: str | os.PathLike, *, kind: str | None = None, lowercase: bool | None = None,
         strip_accents: bool | None = None, special_tokens: list[str] | dict[str, int] | None = None,
         split_special_tokens: bool = False, pattern: str | None = None) -> Tokenizer:
    """Load a tokenizer from a folder or a file.

    Folder precedence: tokenizer.json > vocab.txt > vocab.json + merges.txt. Options given here win
    over the files (`lowercase` and `strip_accents` for BERT-style normalisation, `kind` for
    vocab.json + merges.txt, extra `special_tokens` that are in the vocabulary). A tiktoken rank file
    (`cl100k_base.tiktoken`, Llama 3's `original/tokenizer.model`) takes its split `pattern` by name
    (gpt2, cl100k, o200k, llama3, qwen2) or as a regex, inferred for the known encodings, and its
    `special_tokens` as token -> id (the known encodings' by default).

    >>> import tempfile
    >>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a"], merges=None, special_tokens=["[UNK]"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     load(tok.save(d)).encode("A")
    [1]
    """

    spec = load_spec(Path(path), kind=kind, lowercase=lowercase, strip_accents=strip_accents,
                     special_tokens=special_tokens, pattern=pattern)
    return Tokenizer(spec, split_special_tokens=split_special_tokens)
