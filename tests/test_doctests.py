"""Every docstring example in tokkit runs and shows what it claims, compiled modules included.

pytest's --doctest-modules only sees .py files; the Cython modules' examples are run here too.
"""
import doctest
import importlib
import pkgutil

import pytest

import tokkit

MODULES = sorted(m.name for m in pkgutil.walk_packages(tokkit.__path__, "tokkit.")
                 if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional extra (torch, dask) that is not installed
        if (exc.name or "").split(".")[0] == "tokkit":
            raise  # a broken import inside tokkit is a failure, not a skip
        pytest.skip(f"{name} needs {exc.name}, which is not installed")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
