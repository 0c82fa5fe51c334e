"""Bounds on a model's shape, checked before any tensor is allocated: one home for every reader.

A config.json, a checkpoint's state.json, the command line's shape options and the API all build
their BertConfig or ModernBertConfig through these checks, so a width of 10**12 or a model of
absurd size is one error naming the setting, never an allocation that fails (or the machine's
memory taken).

>>> check_shape({"hidden_size": 32, "num_layers": 2, "num_heads": 2, "intermediate_size": 10**12,
...              "vocab_size": 100, "max_position_embeddings": 64})
Traceback (most recent call last):
ValueError: intermediate_size must be a whole number in [1, 4194304], got 1000000000000
"""
from __future__ import annotations

MAX_LAYERS = 1024            # far above any model of this family (BERT-large has 24)
MAX_WIDTH = 1 << 22          # hidden, heads, feed-forward, vocabulary and positions
MAX_PARAMETERS = 1 << 31     # ~2.1e9 weights (8.6 GB in float32); ModernBERT-large has 3.95e8
MAX_SEED = (1 << 63) - 1     # torch and numpy take it; a seed is stored as int64 in places
# Each count of a model config and its range.
COUNTS = {"num_layers": (1, MAX_LAYERS), "hidden_size": (1, MAX_WIDTH), "num_heads": (1, MAX_WIDTH),
          "intermediate_size": (1, MAX_WIDTH), "vocab_size": (1, MAX_WIDTH),
          "max_position_embeddings": (1, MAX_WIDTH), "type_vocab_size": (1, MAX_WIDTH),
          "global_every": (1, MAX_LAYERS), "local_window": (2, MAX_WIDTH), "pad_token_id": (0, MAX_WIDTH)}


def whole(value) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_shape(config: dict) -> None:
    """ValueError naming the first count of `config` (a model config's fields) out of its range,
    or the parameter count when the model would hold more than MAX_PARAMETERS weights."""
    for name, (low, high) in COUNTS.items():
        if name in config and not (whole(config[name]) and low <= config[name] <= high):
            raise ValueError(f"{name} must be a whole number in [{low}, {high}], got {config[name]!r}")
    pad, vocab = config.get("pad_token_id"), config.get("vocab_size")
    if pad is not None and vocab is not None and pad >= vocab:  # torch's Embedding asserts on it
        raise ValueError(f"pad_token_id {pad} must be below vocab_size {vocab}")
    n = parameter_count(config)
    if n > MAX_PARAMETERS:
        raise ValueError(f"the model would hold {n:,} parameters, more than tokkit builds ({MAX_PARAMETERS:,}): "
                         "lower num_layers, hidden_size, intermediate_size, vocab_size or max_position_embeddings")


def parameter_count(config: dict) -> int:
    """About how many weights a config's model holds (embeddings and layers; norms and biases left out).

    >>> parameter_count({"vocab_size": 10, "hidden_size": 4, "num_layers": 1, "intermediate_size": 8})
    200
    """
    C, L, F = config.get("hidden_size", 0), config.get("num_layers", 0), config.get("intermediate_size", 0)
    rows = config.get("vocab_size", 0) + config.get("type_vocab_size", 0)
    if "type_vocab_size" in config:  # BERT learns its positions; ModernBERT rotates them, and its GeGLU is 3 C F
        rows += config.get("max_position_embeddings", 0)
        ffn = 2 * C * F
    else:
        ffn = 3 * C * F
    return rows * C + L * (4 * C * C + ffn)
