"""tokkit.pretraining.shards: write_shards and ShardDataset (round trip, sharing out, atomic output, bad input)."""
import json

import numpy as np
import pytest
from helpers.pretraining import train_tokenizer, write_corpus

from tokkit.errors import TokkitError
from tokkit.pretraining import MaskingCollator, PretrainingDataset, iter_examples
from tokkit.pretraining.shards import ShardDataset, is_shard_dir, write_shards


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("corpus"), docs=120, seed=2)


@pytest.fixture(scope="module")
def tok(corpus):
    return train_tokenizer(corpus.read_text().splitlines())


@pytest.mark.parametrize("kind", ["full", "nsp"])
def test_round_trip_gives_the_streamed_examples_numbered_in_order(tmp_path, tok, corpus, kind, monkeypatch):
    monkeypatch.setattr("tokkit.pretraining.shards.SHARD_EXAMPLES", 50)  # several shard files
    out = write_shards(tok, [corpus], kind=kind, max_length=40, output=tmp_path / "shards", seed=3,
                       progress=False, shuffle=False)
    assert is_shard_dir(out)
    index = json.loads((out / "index.json").read_text())
    assert index["kind"] == kind and index["max_length"] == 40 and len(index["shards"]) > 2
    assert index["order"] == "file"
    streamed = list(iter_examples(tok, [corpus], kind=kind, max_length=40, seed=3))
    read = list(ShardDataset(out, shuffle=False))
    assert len(read) == len(streamed) == index["num_examples"]
    assert [int(e["index"]) for e in read] == list(range(len(read)))
    for a, b in zip(read, streamed):
        for key in ("input_ids", "token_type_ids", "special_tokens_mask"):
            assert np.array_equal(a[key], b[key])
        if kind == "nsp":
            assert a["next_sentence_label"] == b["next_sentence_label"]
    assert sorted(p.name for p in out.iterdir()) == ["index.json"] + [s["file"] for s in index["shards"]]


def test_ranks_read_balanced_disjoint_contiguous_shares(tmp_path, tok, corpus):
    out = write_shards(tok, [corpus], kind="full", max_length=24, output=tmp_path / "s", progress=False,
                       shuffle=False)
    n = len(ShardDataset(out))
    shares = [[int(e["index"]) for e in ShardDataset(out, rank=r, world_size=3, shuffle=False)] for r in range(3)]
    assert sum(shares, []) == list(range(n))
    assert max(map(len, shares)) - min(map(len, shares)) <= 1
    lengths = [len(e["input_ids"]) for e in ShardDataset(out, shuffle=False)]
    assert all(k == 24 for k in lengths[:-1])  # only the very last block is short


@pytest.mark.parametrize("kind", ["full", "nsp"])
def test_shuffled_writing_holds_epoch_0_of_the_shuffled_stream(tmp_path, tok, corpus, kind, monkeypatch):
    monkeypatch.setattr("tokkit.pretraining.shards.SHARD_EXAMPLES", 50)
    out = write_shards(tok, [corpus], kind=kind, max_length=40, output=tmp_path / "s", seed=3, progress=False)
    assert json.loads((out / "index.json").read_text())["order"] == "shuffled"
    streamed = list(PretrainingDataset(tok, [corpus], kind=kind, max_length=40, seed=3))
    read = list(ShardDataset(out, shuffle=False))  # the folder's own order
    assert len(read) == len(streamed)
    for a, b in zip(read, streamed):
        assert np.array_equal(a["input_ids"], b["input_ids"]) and a["document"] == b["document"]
    documents = [int(e["document"]) for e in read]
    assert len(set(documents[:32])) >= 24  # not one document after another


