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

import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tokkit._threads import available_cores
from tokkit.errors import TokkitError
from tokkit.tokenizer import decoders
from tokkit.tokenizer import normalizers as norm
from tokkit.tokenizer.models import Unigram as UnigramModel
from tokkit.tokenizer.post import bert_processing
from tokkit.tokenizer.pre_tokenizers import Metaspace
from tokkit.tokenizer.precompiled import build_charsmap
from tokkit.tokenizer.recipes import added_specials
from tokkit.tokenizer.sentencepiece_model import NormalizerSpec, Piece, SentencePieceModel, TrainerSpec
from tokkit.tokenizer.sentencepiece_write import model_to_bytes
from tokkit.tokenizer.spec import Pipeline, Spec
from tokkit.tokenizer.tokenizer import SENTENCEPIECE_FILE as SENTENCEPIECE_FILE  # the file name `tokkit train` checks
from tokkit.tokenizer.tokenizer import Tokenizer
from tokkit.train.flow import Algorithm
from tokkit.train.unigram_em import SPACE, PieceTrainer, lattice_engine

SPECIALS = ["<pad>", "</s>", "<unk>"]
UNK = "<unk>"
SCORE_DECIMALS = 8  # required characters the model lost come back just below its lowest score, in order
SENTENCEPIECE_SPECIALS = {"unk": UNK, "bos": "<s>", "eos": "</s>", "pad": "<pad>"}  # sentencepiece's own names


@dataclass
class Unigram(Algorithm):
    """Options as sentencepiece names them; `normalization` is "nfkc" (default) or "identity".

    `sentencepiece_model=True`: the trained tokenizer also holds the same vocabulary as a SentencePiece
    model (see `sentencepiece_model_of`), which its `save` writes as tokenizer.model.
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
        trainer = PieceTrainer(self, words, target, lattice_engine(engine), threads)
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
        """The trained pieces as a Unigram behind NFKC (normalizer_of) and Metaspace, with a Metaspace
        decoder (after ByteFallback with byte fallback) and BERT's template when [CLS] and [SEP] are special.

        >>> tok = Unigram(sentencepiece_model=True).build_tokenizer(["<unk>"], [("\u2581a", -1.0)], ["<unk>"])
        >>> tok.encode("a a"), tok.spec.sentencepiece_model[:9]
        ([1, 1], b'\\n\\x0e\\n\\x05<unk>')
        """
        taken = set(fixed)
        # Scores to 8 decimals: every JSON reader then parses the same doubles (tokenizers' parser is exact only
        # for short numbers), so even paths tied to the last bit are broken alike.
        vocab = [(tok, 0.0) for tok in fixed] + [(p, round(s, SCORE_DECIMALS)) for p, s in pieces if p not in taken]
        ids = {tok: i for i, (tok, _) in enumerate(vocab)}
        metaspace = dict(replacement=SPACE, prepend_scheme="always", split=True)
        decoder = decoders.Metaspace(**metaspace)
        if self.byte_fallback:
            decoder = decoders.Sequence((decoders.ByteFallback(), decoder))
        pipeline = Pipeline(normalizer=self.normalizer_of(), pre_tokenizer=Metaspace(**metaspace),
                            model=UnigramModel(vocab=tuple(vocab), unk_id=ids[self.unk_token],
                                               byte_fallback=self.byte_fallback),
                            post=bert_processing(ids) if "[CLS]" in specials and "[SEP]" in specials else None,
                            decoder=decoder)
        model = None
        if self.sentencepiece_model:
            model = model_to_bytes(self.sentencepiece_model_of([list(v) for v in vocab], specials), "trained unigram")
        return Tokenizer(Spec(pipeline, added_specials(specials, ids), sentencepiece_model=model))

    def sentencepiece_model_of(self, vocab: list[list], specials: list[str]) -> SentencePieceModel:
        """The vocabulary as sentencepiece's trainer would write it for these options.

        <unk> is the UNKNOWN piece, the other special tokens CONTROL pieces (those sentencepiece has
        no id option for listed in control_symbols), <0xNN> BYTE pieces, the rest NORMAL with their
        scores as float32. The normalizer is "identity" (sentencepiece does not apply NFKC) but for a
        character map of U+2581 to a space, with add_dummy_prefix and remove_extra_whitespaces, as
        tokkit's normalizer_of and Metaspace do for text of plain spaces.
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
        normalizer = NormalizerSpec(name="identity", precompiled_charsmap=build_charsmap({SPACE: " "}),
                                    add_dummy_prefix=True, remove_extra_whitespaces=True, escape_whitespaces=True)
        return SentencePieceModel(pieces=pieces, trainer_spec=trainer, normalizer_spec=normalizer)


    def normalizer_of(self) -> norm.Sequence:
        """NFKC, then U+2581 typed in the text as a space, whitespace runs as one space, stripped at both
        ends: training splits words at any whitespace and at U+2581 (Metaspace's space), so encoding
        does too (sentencepiece's nmt_nfkc also maps U+2581 to a space and drops extra whitespace)."""
        steps = (norm.NFKC(),) if self.normalization == "nfkc" else ()
        return norm.Sequence(steps + (norm.Replace(pattern={"String": SPACE}, content=" "),
                                      norm.Replace(pattern={"Regex": "\\s+"}, content=" "), norm.Strip(True, True)))


def byte_pieces() -> list[str]:
    """The 256 byte-fallback pieces, <0x00> to <0xFF>."""
    return [f"<0x{b:02X}>" for b in range(256)]


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
