"""The one exception type for bad input that the CLI turns into exit code 2."""


class TokkitError(ValueError):
    """Bad input: a missing file, an invalid option, a corrupt vocabulary.

    >>> raise TokkitError("corpus is empty")
    Traceback (most recent call last):
    ...
    tokkit.errors.TokkitError: corpus is empty
    """


class OutOfMemory(TokkitError, MemoryError):
    """Memory ran out in compiled code: the call's partial results are dropped, and the CLI says so
    in one line (exit code 2) rather than aborting. Also a MemoryError, for callers that catch that.

    >>> isinstance(OutOfMemory("out of memory"), MemoryError)
    True
    """

    @classmethod
    def encoding(cls, count: int) -> "OutOfMemory":
        """The error of a compiled encoder that ran out of memory on `count` texts; the call kept nothing.

        >>> str(OutOfMemory.encoding(2))
        'out of memory while encoding 2 text(s) in the compiled encoder; nothing of the call was kept'
        """
        return cls(f"out of memory while encoding {count:,} text(s) in the compiled encoder; "
                   "nothing of the call was kept")
