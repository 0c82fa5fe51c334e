"""Stubs for tokkit._text: the compiled GPT-2 scanner and BERT kernels (C-level; see _text.pxd).

C-level users `cimport` the kernels (see _text.pxd). WordCounter, char_counts, symbolize and
symbolize_bytes are re-exported lazily from tokkit._textcount and tokkit._textsym.
"""
from tokkit._textcount import WordCounter as WordCounter
from tokkit._textsym import char_counts as char_counts
from tokkit._textsym import symbolize as symbolize
from tokkit._textsym import symbolize_bytes as symbolize_bytes
