from collections.abc import Sequence
from enum import IntEnum

import numpy as np

from tokkit._native.rows import Rows

class NormKind(IntEnum):
    N_NFD: int
    N_NFKD: int
    N_NFC: int
    N_NFKC: int
    N_LOWER: int
    N_STRIP: int
    N_STRIP_ACCENTS: int
    N_REPLACE: int
    N_PREPEND: int
    N_PRECOMPILED: int
    N_BERT: int
    N_PYTHON: int
    N_NMT: int

class PreKind(IntEnum):
    P_METASPACE: int
    P_SPLIT_STRING: int
    P_SPLIT_PYTHON: int
    P_BYTELEVEL: int
    P_WHITESPACE: int
    P_WHITESPACE_SPLIT: int
    P_PUNCTUATION: int
    P_DIGITS: int
    P_BERT: int
    P_SPLIT_FAMILY: int
    P_SPLIT_SCAN: int

class ScanKind(IntEnum):
    SCAN_DIGITS3: int
    SCAN_KANA_HAN: int
    SCAN_DEEPSEEK: int

class Behavior(IntEnum):
    B_REMOVED: int
    B_ISOLATED: int
    B_MERGED_PREVIOUS: int
    B_MERGED_NEXT: int
    B_CONTIGUOUS: int

class ModelKind(IntEnum):
    M_UNIGRAM: int
    M_BPE: int
    M_WORDPIECE: int
    M_WORDLEVEL: int

class PrependScheme(IntEnum):
    PS_ALWAYS: int
    PS_FIRST: int
    PS_NEVER: int

SCANNER_FAMILIES: dict[str, int]
NORM_DEFAULTS: dict[str, object]
PRE_DEFAULTS: dict[str, object]
MODEL_DEFAULTS: dict[str, object]

class PipelineEncoder:
    @staticmethod
    def build(vocab_size: int, normalizer: list[dict], pre_tokenizer: list[dict], model: dict, added: list[dict],
              split_special_tokens: bool = False, fast_lane: bool = False,
              utf8_ids: bool = False) -> PipelineEncoder: ...
    def encode(self, text: str) -> list[int]: ...
    def encode_numpy(self, text: str) -> np.ndarray: ...
    def encode_flat(self, texts: list[str], a: int, b: int) -> tuple[np.ndarray, np.ndarray]: ...
    def encode_full(self, text: str) -> tuple[list[int], list[int], list[int], list[int]]: ...
    def encode_many(self, texts: list[str], a: int, b: int) -> list[list[int]]: ...
    def encode_rows(self, texts: list[str], a: int, b: int, offsets: bool = True) -> Rows: ...
    def flat_job(self, texts: list[str], bounds: list[int]) -> None: ...
    @property
    def fast_lane(self) -> bool: ...
    @property
    def utf8_ids(self) -> bool: ...
    @property
    def cuts_at_metaspace(self) -> bool: ...
    def inspect(self, text: str, pre_tokenize: bool = True) -> list[tuple[str, list[tuple[int, int]]]]: ...
    def clear_memos(self) -> None: ...

PUNCT_SYMBOL_END: int

def token_blob(vocab: Sequence[str | None]) -> tuple[bytes, np.ndarray]: ...
def punct_symbol_table() -> np.ndarray: ...
