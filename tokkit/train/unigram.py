"""Unigram language-model training (Kudo 2018), as sentencepiece's unigram trainer does it, from counted words.

Words are counted by the shared flow (whitespace-split, then NFKC per distinct word) and written
``▁word`` as Metaspace writes them. Seed pieces are every character above the coverage cut plus
the most frequent substrings (count x length) that stay within one script and start with ▁ only
at the front; then rounds of EM (forward-backward expected counts, digamma-smoothed scores) and
pruning of the pieces whose removal costs the least likelihood shrink the set to the target,
keeping every single character. The lattice loops run in `tokkit._native.unigram_train` (or its
readable twin `tokkit.train.unigram_py`, with TOKKIT_PURE_PYTHON=1).

>>> import tokkit
>>> tok = tokkit.train(texts=["the quick brown fox jumps over the lazy dog"] * 30, algo="unigram", vocab_size=60)
>>> tok.kind, tok.id_to_token(0)
('unigram', '<pad>')
"""
from __future__ import annotations

import math
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tokkit._files import atomic_write
from tokkit._native import pure_python_requested
from tokkit._progress import Progress
from tokkit._threads import available_cores
from tokkit.errors import TokkitError
from tokkit.tokenizer.hf_json import spec_from_json
from tokkit.tokenizer.sentencepiece_model import NormalizerSpec, Piece, SentencePieceModel, TrainerSpec
from tokkit.tokenizer.sentencepiece_write import model_to_bytes
from tokkit.tokenizer.tokenizer import Tokenizer
from tokkit.train import unigram_py
from tokkit.train.flow import Algorithm

try:
    from tokkit._native import unigram_train as _compiled
except ImportError:  # a checkout that was never built: the twin does the same, slowly
    _compiled = None

SPACE = "\u2581"  # ▁, Metaspace's word-start marker
SPECIALS = ["<pad>", "</s>", "<unk>"]
UNK = "<unk>"
UNK_PENALTY = 10.0  # an unknown character scores this much below the lowest piece (as tokenizers' Unigram)
SHRINKING_FACTOR = 0.75
EM_STEPS = 2  # EM passes before each pruning round
MIN_EXPECTED = 0.5  # the M-step drops pieces expected less often than this
VOCAB_SLACK = 1.1  # pruning stops this far above the target; the final cut takes the best-scored
MAX_SEEDS = 1_000_000
SEEDS_PER_PIECE = 15  # seed substrings per target piece (sentencepiece seeds 1M; 15 x 16k keeps its quality)
SEED_MIN_COUNT = 8  # seeds are first looked for among the substrings seen this often (see top_substrings)
PENALTY_STEP = 1e-4
SCORE_DECIMALS = 8  # required characters the model lost come back just below its lowest score, in order
SENTENCEPIECE_FILE = "tokenizer.model"  # the name transformers' sentencepiece-based tokenizers look for
SENTENCEPIECE_SPECIALS = {"unk": UNK, "bos": "<s>", "eos": "</s>", "pad": "<pad>"}  # sentencepiece's own names


def lattice_engine(name: str | None = None):
    """The module with e_step, viterbi_counts and alternatives: compiled, or the Python twin.

    >>> lattice_engine("python").__name__
    'tokkit.train.unigram_py'
    """
    if name is None:
        name = "python" if (pure_python_requested() or _compiled is None) else "compiled"
    if name == "python":
        return unigram_py
    if name == "compiled":
        if _compiled is None:
            raise ImportError("tokkit's compiled unigram kernel is not built; reinstall with: pip install -e .")
        return _compiled
    raise ValueError(f"unknown engine {name!r}; expected 'compiled' or 'python'")


def digamma(x):
    """The digamma function for x > 0 (a float or an array): shift up with psi(x) = psi(x + 1) - 1/x, then
    the asymptotic series.

    >>> round(digamma(1.0), 10)  # minus the Euler-Mascheroni constant
    -0.5772156649
    """
    x = np.array(x, dtype=np.float64)
    shift = np.zeros_like(x)
    while (low := x < 10.0).any():
        shift[low] -= 1.0 / x[low]
        x[low] += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))))
    out = shift + np.log(x) - 0.5 / x - series
    return float(out) if out.ndim == 0 else out


