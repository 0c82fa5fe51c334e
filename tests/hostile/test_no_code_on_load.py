"""Loading a tokenizer folder or a shard folder reads data only: nothing in it is ever run."""
import json

import numpy as np
import pytest

import tokkit
from tokkit.errors import TokkitError

MARKER_CODE = "import pathlib; pathlib.Path(__file__).with_name('RAN').write_text('yes')\n"


def test_tokenizer_folder_with_custom_code_loads_as_data(wp_dir, tmp_path):
    folder = tmp_path / "tok"
    folder.mkdir()
    for name in ("tokenizer.json", "vocab.txt", "special_tokens_map.json"):
        (folder / name).write_bytes((wp_dir / name).read_bytes())
    config = json.loads((wp_dir / "tokenizer_config.json").read_text())
    config["auto_map"] = {"AutoTokenizer": ["evil.EvilTokenizer", None]}
    config["tokenizer_class"] = "EvilTokenizer"
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    (folder / "evil.py").write_text(MARKER_CODE + "class EvilTokenizer: pass\n")
    (folder / "__init__.py").write_text(MARKER_CODE)
    tok = tokkit.load(folder)
    assert tok.encode("the cat") == tokkit.load(wp_dir).encode("the cat")
    assert not (folder / "RAN").exists()


class _Boom:
    def __reduce__(self):
        return (exec, ("import pathlib; pathlib.Path('RAN').write_text('yes')",))


def test_a_pickle_in_a_shard_is_refused_and_never_run(tmp_path, wp, monkeypatch):
    from tokkit.pretraining import ShardDataset, write_shards

    monkeypatch.chdir(tmp_path)
    src = tmp_path / "docs.txt"
    src.write_text("the cat sat on the mat. a dog sat.\n\n" * 10)
    out = write_shards(wp, [src], kind="full", max_length=16, output=tmp_path / "shards", progress=False)
    name = json.loads((out / "index.json").read_text())["shards"][0]["file"]
    with np.load(out / name) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["lengths"] = np.array([_Boom()] * len(arrays["lengths"]), dtype=object)
    with open(out / name, "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(TokkitError, match="unreadable shard"):
        list(ShardDataset(out))
    assert not (tmp_path / "RAN").exists()


def test_a_malicious_pytorch_model_bin_is_refused_and_never_run(tmp_path, monkeypatch):
    """A BERT folder whose pytorch_model.bin is a code-running pickle: a TokkitError, and the code never runs."""
    import pickle

    torch = pytest.importorskip("torch")  # noqa: F841 - the bert extra
    from tokkit.bert import BertConfig, BertForPreTraining, save_hf
    from tokkit.bert.hf import load_hf

    folder = tmp_path / "model"
    tok = tokkit.train(texts=["the cat sat on the mat"] * 20, algo="wordpiece", vocab_size=60)
    save_hf(BertForPreTraining(BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_layers=1,
                                          num_heads=2, intermediate_size=32)), tok, folder)
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Boom()))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TokkitError, match="pytorch_model.bin: cannot read checkpoint"):
        load_hf(BertForPreTraining, folder)
    assert not (tmp_path / "RAN").exists()
