"""rlgraph.Agent: learning, acting, saving and loading, and bad input refused by name."""

import itertools
import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest

import rlgraph
from corridor import Corridor

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"

CORRIDOR_PPO = {
    "type": "ppo",
    "discount": 0.9,
    "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
    "value_function_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
    "update_spec": {"update_interval": 16, "batch_size": 64, "num_iterations": 4, "sample_size": 32},
    "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
}


def test_ppo_learns_a_python_class_registered_nowhere():
    agent = rlgraph.Agent(CORRIDOR_PPO, env=Corridor, num_envs=4, seed=0)
    agent.learn(3000, progress_bar=False)
    # The greedy policy walks straight to the end: 4 steps right, a return of 1.
    result = rlgraph.evaluate(agent, Corridor, episodes=3)
    assert result["returns"] == [1.0, 1.0, 1.0]
    actions, _ = agent.predict(np.array([[0.0], [0.25], [0.5], [0.75]], np.float32))
    assert actions.tolist() == [1, 1, 1, 1]
    # The spaces read back as the environment declared them.
    assert agent.observation_space == Corridor().observation_space
    assert agent.action_space == Corridor().action_space


def test_ppo_solves_cartpole_on_gymnasiums_own_class(configs):
    from gymnasium.envs.classic_control import CartPoleEnv

    # The class itself, as gymnasium.make would wrap it: 500 steps at most.
    agent = rlgraph.Agent(configs / "ppo-cartpole.json", env=lambda: gym.wrappers.TimeLimit(CartPoleEnv(), 500), seed=1)
    summary = agent.learn(100_000, eval_every=2500, eval_episodes=20, target_return=475, progress_bar=False)
    assert summary["solved_at_timestep"] is not None, summary["evaluations"]
    assert summary["evaluations"][-1]["mean_return"] >= 475


def test_dqn_solves_cartpole_on_the_native_id(configs):
    agent = rlgraph.Agent(configs / "dqn-cartpole.json", env="CartPole-v1", seed=0)
    summary = agent.learn(100_000, eval_every=2500, eval_episodes=20, target_return=475, progress_bar=False)
    assert summary["solved_at_timestep"] is not None, summary["evaluations"]
    assert rlgraph.evaluate(agent, episodes=5)["mean_return"] >= 400


def test_td3_learns_pendulum_by_its_type_name():
    # TD3 ships registered (as a user's own algorithm is), so Python builds it by type.
    config = {
        "type": "td3",
        "discount": 0.98,
        "network_spec": [{"type": "dense", "units": 64, "activation": "relu"}] * 2,
        "value_function_spec": [{"type": "dense", "units": 64, "activation": "relu"}] * 2,
        "memory_spec": {"type": "replay", "capacity": 20000},
        "update_spec": {"steps_before_update": 1000, "batch_size": 128},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001},
    }
    agent = rlgraph.Agent(config, env="Pendulum-v1", seed=0)
    agent.learn(10_000, progress_bar=False)
    # A random policy scores about -1,200 a Pendulum episode; seeds 0 to 3 of this config
    # scored -166 to -196 greedily at 10,000 steps (rlgraph train, 2026-11-29).
    assert rlgraph.evaluate(agent, episodes=10)["mean_return"] >= -400


def test_predict_takes_one_observation_or_a_batch(configs):
    agent = rlgraph.Agent(configs / "dqn-cartpole.json", env="CartPole-v1")
    one, state = agent.predict(np.zeros(4, np.float32))
    assert one.shape == () and one.dtype == np.int32 and state is None
    batch, _ = agent.predict([[0.0] * 4] * 3)
    assert batch.shape == (3,) and set(batch.tolist()) <= {0, 1}
    assert batch[0] == one


def test_a_recurrent_policy_carries_memory_between_calls_and_episode_start_clears_it(configs):
    agent = rlgraph.Agent(configs / "ppo-lstm-cartpole-novel.json", env="CartPoleNoVel-v1", seed=4)
    agent.learn(5000, progress_bar=False)
    rng = np.random.default_rng(5)
    before, now = (rng.normal(0, 0.5, (64, 2)).astype(np.float32) for _ in range(2))
    starting = np.ones(64, bool)
    from_zero, _ = agent.predict(now, episode_start=starting)
    agent.predict(before)
    carried, _ = agent.predict(now)
    # The memory of the earlier step changes some of the 64 greedy actions...
    assert (carried != from_zero).any()
    # ...and rows that start an episode act from zero memory again.
    restarted, _ = agent.predict(now, episode_start=starting)
    assert (restarted == from_zero).all()
    with pytest.raises(ValueError, match="episode_start"):
        agent.predict(now, episode_start=[True])


