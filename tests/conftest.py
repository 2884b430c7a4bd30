"""Shared fixtures: where the shared traces are, and how tests that need them skip or fail."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def shared_path(*parts: str) -> pathlib.Path:
    """Path under ../shared; skips the test when it is missing, or fails it when
    IOSTACK_REQUIRE_SHARED=1."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        msg = f"{p} is missing (../shared is not beside the project)"
        if os.environ.get("IOSTACK_REQUIRE_SHARED") == "1":
            pytest.fail(msg + " and IOSTACK_REQUIRE_SHARED=1")
        pytest.skip(msg)
    return p


@pytest.fixture
def shared():
    return shared_path
