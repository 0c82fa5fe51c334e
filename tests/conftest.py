"""Shared fixtures: both merge engines, the shared corpus when it is present."""
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
HAVE_CORPUS = SHARED.is_dir()
needs_corpus = pytest.mark.skipif(not HAVE_CORPUS, reason="../shared/corpus is absent")


@pytest.fixture(params=["compiled", "python"])
def engine(request):
    """Each engine test runs against the compiled engine and its plain-Python twin."""
    from tokkit.train.engine import COMPILED, get_engine

    if request.param == "compiled" and not COMPILED:
        pytest.skip("the compiled engine is not built (TOKKIT_PURE_PYTHON run or no compiler)")
    return get_engine(request.param)


@pytest.fixture
def corpus_dir():
    if not HAVE_CORPUS:
        pytest.skip("../shared/corpus is absent")
    return SHARED


def run_cli(args) -> int:
    """tokkit's CLI in-process; its exit code (main returns normally on success)."""
    from tokkit.cli import main

    try:
        main(args)
    except SystemExit as exc:
        return exc.code or 0
    return 0