def test_save_load_resume_with_the_cli_continues_the_run_exactly(tmp_path, rlgraph_bin, ppo_config):
    config = tmp_path / "ppo.json"
    config.write_text(json.dumps(ppo_config))
    # Straight: 4,000 steps from Python.
    straight = rlgraph.Agent(config, env="CartPole-v1", seed=3)
    whole = straight.learn(4000, progress_bar=False)
    # The same run of 4,000 steps, stopped at 2,000 by its callback in Python, saved, and
    # resumed to 4,000 by the program.
    first = rlgraph.Agent(config, env="CartPole-v1", seed=3)
    first.learn(4000, callback=lambda local: local["done"] < 2000, progress_bar=False)
    assert first.num_timesteps == 2000
    first.save(tmp_path / "half")
    out = subprocess.run(
        [rlgraph_bin, "train", str(tmp_path / "half" / "config.json"), "--env", "CartPole-v1", "--seed", "3",
         "--timesteps", "4000", "--resume", str(tmp_path / "half"), "--out", str(tmp_path / "cli")],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["resumed_at_timestep"] == 2000
    # Every episode of the resumed run ended with the return of the straight run's.
    rows = [r.split(",") for r in (tmp_path / "cli" / "episodes.csv").read_text().split()[1:]]
    assert [float(r[2]) for r in rows] == whole["episode_rewards"]
    # Each ended at the step the straight run's episodes add up to (CartPole pays 1 a step).
    ends = list(itertools.accumulate(int(x) for x in whole["episode_rewards"]))
    assert [int(r[1]) for r in rows] == ends and whole["episode_timesteps"] == ends
    # And back: Python loads the program's run and acts as the straight agent does.
    loaded = rlgraph.Agent.load(tmp_path / "cli")
    assert loaded.num_timesteps == 4000
    states = np.random.default_rng(0).normal(0, 0.1, (32, 4)).astype(np.float32)
    assert (loaded.predict(states)[0] == straight.predict(states)[0]).all()


def test_a_run_saved_by_python_is_evaluated_by_the_cli(tmp_path, rlgraph_bin, configs):
    agent = rlgraph.Agent(configs / "ppo-cartpole.json", env="CartPole-v1", seed=2)
    agent.learn(3000, progress_bar=False)
    agent.save(tmp_path / "run")
    out = subprocess.run([rlgraph_bin, "evaluate", str(tmp_path / "run"), "--env", "CartPole-v1", "--episodes", "3"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["returns"] == rlgraph.evaluate(agent, episodes=3)["returns"]


def test_an_exception_inside_step_comes_back_as_itself_and_the_agent_stays_usable():
    env = Corridor(fail_at_step=50)
    agent = rlgraph.Agent(CORRIDOR_PPO, env=env, seed=0)
    with pytest.raises(RuntimeError, match="corridor broke at step 50") as raised:
        agent.learn(500, progress_bar=False)
    # The traceback reaches into the user's own file.
    assert any("corridor.py" in str(entry.path) for entry in raised.traceback)
    assert agent.predict(np.array([0.5], np.float32))[0] in (0, 1)
    # The environment steps again, and so does the run.
    agent.learn(500, progress_bar=False)
    assert agent.num_timesteps >= 500


def test_a_callback_returning_false_stops_the_run(configs):
    agent = rlgraph.Agent(configs / "ppo-cartpole.json", env="CartPole-v1")
    calls = []

    def callback(local):
        calls.append(local["done"])
        return len(calls) < 3

    agent.learn(10_000, callback=callback, callback_every=500, progress_bar=False)
    assert calls == [500, 1000, 1500] and agent.num_timesteps == 1500


def test_ctrl_c_ends_learn_and_leaves_the_checkpoint(tmp_path, configs):
    # Ctrl-C raises KeyboardInterrupt as in an interactive Python, whose SIGINT handler a
    # Python started by a process that ignores SIGINT (a shell's background job, CI) lacks.
    script = textwrap.dedent(f"""
        import signal, sys, rlgraph
        signal.signal(signal.SIGINT, signal.default_int_handler)
        agent = rlgraph.Agent({str(configs / 'ppo-cartpole.json')!r}, env="CartPole-v1")
        def started(local):
            if local["done"] == 1000:
                print("started", flush=True)
        agent.learn(10**9, callback=started, progress_bar=False, checkpoint_dir={str(tmp_path / 'run')!r})
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=60)
    finally:
        child.kill()
    assert "KeyboardInterrupt" in stderr and "panicked" not in stderr, stderr
    resumed = rlgraph.Agent.load(tmp_path / "run")
    assert resumed.num_timesteps >= 1000


def test_export_onnx_writes_a_model_onnxruntime_runs(tmp_path, configs):
    import onnxruntime

    agent = rlgraph.Agent(configs / "dqn-cartpole.json", env="CartPole-v1")
    agent.export_onnx(tmp_path / "model.onnx")
    session = onnxruntime.InferenceSession(str(tmp_path / "model.onnx"))
    states = np.random.default_rng(1).normal(0, 0.1, (8, 4)).astype(np.float32)
    outputs = session.run(None, {session.get_inputs()[0].name: states})
    greedy = np.asarray(outputs[0]).reshape(8, -1)
    actions = greedy.argmax(axis=1) if greedy.shape[1] == 2 else greedy[:, 0]
    assert (actions == agent.predict(states)[0]).all()


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda c: rlgraph.Agent(dict(c, update_spec=dict(c["update_spec"], batch_sizee=3)), "CartPole-v1"),
         ValueError, "config.update_spec.batch_sizee"),
        (lambda c: rlgraph.Agent(dict(c, type="ppoo"), "CartPole-v1"), ValueError, "config.type"),
        (lambda c: rlgraph.Agent(c, env=3), TypeError, "env: expected an environment id"),
        (lambda c: rlgraph.Agent(c, env=lambda: "CartPole"), TypeError, "made a str, not a gymnasium.Env"),
        (lambda c: rlgraph.Agent(c, env=gym.vector.AsyncVectorEnv([Corridor])), TypeError, "SyncVectorEnv"),
        # Known only once the environment resets: refused at the first step of learning.
        (lambda c: rlgraph.Agent(c, env=Corridor(obs_shape=(2,))).learn(10), ValueError, "observation_space"),
        (lambda c: rlgraph.Agent(CONFIGS / "dqn-cartpole.json", env="Pendulum-v1"), ValueError, "action_space"),
        (lambda c: rlgraph.Agent(c, env="NoSuch-v0"), ValueError, "NoSuch-v0"),
        (lambda c: rlgraph.Agent(c, env=Corridor(), num_envs=2), ValueError, "num_envs"),
        (lambda c: rlgraph.Agent(c, "CartPole-v1", backend="jax"), ValueError, "backend"),
        (lambda c: rlgraph.Agent(c, "CartPole-v1").learn(0), ValueError, "total_timesteps"),
        (lambda c: rlgraph.Agent(c, "CartPole-v1").predict(np.zeros(5)), ValueError, "observation"),
        (lambda c: rlgraph.Agent(c, "CartPole-v1").predict(np.array(["a"] * 4)), TypeError, "float32"),
        (lambda c: rlgraph.Agent(c, Corridor()).learn(100, eval_every=10), ValueError, "eval_every"),
        (lambda c: rlgraph.Agent.load("/nonexistent/run"), ValueError, "summary.json"),
    ],
)
def test_bad_input_is_refused_by_name(ppo_config, make, error, words):
    with pytest.raises(error, match=None) as raised:
        make(ppo_config)
    assert words in str(raised.value)
    assert "panicked" not in str(raised.value)


def test_an_unsupported_space_is_refused_by_name(ppo_config):
    class Texty(Corridor):
        def __init__(self):
            super().__init__()
            self.observation_space = gym.spaces.Text(5)

    with pytest.raises(ValueError, match="observation_space"):
        rlgraph.Agent(ppo_config, env=Texty())
