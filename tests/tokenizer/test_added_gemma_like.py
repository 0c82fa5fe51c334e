"""A Gemma-3-sized list of added tokens (6,415: markers, <unusedN> tags, runs of white space, HTML
tags, in a byte-fallback BPE file laid out as the Hub's Gemma 3 file) on text full of near misses:
the ids and offsets equal tokenizers'."""
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer

import tokkit

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_added_tokens import added_contents, gemma_like_json, near_miss_text  # noqa: E402


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    path = tmp_path_factory.mktemp("gemma") / "tokenizer.json"
    path.write_text(gemma_like_json(), encoding="utf-8")
    return tokkit.load(path), Tokenizer.from_file(str(path))


def test_the_file_holds_thousands_of_added_tokens(pair):
    tok, hf = pair
    assert len(added_contents()) == 6415
    contents = {t.content for t in hf.get_added_tokens_decoder().values()}
    assert contents >= set(added_contents())


@pytest.mark.parametrize("seed", range(4))
def test_near_misses_of_added_tokens_encode_as_tokenizers(pair, seed):
    tok, hf = pair
    text = near_miss_text(6000, seed=seed)
    want = hf.encode(text, add_special_tokens=False)
    assert tok.encode(text) == want.ids
    got = tok.encode_with_offsets(text)
    assert got.ids == want.ids
    assert [tuple(o) for o in got.offsets] == [tuple(o) for o in want.offsets]


@pytest.mark.parametrize("text", ["<unused6403>", "<unused6404>", "<unused64040>", "<unused12<unused3>>",
                                  "\n" * 31 + "\n", " " * 63, "<</table>>", "<start_of_image><end_of_imag"])
def test_edges_of_the_list(pair, text):
    tok, hf = pair
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
