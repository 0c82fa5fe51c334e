"""The pre-tokenization patterns of today's byte-level tokenizers, by name (one home for each).

Spelled exactly as the Hub's tokenizer.json files spell them, so a file's Split pattern is
recognised by its text. `tokkit train --algo bytelevel --pattern NAME` takes the names.

>>> sorted(NAMED)
['cl100k', 'gpt2', 'llama3', 'o200k', 'qwen2']
>>> NAMED["llama3"] == CL100K_PATTERN
True
"""
from __future__ import annotations

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# cl100k (GPT-4), which Llama 3 took over
CL100K_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# Qwen2: cl100k with digits one by one
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")
_CASED = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
# o200k (GPT-4o): case-aware letter runs, "/" kept with the newlines after punctuation
O200K_PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" + _CASED,
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*" + _CASED,
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"])

NAMED = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN, "llama3": CL100K_PATTERN, "qwen2": QWEN2_PATTERN,
         "o200k": O200K_PATTERN}
