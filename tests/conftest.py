"""Shared fixtures: both merge engines, the shared corpus when it is present."""
import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
HAVE_CORPUS = SHARED.is_dir()
needs_corpus = pytest.mark.skipif(not HAVE_CORPUS, reason="../shared/corpus is absent")


@pytest.fixture(params=["compiled", "python"])
def engine(request):
    """Each engine test runs against the compiled engine and its plain-Python twin."""
    from tokkit.engine import get_engine

    return get_engine(request.param)


@pytest.fixture
def corpus_dir():
    if not HAVE_CORPUS:
        pytest.skip("../shared/corpus is absent")
    return SHARED
