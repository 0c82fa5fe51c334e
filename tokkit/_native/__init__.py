"""The compiled kernels, grouped by concern, and the one switch that turns them off.

Each `.pyx` here is one extension module with a `.pyi` stub; `.pxd` files share C-level
declarations between them (`cimport`). Python code outside this package never sees C types.

>>> from tokkit._native import pure_python_requested
>>> isinstance(pure_python_requested(), bool)
True
"""
import os

# Token ids are int32 in the compiled kernels (and uint32 in the arrays they return), so a
# vocabulary holds at most this many ids; the trainers, the loaders' checks and masking share it.
MAX_VOCAB_SIZE = 2**31 - 1


def pure_python_requested() -> bool:
    """True when TOKKIT_PURE_PYTHON=1 asks for the plain-Python twins instead of the kernels."""
    return os.environ.get("TOKKIT_PURE_PYTHON") == "1"
