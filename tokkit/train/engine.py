"""Pick the merge engine: the compiled `tokkit._native.merge` kernel, or its plain-Python twin.

Set TOKKIT_PURE_PYTHON=1 to run without the extension (slow; the tests use it as the oracle).

>>> from tokkit.train.engine import get_engine
>>> get_engine("python").__name__
'tokkit.train.merge_py'
>>> get_engine("fast")
Traceback (most recent call last):
ValueError: unknown engine 'fast'; expected 'compiled' or 'python'
"""
import warnings

try:
    from tokkit._native import merge as _compiled
except ImportError as _exc:  # an sdist without a compiler, or a checkout that was never built
    _compiled = None
    _IMPORT_ERROR = _exc
else:
    _IMPORT_ERROR = None

from tokkit._native import pure_python_requested
from tokkit.train import merge_py as _merge_py

COMPILED = _compiled is not None

if not COMPILED and not pure_python_requested():
    warnings.warn(
        "tokkit: the compiled engine (tokkit._native.merge) is missing, so training runs in pure "
        f"Python and is slow ({_IMPORT_ERROR}). Reinstall with a C++ compiler: pip install -e .",
        RuntimeWarning,
        stacklevel=2,
    )


def get_engine(name=None):
    """Return the engine module: "compiled", "python", or None for the default."""
    if name is None:
        name = "python" if (pure_python_requested() or not COMPILED) else "compiled"
    if name == "python":
        return _merge_py
    if name == "compiled":
        if _compiled is None:
            raise ImportError(f"tokkit's compiled engine is not built: {_IMPORT_ERROR}")
        return _compiled
    raise ValueError(f"unknown engine {name!r}; expected 'compiled' or 'python'")


def engine_name():
    """The name of the engine used by default: "compiled" or "python"."""
    return "compiled" if get_engine() is _compiled else "python"
