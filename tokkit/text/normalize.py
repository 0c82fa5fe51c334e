"""BERT text normalization and splitting (BertNormalizer + BertPreTokenizer), compiled.

Behaviour follows the pinned `tokenizers` exactly, including its Unicode tables (probed into
tokkit/data/unicode_tables.json by dev/gen_unicode_tables.py): clean_text deletes U+0000, U+FFFD and
control/format/private-use characters except tab/newline/return and maps whitespace to a space;
handle_chinese_chars pads CJK ideographs with spaces;
strip_accents is NFD over the whole text (canonical reordering included, with tokenizers' positional
alignments) minus the nonspacing marks (Mn); lowercase is per character (no final-sigma rule).

>>> bert_split("Héllo, World!", BertNorm())
[('hello', (0, 5)), (',', (5, 6)), ('world', (7, 12)), ('!', (12, 13))]
"""
from __future__ import annotations

from dataclasses import dataclass

from tokkit._native.text_api import bert_normalize_str, bert_split_str


@dataclass(frozen=True)
class BertNorm:
    """BertNormalizer options; `strip_accents=None` follows `lowercase`, as in tokenizers.

    >>> BertNorm(lowercase=False).flags
    (True, True, False, False)
    """

    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None
    lowercase: bool = True

    @property
    def strips_accents(self) -> bool:
        """strip_accents resolved: None follows lowercase."""
        return self.lowercase if self.strip_accents is None else self.strip_accents

    @property
    def flags(self) -> tuple[bool, bool, bool, bool]:
        """(clean_text, handle_chinese_chars, strip_accents resolved, lowercase), as the kernels take them."""
        return bool(self.clean_text), bool(self.handle_chinese_chars), bool(self.strips_accents), bool(self.lowercase)


DEFAULT = BertNorm()


def bert_normalize(text: str, options: BertNorm = DEFAULT) -> str:
    """BertNormalizer's output for `text`.

    >>> bert_normalize("Ünïcode 中文")
    'unicode  中  文 '
    """

    return bert_normalize_str(text, *options.flags)[0]


def bert_alignments(text: str, options: BertNorm = DEFAULT) -> tuple[str, list[tuple[int, int]]]:
    """The normalized text and, per normalized character, the (start, end) of its original character.

    >>> bert_alignments("Aé")
    ('ae', [(0, 1), (1, 2)])
    """

    norm, starts, ends = bert_normalize_str(text, *options.flags)
    return norm, list(zip(starts, ends))


def bert_split(text: str, options: BertNorm = DEFAULT) -> list[tuple[str, tuple[int, int]]]:
    """Normalized pre-tokens of `text` with their (start, end) code-point offsets into `text`.

    An offset covers a character the normalizer removed only when it lies inside the piece.

    >>> bert_split("a\\x00b c.")
    [('ab', (0, 3)), ('c', (4, 5)), ('.', (5, 6))]
    """

    return bert_split_str(text, *options.flags)
