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
