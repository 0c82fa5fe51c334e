"""Building the encoder `tokkit.tokenizer.plan.plan(spec)` names, and every route it may name.

The planner decides; this module only builds: the fast Encoder from the plan's FastForm with the
lanes the plan puts around it, or the general path's PipelineEncoder from the components' compiled
descriptions (`native()`), with its lanes as planned. `routes(spec)` builds each route the planner
has for a pipeline, for the differential test.

>>> from tokkit.tokenizer.recipes import wordpiece_spec
>>> build_encoder(wordpiece_spec(["[UNK]", "a"], ["[UNK]"]), False).encode("a A b")
[1, 1, 0]
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from tokkit._native.encode import Encoder
from tokkit._native.pipeline import PipelineEncoder
from tokkit.tokenizer.aligned import code_points
from tokkit.tokenizer.nfc_lane import NfcEncoder
from tokkit.tokenizer.plan import chunk_lane, matched_content, plan, utf8_lane
from tokkit.tokenizer.prefix_space import PrefixSpaceEncoder
from tokkit.tokenizer.spec import AddedToken, Spec


class TokenEncoder(Protocol):
    """What every encoder build_encoder returns offers: the fast Encoder, the PipelineEncoder, and the
    lanes around them. A slice (texts, a, b) means texts[a:b]; offsets count code points."""

    def encode(self, text: str) -> list[int]: ...
    def encode_numpy(self, text: str) -> np.ndarray: ...
    def encode_full(self, text: str) -> tuple[list[int], list[int], list[int], list[int]]:
        """(ids, starts, ends, word ids)."""
    def encode_many(self, texts: list[str], a: int, b: int) -> list[list[int]]: ...
    def encode_flat(self, texts: list[str], a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(uint32 ids, int64 row pointers)."""
    def encode_rows(self, texts: list[str], a: int, b: int, offsets: bool = True):
        """Rows (tokkit._native.rows), or anything whose arrays() gives theirs."""
    def flat_job(self, texts: list[str], bounds: list[int]):
        """A job threads share to encode the slices texts[bounds[i]:bounds[i + 1]], or None."""


def build_encoder(spec: Spec, split_special_tokens: bool) -> TokenEncoder:
    """The encoder plan(spec) describes; read-only once built, so threads share it."""
    the_plan = plan(spec)
    if the_plan.form is None:
        return general_encoder(spec, split_special_tokens, the_plan.chunk_lane, the_plan.utf8_ids)
    encoder = Encoder.build(the_plan.form, split_special_tokens)
    if the_plan.prefix_space:
        encoder = PrefixSpaceEncoder(encoder)
    if the_plan.nfc:
        added = the_plan.form.added
        encoder = NfcEncoder(encoder, lambda: general_encoder(spec, split_special_tokens),
                             [a.content for a in spec.added] + [a.content for a in added if a.normalized],
                             any(a.single_word for a in added))
    return encoder


def routes(spec: Spec, split_special_tokens: bool = False) -> dict[str, TokenEncoder]:
    """Every route the planner may send `spec`'s texts down, by name: the planned encoder, and the
    general path with each of its lanes as planned and off. Each gives the same ids and offsets; a
    differential test holds every one against tokenizers.

    >>> from tokkit.tokenizer.recipes import wordpiece_spec
    >>> sorted(routes(wordpiece_spec(["[UNK]", "a"], ["[UNK]"])))
    ['general', 'planned']
    """
    lanes = {(lane, utf8) for lane in {chunk_lane(spec), False} for utf8 in {utf8_lane(spec)[0], False}}
    out: dict[str, TokenEncoder] = {"planned": build_encoder(spec, split_special_tokens)}
    for lane, utf8 in sorted(lanes):
        name = "general" + ("+chunks" if lane else "") + ("+utf8" if utf8 else "")
        out[name] = general_encoder(spec, split_special_tokens, lane, utf8)
    return out


def general_encoder(spec: Spec, split_special_tokens: bool, lane: bool | None = None,
                    utf8_ids: bool | None = None) -> PipelineEncoder:
    """The general path for any pipeline: its chunk lane as chunk_lane says and its UTF-8 lane as
    utf8_lane says, unless `lane` or `utf8_ids` is given (False turns a lane off)."""
    p = spec.pipeline
    return PipelineEncoder.build(len(spec.vocab), native(p.normalizer), native(p.pre_tokenizer), p.model.native(),
                                 [added_native(a, p.normalizer) for a in spec.added], split_special_tokens,
                                 chunk_lane(spec) if lane is None else lane,
                                 utf8_lane(spec)[0] if utf8_ids is None else utf8_ids)


def native(component) -> list[dict]:
    """A normalizer's or pre-tokenizer's compiled steps (none for none)."""
    return [] if component is None else component.native()


def added_native(token: AddedToken, normalizer) -> dict:
    """An added token as the general path matches it."""
    return {"content": code_points(matched_content(token, normalizer)), "id": token.id,
            "single_word": token.single_word,
            "lstrip": token.lstrip, "rstrip": token.rstrip, "normalized": token.normalized, "special": token.special}