def test_shuffled_reading_covers_the_folder_once_per_epoch_in_a_new_order(tmp_path, tok, corpus, monkeypatch):
    monkeypatch.setattr("tokkit.pretraining.shards.SHARD_EXAMPLES", 40)
    out = write_shards(tok, [corpus], kind="full", max_length=24, output=tmp_path / "s", progress=False,
                       shuffle=False)
    whole = {int(e["index"]): e["input_ids"].tolist() for e in ShardDataset(out, shuffle=False)}
    orders = []
    for epoch in (0, 1):
        shares = []
        for rank in range(2):
            ds = ShardDataset(out, rank=rank, world_size=2, seed=5, buffer_size=64)
            ds.set_epoch(epoch)
            shares.append([(int(e["index"]), e["input_ids"].tolist()) for e in ds])
        seen = [i for share in shares for i, _ in share]
        assert sorted(seen) == sorted(whole)  # disjoint, complete
        assert all(whole[i] == ids for share in shares for i, ids in share)  # index names the same example
        assert abs(len(shares[0]) - len(shares[1])) <= len(json.loads((out / "index.json").read_text())["shards"])
        orders.append([i for i, _ in shares[0]])
    assert orders[0] != orders[1] and orders[0] != sorted(orders[0])
    again = ShardDataset(out, rank=0, world_size=2, seed=5, buffer_size=64)
    again.set_epoch(1)
    assert [int(e["index"]) for e in again] == orders[1]  # the same seed and epoch: the same order


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_same_mask_for_each_example_with_1_and_3_workers(tmp_path, tok, corpus):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    out = write_shards(tok, [corpus], kind="nsp", max_length=32, output=tmp_path / "s", progress=False)
    results = {}
    for workers in (1, 3):
        collate = MaskingCollator(tok, seed=5, return_tensors="pt")
        collate.set_epoch(1)
        loader = torch.utils.data.DataLoader(ShardDataset(out).as_torch_dataset(), batch_size=16,
                                             num_workers=workers, collate_fn=collate)
        rows = {}
        for batch in loader:
            for r, i in enumerate(batch["index"].tolist()):
                assert i not in rows
                k = int(batch["attention_mask"][r].sum())  # padding depends on the batch, not the mask
                rows[i] = (batch["input_ids"][r, :k].tolist(), batch["labels"][r, :k].tolist(),
                           int(batch["next_sentence_label"][r]))
        results[workers] = rows
    assert results[1] == results[3] and len(results[1]) == len(ShardDataset(out))


def test_output_folder_is_replaced_atomically_and_protected(tmp_path, tok, corpus):
    out = tmp_path / "s"
    write_shards(tok, [corpus], kind="full", max_length=64, output=out, progress=False)
    first = len(ShardDataset(out))
    write_shards(tok, [corpus], kind="full", max_length=24, output=out, progress=False)
    assert len(ShardDataset(out)) > first  # replaced as a whole
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(TokkitError, match="not empty"):
        write_shards(tok, [corpus], kind="full", max_length=24, output=other, progress=False)
    assert (other / "notes.txt").read_text() == "keep me"
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(TokkitError, match="no examples"):
        write_shards(tok, [empty], kind="full", max_length=24, output=tmp_path / "never", progress=False)
    assert not (tmp_path / "never").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt", "mine", "s"]  # no temporary left


def test_bad_shard_folders(tmp_path):
    with pytest.raises(ValueError, match="not a shard folder"):
        ShardDataset(tmp_path)
    (tmp_path / "index.json").write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="not a tokkit shard index"):
        ShardDataset(tmp_path)
    (tmp_path / "index.json").write_text("{broken")
    with pytest.raises(ValueError, match="unreadable"):
        ShardDataset(tmp_path)
    assert not is_shard_dir(tmp_path)


def test_corrupt_shard_file_is_reported(tmp_path, tok, corpus):
    out = write_shards(tok, [corpus], kind="full", max_length=24, output=tmp_path / "s", progress=False)
    (out / "shard-00000.npz").write_bytes(b"not a zip file")
    with pytest.raises(TokkitError, match="unreadable shard"):
        list(ShardDataset(out))


def test_bad_tokenizer_and_kind(tmp_path, corpus):
    no_cls = train_tokenizer(corpus.read_text().splitlines(), specials=["[PAD]", "[UNK]", "[SEP]", "[MASK]"])
    with pytest.raises(ValueError, match=r"\[CLS\]"):
        write_shards(no_cls, [corpus], kind="full", max_length=24, output=tmp_path / "s", progress=False)
    with pytest.raises(ValueError, match="kind"):
        write_shards(no_cls, [corpus], kind="mlm", max_length=24, output=tmp_path / "s", progress=False)


def test_encode_pretraining_cli_writes_shards(tmp_path, corpus):
    import tokkit
    from tokkit.cli import main

    tok_dir = tmp_path / "tok"
    tokkit.train(files=[str(corpus)], algo="wordpiece", vocab_size=300).save(tok_dir)
    out = tmp_path / "shards"
    main(["encode", "-t", str(tok_dir), "--pretraining", "nsp", "--max-length", "32", "-o", str(out), "-q",
          str(corpus)])  # returns on success, exits 2 on bad input
    ds = ShardDataset(out)
    assert ds.kind == "nsp" and ds.max_length == 32 and len(ds) > 50
    labels = [int(e["next_sentence_label"]) for e in ds]
    assert 0.35 < np.mean(labels) < 0.65