def script_of(ch: str) -> str | None:
    """A coarse script class: pieces never mix two (None, for marks, joins any).

    >>> script_of("a"), script_of("7"), script_of(","), script_of("\\u0301"), script_of("か")
    ('LATIN', 'NUMBER', 'COMMON', None, 'HAN')
    """
    cat = unicodedata.category(ch)
    if cat[0] == "M":
        return None
    if cat[0] == "N":
        return "NUMBER"
    if cat[0] != "L":
        return "COMMON"
    first = unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]
    return "HAN" if first in ("CJK", "HIRAGANA", "KATAKANA") else first


@dataclass
class Unigram(Algorithm):
    """Options as sentencepiece names them; `normalization` is "nfkc" (default) or "identity".

    `sentencepiece_model=True`: the trained tokenizer's `save` also writes tokenizer.model, the same
    vocabulary as a SentencePiece model (see `sentencepiece_model_of`).
    """

    name: str = "unigram"
    default_limit_alphabet: int | None = None
    trains_pieces: ClassVar[bool] = True  # the flow hands it the counted words (train_words)
    default_specials: ClassVar[tuple] = tuple(SPECIALS)
    unk_token: ClassVar[str] = UNK
    character_coverage: float = 0.9995
    max_piece_length: int = 16
    byte_fallback: bool = False
    split_digits: bool = False
    normalization: str = "nfkc"
    seed_size: int | None = None
    sentencepiece_model: bool = False

    def __post_init__(self):
        cov = self.character_coverage
        if isinstance(cov, bool) or not isinstance(cov, (int, float)) or not 0 < cov <= 1:
            raise TokkitError(f"character_coverage must be a number in (0, 1], got {cov!r}")
        mpl = self.max_piece_length
        if isinstance(mpl, bool) or not isinstance(mpl, int) or not 1 <= mpl <= 64:
            raise TokkitError(f"max_piece_length must be a whole number in [1, 64], got {mpl!r}")
        if self.normalization not in ("nfkc", "identity"):
            raise TokkitError(f"normalization must be 'nfkc' or 'identity', got {self.normalization!r}")
        if self.seed_size is not None and (isinstance(self.seed_size, bool) or not isinstance(self.seed_size, int)
                                           or self.seed_size < 1):
            raise TokkitError(f"seed_size must be a positive whole number, got {self.seed_size!r}")
        if not isinstance(self.sentencepiece_model, bool):
            raise TokkitError(f"sentencepiece_model must be True or False, got {self.sentencepiece_model!r}")

    def count_mode(self):
        return "whitespace", {}

    def train_words(self, table, *, vocab_size: int, min_frequency: int, special_tokens: list[str],
                    progress: bool, engine: str | None, summary, workers: int | None = None):
        """Train on a counted WordTable and return the Tokenizer (the flow's hook for piece trainers).

        `workers` threads run the E-step (default all cores); the result is the same for any number.
        """
        words = self.normalized_words(table)
        fixed = list(special_tokens) + (byte_pieces() if self.byte_fallback else [])
        target = vocab_size - len(fixed)
        threads = min(workers or available_cores(), available_cores())
        trainer = _Trainer(self, words, target, lattice_engine(engine), threads)
        if target < len(trainer.required):
            raise TokkitError(f"--vocab-size {vocab_size} is below the {len(fixed)} special and byte tokens + "
                              f"{len(trainer.required)} characters --character-coverage keeps ({len(fixed) + len(trainer.required)}); "
                              "raise it or lower --character-coverage")
        pieces = trainer.run(min_frequency, progress)
        summary.alphabet, summary.pieces = len(trainer.required), len(pieces)
        return self.build_tokenizer(fixed, pieces, special_tokens)

    def normalized_words(self, table) -> dict[str, int]:
        """{▁word: count} after normalization (which may make or split words), sorted by word.

        The words are normalized as one text, a newline between each two: NFKC never joins or
        reorders anything across a newline, and no character becomes one.
        """
        out: dict[str, int] = defaultdict(int)
        text = joined_words(table.blob, table.offsets)
        if self.normalization == "nfkc":
            text = unicodedata.normalize("NFKC", text)
        for word, count in zip(text.split("\n"), table.counts.tolist()):
            if SPACE in word or " " in word or not word.isprintable():  # NFKC makes spaces of some chars
                for part in word.replace(SPACE, " ").split():
                    out[SPACE + part] += count
            elif word:
                out[SPACE + word] += count
        if not out:
            raise TokkitError("the corpus is empty (no words in it)")
        return dict(sorted(out.items()))

    def build_tokenizer(self, fixed: list[str], pieces: list[tuple[str, float]], specials: list[str]) -> Tokenizer:
        """tokenizer.json's components (NFKC, Metaspace, Unigram, Metaspace) read back through spec_from_json."""
        taken = set(fixed)
        # Scores to 8 decimals: every JSON reader then parses the same doubles (tokenizers' parser is exact only
        # for short numbers), so even paths tied to the last bit are broken alike.
        vocab = [[tok, 0.0] for tok in fixed] + [[p, round(s, SCORE_DECIMALS)] for p, s in pieces if p not in taken]
        ids = {tok: i for i, (tok, _) in enumerate(vocab)}
        metaspace = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True}
        decoder = dict(metaspace)
        if self.byte_fallback:
            decoder = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, metaspace]}
        data = {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": ids[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": True} for t in specials],
            "normalizer": self.normalizer_json(),
            "pre_tokenizer": metaspace,
            "post_processor": bert_template(ids) if "[CLS]" in specials and "[SEP]" in specials else None,
            "decoder": decoder,
            "model": {"type": "Unigram", "unk_id": ids[self.unk_token], "vocab": vocab,
                      "byte_fallback": self.byte_fallback},
        }
        spec = spec_from_json(data, "trained unigram")
        if self.sentencepiece_model:
            return WithSentencePieceModel(spec, sentencepiece_model=model_to_bytes(
                self.sentencepiece_model_of(vocab, specials), "trained unigram"))
        return Tokenizer(spec)

    def sentencepiece_model_of(self, vocab: list[list], specials: list[str]) -> SentencePieceModel:
        """The vocabulary as sentencepiece's trainer would write it for these options.

        <unk> is the UNKNOWN piece, the other special tokens CONTROL pieces (those sentencepiece has
        no id option for listed in control_symbols), <0xNN> BYTE pieces, the rest NORMAL with their
        scores as float32. The normalizer is "identity" (no character map, so sentencepiece does not
        apply NFKC) with add_dummy_prefix and remove_extra_whitespaces, as tokkit's Metaspace and
        whitespace rules do for text of plain spaces.
        """
        ids = {tok: i for i, (tok, _) in enumerate(vocab)}
        byte_set = set(byte_pieces()) if self.byte_fallback else set()
        kinds = {tok: "CONTROL" for tok in specials} | {self.unk_token: "UNKNOWN"}
        pieces = tuple(Piece(tok, float(score), kinds.get(tok, "BYTE" if tok in byte_set else "NORMAL"))
                       for tok, score in vocab)
        named = {f"{role}_id": ids[tok] if tok in specials else -1 for role, tok in SENTENCEPIECE_SPECIALS.items()}
        trainer = TrainerSpec(
            model_type="unigram", vocab_size=len(vocab), character_coverage=self.character_coverage,
            max_sentencepiece_length=self.max_piece_length, split_digits=self.split_digits,
            byte_fallback=self.byte_fallback, treat_whitespace_as_suffix=False, **named,
            control_symbols=tuple(t for t in specials if t not in SENTENCEPIECE_SPECIALS.values()))
        normalizer = NormalizerSpec(name="identity", precompiled_charsmap=b"", add_dummy_prefix=True,
                                    remove_extra_whitespaces=True, escape_whitespaces=True)
        return SentencePieceModel(pieces=pieces, trainer_spec=trainer, normalizer_spec=normalizer)


    def normalizer_json(self) -> dict:
        """NFKC, then whitespace runs as one space, stripped at both ends: training splits words at any
        whitespace, so encoding does too (sentencepiece's nmt_nfkc also drops extra whitespace)."""
        steps = [{"type": "NFKC"}] if self.normalization == "nfkc" else []
        steps += [{"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
                  {"type": "Strip", "strip_left": True, "strip_right": True}]
        return {"type": "Sequence", "normalizers": steps}


class WithSentencePieceModel(Tokenizer):
    """A trained Unigram tokenizer whose `save` also writes its SentencePiece model (tokenizer.model).

    >>> tok = Unigram(sentencepiece_model=True).build_tokenizer(["<unk>"], [("\u2581a", -1.0)], ["<unk>"])
    >>> tok.encode("a a"), tok.sentencepiece_model[:9]
    ([1, 1], b'\\n\\x0e\\n\\x05<unk>')
    """

    def __init__(self, spec, *, sentencepiece_model: bytes, split_special_tokens: bool = False):
        super().__init__(spec, split_special_tokens=split_special_tokens)
        self.sentencepiece_model = sentencepiece_model

    def save(self, directory):
        """Tokenizer.save, then tokenizer.model beside tokenizer.json (through a temporary name too)."""
        out = super().save(directory)
        atomic_write(out / SENTENCEPIECE_FILE, self.sentencepiece_model)
        return out

    def __getstate__(self):
        return {**super().__getstate__(), "sentencepiece_model": self.sentencepiece_model}

    def __setstate__(self, state):
        self.__init__(state["spec"], sentencepiece_model=state["sentencepiece_model"],
                      split_special_tokens=state["split_special_tokens"])


def byte_pieces() -> list[str]:
    """The 256 byte-fallback pieces, <0x00> to <0xFF>."""
    return [f"<0x{b:02X}>" for b in range(256)]


def bert_template(ids: dict[str, int]) -> dict:
    """TemplateProcessing for [CLS] A [SEP] (B [SEP]), when both are special tokens."""
    cls, sep = ({"SpecialToken": {"id": t, "type_id": 0}} for t in ("[CLS]", "[SEP]"))
    seq = [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}]
    sep1 = {"SpecialToken": {"id": "[SEP]", "type_id": 1}}
    return {"type": "TemplateProcessing", "single": [cls, seq[0], sep], "pair": [cls, seq[0], sep, seq[1], sep1],
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}}


