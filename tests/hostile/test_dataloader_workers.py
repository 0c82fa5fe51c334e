"""Datasets and the collator pickle, and a torch DataLoader with two workers gives the batches of
a single process under every start method (spawn and forkserver pickle everything they send)."""
import pickle

import numpy as np
import pytest

from tokkit.inputs.masking import MaskSpec
from tokkit.pretraining import MaskingCollator, PretrainingDataset, ShardDataset, write_shards

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def data(tmp_path_factory, wp):
    folder = tmp_path_factory.mktemp("loader")
    src = folder / "docs.txt"
    src.write_text("".join(f"the cat sat on the mat {i}. a dog sat on a log.\nthe quick fox.\n\n"
                           for i in range(30)))
    shards = write_shards(wp, [src], kind="full", max_length=16, output=folder / "shards", progress=False)
    return src, shards


def datasets(wp, data):
    src, shards = data
    return {"text": PretrainingDataset(wp, [src], kind="full", max_length=16, seed=3),
            "nsp": PretrainingDataset(wp, [src], kind="nsp", max_length=16, seed=3),
            "shards": ShardDataset(shards)}


def by_index(loader):
    """{example index: (masked ids, labels)} over all batches, padding cut off."""
    out = {}
    for batch in loader:
        for r, i in enumerate(batch["index"].tolist()):
            keep = batch["attention_mask"][r].bool()
            assert i not in out, "an example came twice"
            out[i] = (batch["input_ids"][r][keep].tolist(), batch["labels"][r][keep].tolist())
    return out


def test_mask_spec_and_collator_pickle(wp):
    spec = MaskSpec(vocab_size=50, mask_token_id=4, special_ids=[0, 1, 2, 3, 4], mlm_probability=0.3)
    back = pickle.loads(pickle.dumps(spec))
    assert back.special.tolist() == spec.special.tolist() and back.t_choose == spec.t_choose
    assert back.n_allowed == spec.n_allowed == 45
    assert not back.special.flags.writeable
    collate = MaskingCollator(wp, seed=5, whole_word=True)
    collate.set_epoch(2)
    clone = pickle.loads(pickle.dumps(collate))
    examples = [{"input_ids": np.array(wp.encode("the cat sat on the mat") * 4), "index": np.int64(k)}
                for k in range(3)]
    a, b = collate(examples), clone(examples)
    assert sorted(a) == sorted(b) and all(np.array_equal(a[k], b[k]) for k in a)


def test_datasets_pickle(wp, data):
    for name, ds in datasets(wp, data).items():
        for obj in (ds, ds.as_torch_dataset()):
            back = pickle.loads(pickle.dumps(obj))
            assert [e["index"] for e in back] == [e["index"] for e in obj], name


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_two_workers_match_one_process(wp, data, method):
    import multiprocessing

    if method == "forkserver":
        # Workers fork from a server that has imported these already: the test stays quick.
        multiprocessing.get_context("forkserver").set_forkserver_preload(["torch", "tokkit.pretraining"])
    collate = MaskingCollator(wp, seed=11, return_tensors="pt", whole_word=True)
    collate.set_epoch(1)
    for name, ds in datasets(wp, data).items():
        if method == "spawn" and name == "nsp":
            continue  # the same class as "text"; each spawned worker costs seconds of imports
        torch_ds = ds.as_torch_dataset()
        want = by_index(torch.utils.data.DataLoader(torch_ds, batch_size=4, collate_fn=collate))
        got = by_index(torch.utils.data.DataLoader(torch_ds, batch_size=4, collate_fn=collate, num_workers=2,
                                                   multiprocessing_context=method))
        assert len(want) > 4, name
        assert got == want, name
