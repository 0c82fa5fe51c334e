"""Standard streams of the `tokkit` command: a failed write ends the run with one clear outcome.

A reader that goes away (`tokkit encode ... | head -1`) ends the run silently with exit code 141,
as the SIGPIPE that stops other Unix tools does. Any other failed write to stdout (a full disk
with `> /dev/full`, a stdout closed with `>&-`) is a TokkitError, so one `tokkit: error:` line and
exit code 2. A closed stdin is reported where it is read (`tokkit._files.stdin_bytes`). A closed
stderr swallows messages and progress bars; the exit code still tells what happened.

>>> with guarded_streams():  # in a test, sys.stdout is not file descriptor 1 and stays as it is
...     print("ids")
ids
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Iterator

from tokkit.errors import TokkitError

PIPE_CLOSED_EXIT = 141  # 128 + SIGPIPE, the status a shell reports for a tool its pipe cut off


class PipeClosed(Exception):
    """The reader of standard output went away: the run stops without a word."""


class _GuardedFd1(io.FileIO):
    """File descriptor 1 under the CLI's sys.stdout: the first failed write raises PipeClosed or a
    TokkitError, and later writes are dropped, so the flush at exit cannot fail a second time."""

    failed = False
    closed_at_start = False

    def write(self, data) -> int:
        if self.failed:
            return len(data)
        try:
            if self.closed_at_start:
                raise OSError(9, "standard output is closed")
            return super().write(data)
        except BrokenPipeError:
            self.failed = True
            raise PipeClosed() from None
        except OSError as exc:
            self.failed = True
            if self.closed_at_start:
                raise TokkitError("cannot write to standard output: it is closed") from None
            raise TokkitError(f"cannot write to standard output ({exc.strerror or exc})") from None


class _QuietFd2(io.FileIO):
    """File descriptor 2 under the CLI's sys.stderr: a failed write is dropped. With stderr closed
    (Python may then hold another file, opened read-only, at its number) or full, messages are
    lost, and the exit code still says how the run ended."""

    def write(self, data) -> int:
        try:
            return super().write(data)
        except OSError:
            return len(data)


def reserve_closed_descriptors() -> None:
    """Point a closed stdin, stdout or stderr at /dev/null, so no file tokkit opens later takes its
    number (output meant for a file would otherwise go wherever fd 1 is written). Python has already
    set sys.stdin / sys.stdout to None for them, so reading or writing them is still an error."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one


@contextlib.contextmanager
def guarded_streams() -> Iterator[None]:
    """While the command runs, sys.stdout writes through `_GuardedFd1` (flushed at the end, inside
    the block, so a full disk is reported like any other error), and sys.stderr through `_QuietFd2`."""
    with _quiet_stderr(), _guarded_stdout():
        yield


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """sys.stderr through `_QuietFd2`: a closed or full stderr drops messages instead of raising."""
    original = sys.stderr
    if original is not None and _fileno(original) != 2:
        yield  # not the process's own stderr (a test's capture): leave it alone
        return
    if original is not None:
        original.flush()
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(_QuietFd2(2, "wb", closefd=False)),
                                  encoding=getattr(original, "encoding", None) or "utf-8",
                                  errors="backslashreplace", line_buffering=True)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        sys.stderr = original


@contextlib.contextmanager
def _guarded_stdout() -> Iterator[None]:
    original = sys.stdout
    if original is not None and _fileno(original) != 1:
        yield  # not the process's own stdout (a test's capture): leave it alone
        return
    raw = _GuardedFd1(1, "wb", closefd=False)
    raw.closed_at_start = original is None
    stream = io.TextIOWrapper(io.BufferedWriter(raw), encoding=getattr(original, "encoding", None) or "utf-8",
                              errors=getattr(original, "errors", None) or "strict",
                              line_buffering=bool(getattr(original, "line_buffering", False)))
    if original is not None:
        original.flush()
    sys.stdout = stream
    try:
        yield
        stream.flush()
    finally:
        with contextlib.suppress(Exception):
            stream.flush()  # after a failure the raw layer drops what is left
        sys.stdout = original


def _fileno(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None