def spelled(cps: np.ndarray, offsets: np.ndarray, which: np.ndarray) -> list[str]:
    """The strings cps[offsets[k]:offsets[k + 1]] for k in `which`, decoded all at once.

    >>> spelled(np.array([104, 105, 121, 111], dtype=np.int32), np.array([0, 2, 4]), np.array([1, 0]))
    ['yo', 'hi']
    """
    starts, lengths = offsets[which], offsets[which + 1] - offsets[which]
    ends = np.cumsum(lengths)
    gather = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths - starts, lengths)
    joined = cps[gather].astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    return [joined[b - n:b] for b, n in zip(ends.tolist(), lengths.tolist())]


def as_arrays(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as flat int32 code points and int64 offsets (the kernels' input)."""
    lengths = np.array(list(map(len, strings)), dtype=np.int64).reshape(-1)
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cps = np.frombuffer("".join(strings).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int32)
    return cps, offsets


class _Trainer:
    """One training run: the words, the required characters, the current pieces and scores."""

    def __init__(self, algo: Unigram, words: dict[str, int], target: int, engine, threads: int = 1):
        self.algo, self.target, self.engine, self.threads = algo, target, engine, threads
        self.words = words
        self.word_cps, self.word_offsets = as_arrays(list(words))
        self.counts = np.array(list(words.values()), dtype=np.int64)
        self.required = required_chars(self.word_cps, self.word_offsets, self.counts, algo.character_coverage)

    def run(self, min_frequency: int, progress: bool) -> list[tuple[str, float]]:
        """Seed, then EM and prune until near the target, then the final cut: [(piece, score)] best first."""
        pieces, scores = self.seeds(min_frequency)
        desired = int(self.target * VOCAB_SLACK)
        with Progress(max(len(pieces) - desired, 0), desc="pruning", unit=" pieces", enabled=progress) as bar:
            start = len(pieces)
            while True:
                for _ in range(EM_STEPS):
                    pieces, scores = self.em_step(pieces, scores)
                bar.set(min(start - len(pieces), bar.total or 0))
                if len(pieces) <= desired:
                    break
                kept = self.prune(pieces, scores, desired)
                if len(kept) == len(pieces):
                    break
                pieces, scores = [pieces[i] for i in kept], scores[kept]
        return self.finalize(pieces, scores)

    def seeds(self, min_frequency: int) -> tuple[list[str], np.ndarray]:
        """The required characters and the top substrings by count x length, scored as log frequencies."""
        limit = self.algo.seed_size or min(MAX_SEEDS, max(SEEDS_PER_PIECE * self.target, 1000))
        values, spelled = self.top_substrings(max(min_frequency, 1), limit)
        ranked = sorted(zip(values, spelled), key=lambda x: (-x[0], x[1]))[:limit]
        seeds = sorted([(float(c), ch) for ch, c in self.required.items()] + [(float(v), s) for v, s in ranked],
                       key=lambda x: (-x[0], x[1]))
        freqs = np.array([f for f, _ in seeds], dtype=np.float64)
        return [s for _, s in seeds], np.log(freqs) - math.log(freqs.sum())

    def top_substrings(self, min_count: int, limit: int) -> tuple[list[int], list[str]]:
        """(count x length, substring) of every substring tied with the limit-th best or better.

        Counting only the substrings seen SEED_MIN_COUNT times or more is much cheaper, and exact
        whenever `limit` of them are worth at least SEED_MIN_COUNT x max_piece_length: a substring
        seen fewer times is worth less than that, so it could not be among the best.
        """
        longest = self.algo.max_piece_length
        classes = self.char_classes()
        for floor in sorted({max(SEED_MIN_COUNT, min_count), min_count}, reverse=True):
            cps, offsets, counts = self.engine.count_substrings(self.word_cps, self.word_offsets, self.counts,
                                                                classes, max_length=longest, min_count=floor)
            value = counts * np.diff(offsets)
            if floor == min_count or np.count_nonzero(value >= floor * longest) >= limit:
                break
        if len(value) > limit:  # only those tied with the limit-th best or better need spelling out
            cut = np.partition(value, len(value) - limit)[len(value) - limit]
            chosen = np.flatnonzero(value >= cut)
        else:
            chosen = np.arange(len(value))
        return value[chosen].tolist(), spelled(cps, offsets, chosen)

    def char_classes(self) -> np.ndarray:
        """Each word code point's class for count_substrings: not kept, ▁, alone (split digits), or its script."""
        unique, inverse = np.unique(self.word_cps, return_inverse=True)
        scripts: dict[str, int] = {}
        table = np.empty(len(unique), dtype=np.int32)
        for k, cp in enumerate(unique.tolist()):
            ch = chr(cp)
            if ch not in self.required:
                table[k] = unigram_py.BAD
            elif ch == SPACE:
                table[k] = unigram_py.MARKER
            elif self.algo.split_digits and ch.isdigit():
                table[k] = unigram_py.ALONE
            else:
                script = script_of(ch)
                table[k] = 0 if script is None else scripts.setdefault(script, len(scripts) + 1)
        return table[inverse.reshape(-1)]

    def em_step(self, pieces: list[str], scores: np.ndarray) -> tuple[list[str], np.ndarray]:
        """E: expected counts by forward-backward; M: drop the rare, score digamma(count) - digamma(total)."""
        p_cps, p_off = as_arrays(pieces)
        expected, _ = self.engine.e_step(p_cps, p_off, scores, self.word_cps, self.word_offsets, self.counts,
                                         unk_score=float(scores.min()) - UNK_PENALTY, threads=self.threads)
        keep = np.flatnonzero(expected >= MIN_EXPECTED)
        kept = expected[keep]
        return [pieces[i] for i in keep.tolist()], digamma(kept) - digamma(float(kept.sum()))

    def prune(self, pieces: list[str], scores: np.ndarray, desired: int) -> list[int]:
        """Indices of the pieces kept: those without alternative, then the costliest to remove."""
        p_cps, p_off = as_arrays(pieces)
        unk = float(scores.min()) - UNK_PENALTY
        kind, alt, alt_off = self.engine.alternatives(p_cps, p_off, scores, unk_score=unk)
        freq = self.engine.viterbi_counts(p_cps, p_off, scores, self.word_cps, self.word_offsets, self.counts,
                                          unk_score=unk, threads=self.threads)
        on_path = freq > 0  # a piece never on a best path, or split anyway (kind 0), is free to go
        kept = np.flatnonzero(on_path & (kind == 1))
        candidates = np.flatnonzero(on_path & (kind == 2))
        loss = removal_loss(freq, alt, alt_off, float(self.counts.sum()))[candidates]
        size = max(desired, int(SHRINKING_FACTOR * len(pieces)))
        best = candidates[np.lexsort((candidates, -loss))][:max(size - len(kept), 0)]
        return sorted(kept.tolist() + best.tolist())

    def finalize(self, pieces: list[str], scores: np.ndarray) -> list[tuple[str, float]]:
        """Every required character (lost ones just below the lowest score), then the best pieces to the target."""
        score = dict(zip(pieces, scores.tolist()))
        low = min(score.values()) if score else 0.0
        final: dict[str, float] = {}
        penalty = 0.0
        for ch, _ in sorted(self.required.items(), key=lambda kv: (-kv[1], kv[0])):
            if ch in score:
                final[ch] = score[ch]
            else:
                final[ch] = low + penalty
                penalty += PENALTY_STEP
        for piece, s in sorted(score.items(), key=lambda kv: (-kv[1], kv[0])):
            if len(final) >= self.target:
                break
            final.setdefault(piece, s)
        return sorted(final.items(), key=lambda kv: (-kv[1], kv[0]))


def removal_loss(freq: np.ndarray, alt: np.ndarray, alt_offsets: np.ndarray, total_words: float) -> np.ndarray:
    """For each piece, the log-likelihood lost when its Viterbi count moves to its alternative's pieces.

    A piece with count f among all pieces' total T scores log(f / T); removed, each alternative
    piece n gets f more, out of T + f (len(alt) - 1). The loss is weighted by the piece's share of
    the words, f / total_words (meaningless for pieces without an alternative; the caller skips them).

    >>> removal_loss(np.array([6.0, 2.0, 2.0]), np.array([1, 2], dtype=np.int32), np.array([0, 2, 2, 2]), 10.0)
    array([0.52528124, 0.        , 0.        ])
    """
    n = len(freq)
    lengths = np.diff(alt_offsets)
    owner = np.repeat(np.arange(n), lengths)
    with np.errstate(divide="ignore", invalid="ignore"):  # pieces off every path (f = 0) are skipped
        alt_logs = np.bincount(owner, weights=np.log(freq[alt] + freq[owner]), minlength=n)
        total = float(freq.sum())
        logprob_alt = alt_logs - lengths * np.log(total + freq * (lengths - 1))
        loss = freq / total_words * (np.log(freq) - math.log(total) - logprob_alt)
    return np.where(lengths > 0, loss, 0.0)


def required_chars(word_cps: np.ndarray, word_offsets: np.ndarray, counts: np.ndarray,
                   coverage: float) -> dict[str, int]:
    """The most frequent characters (with ▁) until `coverage` of all character occurrences: {char: count}.

    >>> cps, offsets = as_arrays(["▁aab", "▁b"])
    >>> required_chars(cps, offsets, np.array([3, 1]), 0.7)
    {'a': 6, 'b': 4}
    """
    unique, inverse = np.unique(word_cps, return_inverse=True)
    weights = np.repeat(counts, np.diff(word_offsets)).astype(np.float64)  # exact below 2**53 occurrences
    totals = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(unique)).astype(np.int64)
    threshold = int(totals.sum()) * coverage
    out, seen = {}, 0
    for ch, c in sorted(zip(map(chr, unique.tolist()), totals.tolist()), key=lambda kv: (-kv[1], kv[0])):
        if seen >= threshold:
            break
        seen += c
        out[ch] = c
    return out


def joined_words(blob: bytes, offsets: np.ndarray) -> str:
    """The words blob[offsets[k]:offsets[k + 1]] as one text, each followed by a newline.

    >>> joined_words(b"catdog", np.array([0, 3, 6]))
    'cat\\ndog\\n'
    """
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    out = np.full(len(blob) + n, 10, dtype=np.uint8)
    out[np.arange(len(blob)) + np.repeat(np.arange(n), lengths)] = np.frombuffer(blob, dtype=np.uint8)
    return out.tobytes().decode("utf-8", "replace")
