"""Stubs for tokkit._native.counting: word counting for the trainers."""
from typing import Literal

import numpy as np

class WordCounter:
    """Counts pre-tokenized words of UTF-8 text: mode "gpt2", "cl100k", "llama3", "qwen2", "o200k" (line by
    line), "bert" or "whitespace"."""

    def __init__(
        self,
        mode: Literal["gpt2", "cl100k", "llama3", "qwen2", "o200k", "bert", "whitespace"],
        *,
        lowercase: bool = True,
        strip_accents: bool | None = None,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        gpt2_classes: Literal["regex", "tokenizers"] = "tokenizers",
    ) -> None: ...
    def count(self, data: bytes, *, errors: Literal["strict", "replace"] = "strict") -> None: ...
    def update(self, other: WordCounter) -> None: ...
    def add_arrays(self, blob: bytes, offsets: np.ndarray, counts: np.ndarray, total: int = 0) -> None: ...
    def to_arrays(self) -> tuple[bytes, np.ndarray, np.ndarray]: ...
    def __len__(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
