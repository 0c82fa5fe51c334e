"""The hypothesis profile conftest.py loads: derandomized by default, so every run tries the same examples."""
import os

import pytest
from hypothesis import settings

EXPLORING = os.environ.get("TOKKIT_HYPOTHESIS", "") == "explore"


@pytest.mark.skipif(EXPLORING, reason="the exploring profile is randomized on purpose")
def test_the_default_run_is_derandomized_without_a_database():
    assert settings.default.derandomize and settings.default.database is None
    own = settings(max_examples=5, deadline=None)  # as a test file's own settings, made after conftest.py
    assert own.derandomize and own.database is None
