"""Stubs for tokkit._text: the compiled GPT-2 scanner and BERT normalize + pre-tokenize kernels.

C-level users `cimport` the kernels (see _text.pxd). WordCounter, char_counts, symbolize and
symbolize_bytes are re-exported lazily from tokkit._textcount.
"""
from tokkit._textcount import WordCounter as WordCounter
from tokkit._textcount import char_counts as char_counts
from tokkit._textcount import symbolize as symbolize
from tokkit._textcount import symbolize_bytes as symbolize_bytes

def gpt2_spans_str(text: str) -> list[tuple[int, int]]: ...
def gpt2_split_str(text: str) -> list[str]: ...
def bert_split_str(
    text: str, clean_text: bool, handle_chinese_chars: bool, strip_accents: bool, lowercase: bool
) -> list[tuple[str, tuple[int, int]]]: ...
def bert_normalize_str(
    text: str, clean_text: bool, handle_chinese_chars: bool, strip_accents: bool, lowercase: bool
) -> tuple[str, list[int], list[int]]: ...
