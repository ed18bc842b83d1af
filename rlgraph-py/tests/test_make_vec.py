"""rlgraph.envs.make_vec: the native CartPole as a Gymnasium VectorEnv, step for step against
Gymnasium's own CartPoleEnv.

The native environments draw their start states from a generator of their own, not NumPy's,
so each start state (every reset and autoreset) is copied into Gymnasium's copy; from there
every observation, reward, flag and final observation must be equal."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import rlgraph


def test_make_vec_matches_gymnasiums_cartpole_step_for_step():
    n = 8
    ours = rlgraph.envs.make_vec("CartPole-v1", n)
    theirs = SyncVectorEnv([lambda: gym.wrappers.TimeLimit(CartPoleEnv(), 500)] * n,
                           autoreset_mode=AutoresetMode.SAME_STEP)
    assert ours.single_observation_space == theirs.single_observation_space
    assert ours.single_action_space == theirs.single_action_space

    def start_theirs_where_ours_start(copies):
        states = ours._native.states()
        for i in copies:
            theirs.envs[i].unwrapped.state = np.array(states[i], dtype=np.float64)

    a, _ = ours.reset(seed=7)
    theirs.reset(seed=7)
    start_theirs_where_ours_start(range(n))
    np.testing.assert_array_equal(a, np.array([e.unwrapped.state for e in theirs.envs], np.float32))
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(3000):
        actions = rng.integers(0, 2, n)
        oa, ra, ta, ua, ia = ours.step(actions)
        ob, rb, tb, ub, ib = theirs.step(actions)
        if "_final_obs" in ib:
            restarted = np.flatnonzero(ib["_final_obs"])
            start_theirs_where_ours_start(restarted)
            ob[restarted] = np.array([theirs.envs[i].unwrapped.state for i in restarted], np.float32)
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta, tb)
        np.testing.assert_array_equal(ua, ub)
        if "_final_obs" in ib:
            np.testing.assert_array_equal(ia["_final_obs"], ib["_final_obs"])
            for i in np.flatnonzero(ib["_final_obs"]):
                np.testing.assert_array_equal(ia["final_obs"][i], ib["final_obs"][i])
                ended += 1
    assert ended > 100, "the run must cross many episode ends"


def test_make_vec_refuses_bad_input_by_name():
    with pytest.raises(ValueError, match="NoSuch-v0"):
        rlgraph.envs.make_vec("NoSuch-v0", 2)
    with pytest.raises(ValueError, match="num_envs"):
        rlgraph.envs.make_vec("CartPole-v1", 0)
    env = rlgraph.envs.make_vec("CartPole-v1", 4)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="one per copy"):
        env.step(np.zeros(3, int))
    with pytest.raises(ValueError, match=r"actions\[1\]"):
        env.step(np.array([0, 2, 0, 0]))


BACKENDS = ["candle", "tch"] if rlgraph._rlgraph.TCH else ["candle"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_copies_step_as_gymnasiums_cartpole(backend):
    """Tensor CartPole copies (f32 on the backend) against Gymnasium's CartPoleEnv (f64): each
    step, Gymnasium's copy starts from our last observation (CartPole's observation is its
    state) and both take the same action; observations agree to 1e-5, rewards and flags
    exactly, and where an episode ended our final observation is Gymnasium's last one."""
    n = 16
    ours = rlgraph.envs.make_vec("CartPole-v1", n, tensor=True, backend=backend, seed=3)
    assert ours.single_observation_space.shape == (4,)
    assert ours.single_action_space == gym.spaces.Discrete(2)
    theirs = [CartPoleEnv() for _ in range(n)]
    for e in theirs:
        e.reset(seed=0)
    obs, _ = ours.reset()
    assert obs.shape == (n, 4) and obs.dtype == np.float32
    elapsed = np.zeros(n, int)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(2000):
        actions = rng.integers(0, 2, n)
        nxt, rewards, terminated, truncated, info = ours.step(actions)
        assert rewards.dtype == np.float64 and terminated.dtype == bool
        elapsed += 1
        for i in range(n):
            theirs[i].unwrapped.state = obs[i].astype(np.float64)
            want, reward, term, _, _ = theirs[i].step(int(actions[i]))
            assert reward == rewards[i]
            assert term == terminated[i], f"copy {i}"
            assert truncated[i] == (not term and elapsed[i] >= 500)
            got = info["final_obs"][i] if terminated[i] or truncated[i] else nxt[i]
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            if terminated[i] or truncated[i]:
                assert info["_final_obs"][i]
                theirs[i].reset()
                elapsed[i] = 0
                ended += 1
            elif "_final_obs" in info:
                assert not info["_final_obs"][i]
        obs = nxt
    assert ended > 500, "the run must cross many episode ends"


