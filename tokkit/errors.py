"""The one exception type for bad input that the CLI turns into exit code 2."""


class TokkitError(ValueError):
    """Bad input: a missing file, an invalid option, a corrupt vocabulary.

    >>> raise TokkitError("corpus is empty")
    Traceback (most recent call last):
    ...
    tokkit.errors.TokkitError: corpus is empty
    """
