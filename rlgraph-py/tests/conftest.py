"""Shared fixtures: the repository's configs and the `rlgraph` program the Rust test runner
built (RLGRAPH_BIN)."""

import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def configs():
    return ROOT / "configs"


@pytest.fixture
def ppo_config(configs):
    return json.loads((configs / "ppo-cartpole.json").read_text())


@pytest.fixture
def rlgraph_bin():
    path = os.environ.get("RLGRAPH_BIN")
    if not path or not os.path.exists(path):
        pytest.fail("RLGRAPH_BIN must name the rlgraph program (the Rust test runner sets it)")
    return path
