"""`tokkit encode` reads its input a bounded block at a time, with a maximum line length."""
import io
import sys

import pytest

from tokkit.cli.encode import MAX_LINE_BYTES

from .conftest import one_error_line


class Endless(io.RawIOBase):
    """A stream of `byte` that never ends and never holds a newline; counts what was read."""

    def __init__(self, byte=b"a"):
        self.byte = byte
        self.served = 0

    def readable(self):
        return True

    def readinto(self, buf):
        n = len(buf)
        buf[:n] = self.byte * n
        self.served += n
        if self.served > 1 << 26:
            raise AssertionError("read far past the line limit")
        return n


class Stdin:
    def __init__(self, raw):
        self.buffer = io.BufferedReader(raw)


def test_the_default_limit_is_one_gib_and_documented(cli):
    assert MAX_LINE_BYTES == 1 << 30
    code, out, _ = cli("encode", "--help")
    assert code == 0 and "--max-line-bytes" in out and "1073741824" in out


def test_an_endless_line_on_stdin_is_an_error_after_the_limit(cli, wp_dir, tmp_path, monkeypatch):
    raw = Endless()
    monkeypatch.setattr(sys, "stdin", Stdin(raw))
    out = tmp_path / "ids.txt"
    code, _, err = cli("encode", "-t", str(wp_dir), "--max-line-bytes", "100000", "-o", str(out))
    assert code == 2 and "<stdin>:1: line is longer than 100,000 bytes" in one_error_line(err)
    assert raw.served < 1 << 20  # a bounded read, not the whole stream
    assert list(tmp_path.iterdir()) == []


def test_lines_up_to_the_limit_pass(cli, wp_dir, wp, monkeypatch):
    data = b"the cat sat\n" + b"a" * 20 + b"\nthe dog"
    monkeypatch.setattr(sys, "stdin", Stdin(io.BytesIO(data)))
    code, out, err = cli("encode", "-t", str(wp_dir), "--max-line-bytes", "20")
    assert code == 0, err
    assert out.splitlines() == [" ".join(map(str, wp.encode(t))) for t in ("the cat sat", "a" * 20, "the dog")]


@pytest.mark.parametrize("command, first, long", [("encode", b"the cat", b"sat "), ("decode", b"1 2", b"33 ")])
def test_a_long_line_in_a_file_names_it(cli, wp_dir, tmp_path, command, first, long):
    src = tmp_path / "in.txt"
    src.write_bytes(first + b"\n" + long * 20 + b"\n")
    code, _, err = cli(command, "-t", str(wp_dir), str(src), "--max-line-bytes", "50")
    assert code == 2 and "in.txt:2: line is longer than 50 bytes" in one_error_line(err)
    code, out, err = cli(command, "-t", str(wp_dir), str(src), "--max-line-bytes", "80")
    assert code == 0 and len(out.splitlines()) == 2, err


def test_max_line_bytes_does_not_apply_to_shards(cli, wp_dir, tmp_path):
    code, _, err = cli("encode", "-t", str(wp_dir), "x.txt", "--pretraining", "full", "-o", str(tmp_path / "s"),
                       "--max-line-bytes", "50")
    assert code == 2 and "--max-line-bytes" in one_error_line(err)
