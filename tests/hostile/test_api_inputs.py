"""The Python API refuses values that are not what they claim to be, and accepts str subclasses."""
import enum
import io
import json
import os
import zipfile

import numpy as np
import pytest

import tokkit
from tokkit.errors import TokkitError
from tokkit.inputs.encode import MAX_PADDED_LENGTH
from tokkit.pretraining import ShardDataset, write_shards


class Colour(str, enum.Enum):
    CAT = "the cat"


# ---------------------------------------------------------------------------------------- decode
@pytest.mark.parametrize("ids", ["12", b"12", [1.7], [1, 2.0], [True], np.array([1.5, 2.0]), [[1, 2]],
                                 np.array([[1, 2]])])
def test_decode_refuses_what_is_not_a_list_of_ints(wp, ids):
    with pytest.raises((TypeError, TokkitError)):
        wp.decode(ids)


def test_decode_accepts_every_kind_of_integer(wp):
    ids = wp.encode("the cat sat")
    want = wp.decode(ids)
    assert wp.decode(np.array(ids, dtype=np.int64)) == want
    assert wp.decode(np.array(ids, dtype=np.uint16)) == want
    assert wp.decode([np.int32(i) for i in ids]) == want
    assert wp.decode(tuple(ids)) == want
    assert wp.decode(iter(ids)) == want


# ---------------------------------------------------------------------------------------- encode
@pytest.mark.parametrize("text", [np.str_("the cat sat"), Colour.CAT])
def test_str_subclasses_encode_as_their_text(wp, text):
    plain = str.__str__(text)
    assert wp.encode(text) == wp.encode(plain)
    assert wp.encode_with_offsets(text).ids == wp.encode(plain)
    assert wp.encode_batch([text, plain, text], num_threads=2) == [wp.encode(plain)] * 3
    got = tokkit.encode(wp, [text], [text], padding=None)["input_ids"][0]
    want = tokkit.encode(wp, [plain], [plain], padding=None)["input_ids"][0]
    assert got.tolist() == want.tolist()


def test_numpy_string_arrays_encode(wp):
    arr = np.array(["the cat", "a dog sat"])
    assert wp.encode_batch(arr) == [wp.encode("the cat"), wp.encode("a dog sat")]


@pytest.mark.parametrize("texts", [["the cat", 3], [b"the cat"], ["a", None]])
def test_encode_batch_still_refuses_non_str(wp, texts):
    with pytest.raises(TypeError, match=r"texts\[\d\]"):
        wp.encode_batch(texts)


@pytest.mark.parametrize("threads", [1.5, "2", True, 0, -1])
def test_num_threads_must_be_a_positive_whole_number(wp, threads):
    with pytest.raises(TokkitError, match="num_threads"):
        wp.encode_batch(["the cat"], num_threads=threads)
    with pytest.raises(TokkitError, match="num_threads"):
        tokkit.encode(wp, ["the cat"], num_threads=threads)


def test_num_threads_accepts_numpy_integers(wp):
    assert wp.encode_batch(["the cat", "sat"], num_threads=np.int64(2)) == [wp.encode("the cat"), wp.encode("sat")]


@pytest.mark.parametrize("kwargs", [dict(max_length=10**12, padding="max_length"),
                                    dict(max_length=MAX_PADDED_LENGTH + 1, padding="max_length"),
                                    dict(max_length=16, pad_to_multiple_of=10**12)])
def test_padding_to_an_absurd_width_is_refused(wp, kwargs):
    with pytest.raises(TokkitError, match="MAX_PADDED_LENGTH"):
        tokkit.encode(wp, ["the cat"], **kwargs)


def test_huge_max_length_without_padding_is_fine(wp):
    out = tokkit.encode(wp, ["the cat"], max_length=10**12, padding="longest")
    assert out["input_ids"].shape == (1, len(wp.encode("the cat")) + 2)
    out = tokkit.encode(wp, ["the cat"], max_length=np.int64(8), padding="max_length")
    assert out["input_ids"].shape == (1, 8)


# ---------------------------------------------------------------------------------------- train
@pytest.mark.parametrize("kwargs, name", [
    (dict(workers=0), "workers"), (dict(workers=1.5), "workers"), (dict(vocab_size=300.5), "vocab_size"),
    (dict(vocab_size="300"), "vocab_size"), (dict(vocab_size=True), "vocab_size"),
    (dict(min_frequency=1.5), "min_frequency"), (dict(min_frequency=-1), "min_frequency"),
    (dict(limit_alphabet=0), "limit_alphabet"), (dict(limit_alphabet=2.5), "limit_alphabet"),
    (dict(min_word_count=-2), "min_word_count"), (dict(errors="ignore"), "errors"),
])
def test_train_options_are_checked_before_the_corpus(tmp_path, kwargs, name):
    with pytest.raises(TokkitError, match=name):
        tokkit.train(str(tmp_path / "missing.txt"), **kwargs)


