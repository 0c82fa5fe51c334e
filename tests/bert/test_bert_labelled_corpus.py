"""Pretraining batches from a small labelled file: cycled epoch after epoch, each epoch with fresh masks."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers.pretraining import WORDS, train_tokenizer  # noqa: E402

from tokkit.bert import data  # noqa: E402


@pytest.fixture(scope="module")
def tok():
    return train_tokenizer([" ".join(WORDS)] * 20)


@pytest.fixture
def train_jsonl(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"text": " ".join(rng.choice(WORDS, size=10)), "label": i % 2} for i in range(8)]
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def batches(tok, path, *, seed, shuffle, n=24):
    """(epoch, batch) of the first n batches of a stream over `path`, batches of 4 blocks of 16 tokens."""
    ds = data.make_dataset(tok, [path], kind="full", max_length=16, seed=seed, shuffle=shuffle, buffer_size=4)
    stream = data.BatchStream(ds, data.make_collator(tok, seed=seed, mlm_probability=0.3), batch_size=4)
    out = []
    for _ in range(n):
        batch = next(stream)
        out.append((stream.epoch, batch))
    return out


def unmasked(batch):
    """The batch's input ids with the masked positions put back."""
    return torch.where(batch["labels"] == -100, batch["input_ids"], batch["labels"])


def test_a_small_labelled_corpus_is_cycled_with_fresh_masks_each_epoch(tok, train_jsonl):
    got = batches(tok, train_jsonl, seed=3, shuffle=False)
    epochs = [e for e, _ in got]
    assert epochs == sorted(epochs) and epochs[-1] >= 3  # 8 rows are a few batches: the stream cycles them
    first = [b for e, b in got if e == 0][0]
    again = [b for e, b in got if e == 1][0]
    assert torch.equal(unmasked(first), unmasked(again))  # the same text, in file order ...
    assert not torch.equal(first["labels"], again["labels"])  # ... masked afresh


@pytest.mark.parametrize("shuffle", [False, True])
def test_the_same_seed_gives_the_same_masks_and_another_seed_others(tok, train_jsonl, shuffle):
    one = batches(tok, train_jsonl, seed=5, shuffle=shuffle)
    two = batches(tok, train_jsonl, seed=5, shuffle=shuffle)
    assert all(e1 == e2 and torch.equal(b1["input_ids"], b2["input_ids"]) and torch.equal(b1["labels"], b2["labels"])
               for (e1, b1), (e2, b2) in zip(one, two))
    other = batches(tok, train_jsonl, seed=6, shuffle=shuffle)
    assert any(not torch.equal(b1["labels"], b2["labels"]) for (_, b1), (_, b2) in zip(one, other))