def test_tensor_copies_are_seeded_and_refuse_bad_input_by_name():
    a = rlgraph.envs.make_vec("CartPole-v1", 4, tensor=True, seed=5)
    b = rlgraph.envs.make_vec("CartPole-v1", 4, tensor=True, seed=9)
    first, _ = a.reset()
    np.testing.assert_array_equal(b.reset(seed=5)[0], first)
    assert not np.array_equal(b.reset(seed=6)[0], first)
    with pytest.raises(ValueError, match="one per copy"):
        a.step(np.zeros(3, int))
    with pytest.raises(ValueError, match=r"actions\[2\]"):
        a.step(np.array([0, 1, 2, 0]))
    with pytest.raises(ValueError, match="NoSuch-v0"):
        rlgraph.envs.make_vec("NoSuch-v0", 2, tensor=True)
    with pytest.raises(ValueError, match="device"):
        rlgraph.envs.make_vec("CartPole-v1", 2, tensor=True, device="tpu")
    with pytest.raises(ValueError, match="backend"):
        rlgraph.envs.make_vec("CartPole-v1", 2, tensor=True, backend="jax")
    with pytest.raises(ValueError, match="tensor=True"):
        rlgraph.envs.make_vec("CartPole-v1", 2, device="cuda")
    with pytest.raises(ValueError, match=r"reset\(seed="):
        rlgraph.envs.make_vec("CartPole-v1", 2, seed=3)
    pendulum = rlgraph.envs.make_vec("Pendulum-v1", 2, tensor=True)
    pendulum.reset()
    with pytest.raises(ValueError, match=r"actions\[1\]"):
        pendulum.step(np.array([[0.5], [3.0]], np.float32))
    obs, reward, *_ = pendulum.step(np.array([[0.5], [-1.0]], np.float32))
    assert obs.shape == (2, 3) and reward.shape == (2,)


def test_tensor_minatar_boards_are_uint8_and_actions_checked():
    """MinAtar's tensor Breakout through make_vec: the package's boards (10x10x4 of 0/1 bytes)
    at its start (one paddle on the bottom row, one ball, bricks in rows 1 to 3), the minimal
    action set, and an action outside it refused by place."""
    envs = rlgraph.envs.make_vec("MinAtar/Breakout-v1", 3, tensor=True, seed=1)
    assert envs.single_observation_space.shape == (10, 10, 4)
    assert envs.single_action_space == gym.spaces.Discrete(3)
    obs, _ = envs.reset()
    assert obs.shape == (3, 10, 10, 4) and obs.dtype == np.uint8
    assert (obs[:, 9, :, 0].sum(axis=1) == 1).all()
    assert (obs[..., 1].sum(axis=(1, 2)) == 1).all()
    assert (obs[:, 1:4, :, 3] == 1).all() and obs[:, 4:, :, 3].sum() == 0
    obs, reward, terminated, truncated, _ = envs.step(np.array([0, 1, 2]))
    assert obs.shape == (3, 10, 10, 4) and reward.shape == (3,) and not truncated.any()
    with pytest.raises(ValueError, match=r"actions\[1\]"):
        envs.step(np.array([0, 3, 0]))
