"""Shared fixtures: both merge engines, the shared corpus when it is present, the oracle tokenizers."""
import pytest
from helpers.oracles import train_oracles
from helpers.paths import HAVE_CORPUS, SHARED


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


@pytest.fixture(scope="session")
def oracle_paths(tmp_path_factory):
    """Tokenizers trained by `tokenizers` itself (one of each kind), trained once per test run."""
    return train_oracles(tmp_path_factory.mktemp("oracles"))
