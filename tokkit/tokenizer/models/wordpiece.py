"""WordPiece: greedy longest-match-first over the vocabulary, as BERT splits a word.

>>> m = WordPiece(vocab=("[UNK]", "un", "##aff", "##able"), unk_token="[UNK]")
>>> m.tokenize("unaffable")
[(1, 0, 2), (2, 2, 5), (3, 5, 9)]
>>> m.tokenize("unx")
[(0, 0, 3)]
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from tokkit._native.pipeline import ModelKind, token_blob
from tokkit.errors import TokkitError
from tokkit.tokenizer.models.wordlevel import (PlainState, check_type, json_field, json_object, json_uint, read_vocab,
                                               with_file_ids)
from tokkit.tokenizer.vocab import token_ids


@dataclass(frozen=True)
class WordPiece(PlainState):
    """tokenizers' WordPiece model.

    From the start of the piece, the longest vocabulary token that matches is taken (after the first,
    looked up with `continuing_subword_prefix` in front), then the same from where it ended. When no
    token matches somewhere, or the piece has more than `max_input_chars_per_word` characters, the
    whole piece is one `unk_token`. `vocab` lists the tokens in id order; `unk_token` must be in it.

    >>> WordPiece(vocab=("[UNK]", "a"), unk_token="[UNK]", max_input_chars_per_word=2).tokenize("aaa")
    [(0, 0, 3)]
    """

    vocab: tuple[str | None, ...]  # by id; None at an id the file leaves unused
    unk_token: str = "[UNK]"
    continuing_subword_prefix: str = "##"
    max_input_chars_per_word: int = 100

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "WordPiece":
        at = f"{where}: model.WordPiece"
        json_object(obj, at)
        check_type(obj, "WordPiece", at)
        model = cls(vocab=read_vocab(obj, at), unk_token=json_field(obj, "unk_token", (str,), at),
                    continuing_subword_prefix=json_field(obj, "continuing_subword_prefix", (str,), at),
                    max_input_chars_per_word=json_uint(obj, "max_input_chars_per_word", at, 64))
        with_file_ids(model, obj)
        if model.unk_token not in model.ids:  # tokenizers fails on the first unknown word
            raise TokkitError(f"{at}: unk_token {model.unk_token!r} is not in the vocabulary")
        return model

    def to_json(self) -> dict:
        return {"type": "WordPiece", "unk_token": self.unk_token,
                "continuing_subword_prefix": self.continuing_subword_prefix,
                "max_input_chars_per_word": self.max_input_chars_per_word, "vocab": token_ids(self.vocab)}

    @cached_property
    def ids(self) -> dict[str, int]:
        """token -> id."""
        return token_ids(self.vocab)

    @property
    def tokens(self) -> tuple[str | None, ...]:
        """The tokens by id."""
        return self.vocab

    def native(self) -> dict:
        """The compiled model's description (tokkit._native.pipeline.PipelineEncoder.build)."""
        return {"kind": ModelKind.M_WORDPIECE, "unk_id": self.ids[self.unk_token],
                "prefix": self.continuing_subword_prefix.encode("utf-8", "surrogatepass"),
                "max_input_chars": self.max_input_chars_per_word, "tokens": token_blob(self.vocab)}

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        """[(id, start, end)] for one piece, offsets in characters ("" gives no tokens)."""
        if len(piece) > self.max_input_chars_per_word:
            return [(self.ids[self.unk_token], 0, len(piece))]
        out = []
        start = 0
        while start < len(piece):
            for end in range(len(piece), start, -1):  # longest first
                sub = piece[start:end] if start == 0 else self.continuing_subword_prefix + piece[start:end]
                if sub in self.ids:
                    out.append((self.ids[sub], start, end))
                    break
            else:
                return [(self.ids[self.unk_token], 0, len(piece))]
            start = end
        return out
