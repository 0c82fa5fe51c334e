"""No command writes over what it reads: an output that is an input, lies inside an input folder or
holds an input is refused with one error line, before anything is loaded, read or written."""
import hashlib
import os
import threading

import pytest

import tokkit
from tokkit._files import check_output_not_input
from tokkit.errors import TokkitError

from .conftest import TEXT, one_error_line


@pytest.fixture
def work(tmp_path, monkeypatch, wp_dir):
    """A folder with a corpus, ids, a copy of the tokenizer, a corpus folder and links."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text(TEXT)
    (tmp_path / "ids.txt").write_text("5 6 7\n8 9\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text(TEXT)
    (tmp_path / "tok").mkdir()
    for p in wp_dir.iterdir():
        (tmp_path / "tok" / p.name).write_bytes(p.read_bytes())
    (tmp_path / "x[1].txt").write_text(TEXT)  # a name that is also a glob pattern (matching "x1.txt")
    os.symlink("in.txt", tmp_path / "link.txt")
    os.link(tmp_path / "in.txt", tmp_path / "hard.txt")
    return tmp_path


def snapshot(root):
    """Every path under root with the hash of its bytes (links as their target)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                out[path] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                out[path] = hashlib.sha256(open(path, "rb").read()).hexdigest()
            else:
                out[path] = "dir"
    return out


@pytest.fixture
def no_work(monkeypatch):
    """Loading a tokenizer, training or benchmarking counts as work: none may start."""
    import tokkit.cli.bench
    import tokkit.cli.train

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the output was checked")

    monkeypatch.setattr(tokkit, "load", refuse)
    monkeypatch.setattr(tokkit.cli.train, "train", refuse)
    monkeypatch.setattr(tokkit.cli.bench, "run_bench", refuse)


OVERLAPS = [
    # encode: the text itself, spelled otherwise, through links, and the tokenizer being read
    (["encode", "-t", "tok", "in.txt", "-o", "in.txt"], "is also an input"),
    (["encode", "-t", "tok", "in.txt", "-o", "./data/../in.txt"], "is also an input"),
    (["encode", "-t", "tok", "in.txt", "-o", "link.txt"], "is also an input"),
    (["encode", "-t", "tok", "in.txt", "-o", "hard.txt"], "is also an input"),
    (["encode", "-t", "tok", "in.txt", "--format", "npz", "-o", "in.txt"], "is also an input"),
    (["encode", "-t", "tok", "x[1].txt", "-o", "x[1].txt"], "is also an input"),
    (["encode", "-t", "tok", "in.txt", "-o", "tok/tokenizer.json"], "inside the input folder tok"),
    (["encode", "-t", "tok", "in.txt", "-o", "tok/ids.txt"], "inside the input folder tok"),
    (["encode", "-t", "tok/tokenizer.json", "in.txt", "-o", "tok/tokenizer.json"], "is also an input"),
    (["encode", "-t", "tok/vocab.txt", "in.txt", "-o", "tok/tokenizer_config.json"], "is also an input"),
    (["encode", "-t", "tok", "data", "-o", "data/ids.txt"], "inside the input folder data"),
    (["encode", "-t", "tok", "in.txt", "--pretraining", "full", "-o", "tok/shards"], "inside the input folder"),
    (["encode", "-t", "tok", "data/a.txt", "--pretraining", "full", "-o", "data"], "holds the input"),
    # decode
    (["decode", "-t", "tok", "ids.txt", "-o", "ids.txt"], "is also an input"),
    (["decode", "-t", "tok", "ids.txt", "-o", "tok/vocab.txt"], "inside the input folder tok"),
    # train: its folder is replaced as a whole
    (["train", "data", "-o", "data/tok"], "inside the input folder data"),
    (["train", "data/a.txt", "-o", "data", "--force"], "holds the input"),
    (["train", "data/*.txt", "-o", "data", "--force"], "holds the input"),
    (["train", "in.txt", "-o", "link.txt"], "is also an input"),
    # stats
    (["stats", "-t", "tok", "in.txt", "-o", "in.txt"], "is also an input"),
    (["stats", "-t", "tok", "in.txt", "-o", "tok/stats.json"], "inside the input folder tok"),
    (["stats", "-t", "tok", "data", "-o", "data/stats.json"], "inside the input folder data"),
    # compare: a folder of results
    (["compare", "tok", "tok", "--corpus", "in.txt", "-o", "tok"], "is also an input"),
    (["compare", "tok", "tok", "--corpus", "in.txt", "-o", "tok/report"], "inside the input folder tok"),
    (["compare", "tok", "tok", "--corpus", "data", "-o", "data/report"], "inside the input folder data"),
    (["compare", "--train", "wordpiece", "data/a.txt", "-o", "data"], "holds the input"),
    (["compare", "--train", "wordpiece", "in.txt", "-o", "in.txt"], "is also an input"),
    # bench: a folder of results
    (["bench", "--corpus", "data", "-o", "data/results"], "inside the input folder data"),
    (["bench", "--corpus", "in.txt", "-o", "in.txt"], "is also an input"),
]


@pytest.mark.parametrize("args, message", OVERLAPS)
def test_an_output_over_an_input_is_refused_before_any_work(work, cli, no_work, args, message):
    before = snapshot(work)
    code, out, err = cli(*args)
    assert code == 2 and out == ""
    assert message in one_error_line(err)
    assert snapshot(work) == before


def test_outputs_apart_from_the_inputs_are_written(work, cli, wp):
    """The check refuses only overlaps: siblings of inputs and fresh folders are fine."""
    code, _, err = cli("encode", "-t", "tok", "in.txt", "-o", "in.ids")
    assert code == 0, err
    assert (work / "in.ids").read_text().splitlines()[0] == " ".join(map(str, wp.encode(TEXT.splitlines()[0])))
    code, _, err = cli("decode", "-t", "tok/vocab.txt", "ids.txt", "-o", "text.txt")
    assert code == 0, err
    code, _, err = cli("stats", "-t", "tok", "data", "-o", "stats.json")
    assert code == 0, err
    code, _, err = cli("train", "data", "-o", "tok2", "--vocab-size", "80", "-q")
    assert code == 0 and (work / "tok2" / "vocab.txt").is_file(), err
    assert (work / "in.txt").read_text() == TEXT


def test_an_output_that_is_a_named_pipe_is_written_in_place(work, cli, wp):
    """A FIFO (like /dev/null or /dev/stdout) is opened and written, never renamed over."""
    fifo = work / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    code, _, err = cli("encode", "-t", "tok", "in.txt", "-o", str(fifo))
    reader.join(timeout=60)
    assert code == 0, err
    assert got and got[0].decode().splitlines()[0] == " ".join(map(str, wp.encode(TEXT.splitlines()[0])))
    assert fifo.is_fifo() and not [p for p in os.listdir(work) if p.startswith(".pipe")]


def test_the_shared_check_names_the_input(tmp_path):
    (tmp_path / "c.txt").write_text("x")
    with pytest.raises(TokkitError, match=r"-o/--output .*c.txt: is also an input"):
        check_output_not_input(tmp_path / "c.txt", [str(tmp_path / "c.txt")])
    with pytest.raises(TokkitError, match="^--save .*: holds the input"):
        check_output_not_input(tmp_path, [str(tmp_path / "c.txt")], option="--save")
    check_output_not_input(tmp_path / "d.txt", [str(tmp_path / "c.txt"), "-", None])
    check_output_not_input(tmp_path / "c.txt.ids", [str(tmp_path / "c.txt")])  # a longer name is not inside
