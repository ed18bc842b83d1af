"""The layouts beyond one thread, from Python: GA3C's threads and device-resident copies
through `layout=`, Ape-X over gRPC through `rlgraph.launch`, and the program itself."""

import json
import subprocess
import sys

import numpy as np
import pytest

import rlgraph

STATES = np.random.default_rng(0).normal(0, 0.05, (16, 4)).astype(np.float32)


def test_ga3c_trains_and_the_agent_acts_with_what_it_learned(configs, tmp_path):
    agent = rlgraph.Agent(configs / "ppo-cartpole.json", env="CartPole-v1", layout="ga3c", num_envs=4, seed=0)
    before = agent.get_weights()
    summary = agent.learn(3000, progress_bar=False)
    # GA3C ran, with one agent thread per copy asked for.
    assert summary["executor"] == "ga3c" and summary["ga3c"]["final_counts"]["agents"] == 4
    assert summary["timesteps_executed"] >= 3000 and agent.num_timesteps == summary["timesteps_executed"]
    # The agent here acts with the trained weights, not the ones it was made with.
    after = agent.get_weights()
    assert before.keys() == after.keys()
    assert any(not np.array_equal(before[k], after[k]) for k in before)
    agent.save(tmp_path / "ga3c")
    again = rlgraph.Agent.load(tmp_path / "ga3c")
    assert again.layout == "ga3c"
    assert all(np.array_equal(again.get_weights()[k], after[k]) for k in after)
    assert (again.predict(STATES)[0] == agent.predict(STATES)[0]).all()


def test_tensor_copies_train_ppo(configs):
    agent = rlgraph.Agent(configs / "ppo-cartpole-tensor.json", env="CartPole-v1", layout="tensor", num_envs=64)
    summary = agent.learn(20_000, progress_bar=False)
    assert summary["tensor_envs"] == 64 and summary["timesteps_executed"] >= 20_000
    returns = rlgraph.evaluate(agent, "CartPole-v1", episodes=3)["returns"]
    assert all(r >= 1 for r in returns)


def test_launch_runs_apex_with_two_actor_processes_and_its_record_replays(configs, tmp_path):
    summary = rlgraph.launch(configs / "apex-cartpole.json", "CartPole-v1", actors=2, replay_shards=1,
                             timesteps=3000, out=tmp_path / "apex", record=tmp_path / "log")
    assert summary["timesteps_executed"] >= 3000
    # The learner's input log replays in this process to the live checkpoint's bytes.
    replayed = rlgraph.replay(tmp_path / "log", tmp_path / "again", check=True)
    assert replayed["updates"] == summary["updates"] and replayed["publications_checked"] > 0
    live = (tmp_path / "apex" / "checkpoint.safetensors").read_bytes()
    assert (tmp_path / "again" / "checkpoint.safetensors").read_bytes() == live
    with pytest.raises(ValueError, match="no learner log here"):
        rlgraph.replay(tmp_path / "apex", tmp_path / "nothing")


def test_the_program_runs_in_the_package(configs):
    out = rlgraph.cli(["env", "CartPole-v1", "--seed", "3", "--actions", "1,1,0"])
    # One JSON line per transition: the reset and three steps.
    assert len([json.loads(line) for line in out.splitlines()]) == 4
    with pytest.raises(ValueError, match="NoSuch-v0"):
        rlgraph.cli(["env", "NoSuch-v0"])
    child = subprocess.run([sys.executable, "-m", "rlgraph", "space", '{"type": "int-box", "high": 3}', "--seed", "1"],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 0 and json.loads(child.stdout) is not None, child.stderr
    refused = subprocess.run([sys.executable, "-m", "rlgraph", "train"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--env" in refused.stderr


def test_a_layout_needs_an_environment_id(configs):
    from corridor import Corridor

    with pytest.raises(TypeError, match="layout='ga3c'"):
        rlgraph.Agent(configs / "ppo-cartpole.json", env=Corridor, layout="ga3c")
    with pytest.raises(ValueError, match="layout"):
        rlgraph.Agent(configs / "ppo-cartpole.json", env="CartPole-v1", layout="mpi")