def test_train_accepts_numpy_integers():
    tok = tokkit.train(texts=["the cat sat on the mat"] * 5, vocab_size=np.int64(60), min_frequency=np.int32(1))
    assert tok.vocab_size <= 60


# ---------------------------------------------------------------------------------------- corpus folders
def _deny(monkeypatch, folder):
    """Make listing `folder` fail as it does for a folder without read permission."""
    real = os.scandir

    def scandir(path="."):
        if os.path.abspath(os.fspath(path)) == os.path.abspath(folder):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.fixture
def corpus_folder(tmp_path):
    root = tmp_path / "corpus"
    (root / "locked").mkdir(parents=True)
    (root / "a.txt").write_text("the cat sat on the mat\n" * 20)
    (root / "locked" / "b.txt").write_text("a dog sat on a log\n" * 20)
    return root


def test_unreadable_subfolder_is_an_error_naming_it(corpus_folder, monkeypatch):
    _deny(monkeypatch, corpus_folder / "locked")
    with pytest.raises(TokkitError, match="locked: cannot read this folder"):
        tokkit.train(str(corpus_folder), vocab_size=100)
    from tokkit.pretraining.documents import expand_paths

    with pytest.raises(TokkitError, match="locked: cannot read this folder"):
        expand_paths(corpus_folder)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads folders whatever their permissions")
def test_unreadable_subfolder_for_real(corpus_folder):
    (corpus_folder / "locked").chmod(0)
    try:
        with pytest.raises(TokkitError, match="locked: cannot read this folder"):
            tokkit.train(str(corpus_folder), vocab_size=100)
    finally:
        (corpus_folder / "locked").chmod(0o755)


def test_unreadable_subfolder_in_the_cli(corpus_folder, monkeypatch, cli):
    from .conftest import one_error_line

    _deny(monkeypatch, corpus_folder / "locked")
    code, _, err = cli("train", str(corpus_folder), "-o", str(corpus_folder.parent / "out"))
    assert code == 2 and "locked" in one_error_line(err)
    assert not (corpus_folder.parent / "out").exists()


# ---------------------------------------------------------------------------------------- shards
@pytest.fixture
def shards(tmp_path, wp):
    src = tmp_path / "docs.txt"
    src.write_text("".join(f"the cat sat on the mat number {i}. a dog sat.\n\n" for i in range(40)))
    return write_shards(wp, [src], kind="full", max_length=16, output=tmp_path / "shards", progress=False)


def _shard(folder):
    return folder / json.loads((folder / "index.json").read_text())["shards"][0]["file"]


def _rewrite(path, **changes):
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    for key, value in changes.items():
        if value is None:
            del arrays[key]
        else:
            arrays[key] = value
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _read_all(folder):
    return list(ShardDataset(folder))


def test_intact_shards_read(shards):
    assert len(_read_all(shards)) == len(ShardDataset(shards)) > 0


def test_truncated_shard(shards):
    path = _shard(shards)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TokkitError, match=path.name):
        _read_all(shards)


def test_shard_without_lengths(shards):
    _rewrite(_shard(shards), lengths=None)
    with pytest.raises(TokkitError, match=f"{_shard(shards).name}: shard has no lengths"):
        _read_all(shards)


def test_count_larger_than_the_shard(shards):
    index = json.loads((shards / "index.json").read_text())
    index["shards"][0]["num_examples"] += 5
    index["num_examples"] += 5
    (shards / "index.json").write_text(json.dumps(index))
    with pytest.raises(TokkitError, match="counts .* examples but the shard holds"):
        _read_all(shards)


def test_count_that_disagrees_with_the_total(shards):
    index = json.loads((shards / "index.json").read_text())
    index["num_examples"] += 1
    (shards / "index.json").write_text(json.dumps(index))
    with pytest.raises(TokkitError, match="index.json: num_examples"):
        ShardDataset(shards)


@pytest.mark.parametrize("bad", [10**9, -1, 17])
def test_huge_or_negative_lengths(shards, bad):
    path = _shard(shards)
    with np.load(path) as data:
        lengths = data["lengths"].copy()
    lengths[3] = bad
    _rewrite(path, lengths=lengths)
    with pytest.raises(TokkitError, match=f"{path.name}: example 3 has length"):
        _read_all(shards)


def test_shard_file_outside_the_folder_is_refused(shards):
    index = json.loads((shards / "index.json").read_text())
    index["shards"][0]["file"] = "../elsewhere.npz"
    (shards / "index.json").write_text(json.dumps(index))
    with pytest.raises(TokkitError, match="plain file name"):
        ShardDataset(shards)


def test_shard_holding_a_pickle_is_refused_without_running_it(shards):
    buf = io.BytesIO()
    np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(_shard(shards), "a") as z:
        z.writestr("evil.npy", buf.getvalue())
    with pytest.raises(TokkitError, match="unreadable shard"):
        _read_all(shards)
