"""Shared fixtures: both merge engines, the shared corpus when it is present, the oracle tokenizers.

Hypothesis runs derandomized by default, so every run tries the same examples and a failure is
reproducible. `TOKKIT_HYPOTHESIS=explore` loads the exploring profile instead: random examples
(from the seed printed in the header, or `TOKKIT_HYPOTHESIS_SEED`), `TOKKIT_HYPOTHESIS_SCALE`
times (default 4) each test's own number of examples.
"""
import os
import random

import pytest
from helpers.oracles import train_oracles
from helpers.paths import HAVE_CORPUS, SHARED
from hypothesis import settings

EXPLORE = os.environ.get("TOKKIT_HYPOTHESIS", "") == "explore"
settings.register_profile("tokkit", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, database=None, deadline=None, print_blob=True)
settings.load_profile("explore" if EXPLORE else "tokkit")


def _explore_seed():
    """The exploring run's seed: `TOKKIT_HYPOTHESIS_SEED`, or a fresh random one."""
    given = os.environ.get("TOKKIT_HYPOTHESIS_SEED")
    return int(given) if given else random.SystemRandom().randrange(2**32)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Hand the exploring run's seed to hypothesis's plugin, which reads it after this hook."""
    if EXPLORE and config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = str(_explore_seed())


def pytest_report_header(config):
    """Say which hypothesis profile runs, and the seed that reproduces an exploring run."""
    if not EXPLORE:
        return "hypothesis: derandomized (TOKKIT_HYPOTHESIS=explore to explore)"
    seed = config.getoption("hypothesis_seed", None)
    return f"hypothesis: exploring, TOKKIT_HYPOTHESIS_SEED={seed} reproduces this run"


def pytest_collection_modifyitems(items):
    """In an exploring run, multiply each hypothesis test's own number of examples."""
    if not EXPLORE:
        return
    scale = int(os.environ.get("TOKKIT_HYPOTHESIS_SCALE", "4"))
    scaled = set()
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is not None and hasattr(test, "hypothesis") and id(test) not in scaled:
            scaled.add(id(test))
            test._hypothesis_internal_use_settings = settings(own, max_examples=own.max_examples * scale)


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
