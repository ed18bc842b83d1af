# The Python side of rlgraph-envs' Gymnasium bridge: one Gymnasium environment per process
# (or, with "copies", that many copies stepped by one request), driven over stdin/stdout.
# Rust starts it as `python -u -c <this file> <json args>`.
#
# Requests are JSON lines. Every reply is one JSON line; replies that carry an observation
# say `nbytes` and are followed by exactly that many raw bytes: the observation's leaves in
# rlgraph's flat order (Dict keys sorted, Tuple items in order), each little-endian,
# C-contiguous, in the dtype and shape of the space this script declared at start-up.
#
# The Python package (rlgraph-py) imports this file as a module and uses the same space
# conversion and observation encoding on environments in its own process, so only
# `main()` touches stdin and stdout.
import json
import sys


def send(reply, payload=b""):
    out = sys.stdout.buffer
    if payload:
        reply["nbytes"] = len(payload)
    out.write(json.dumps(reply).encode() + b"\n")
    if payload:
        out.write(payload)
    out.flush()


def fail(message):
    send({"ok": False, "error": message})


try:
    import numpy as np
    import gymnasium as gym
    from gymnasium import spaces as S
except Exception as e:  # noqa: BLE001 - any import failure is reported the same way
    if __name__ != "__main__":
        raise
    fail(f"cannot import gymnasium in {sys.executable}: {type(e).__name__}: {e}; "
         "install it there (pip install gymnasium) or point RLGRAPH_PYTHON at a Python that has it")
    sys.exit(0)


class Unsupported(Exception):
    pass


def finite(x):
    x = float(x)
    if x == float("inf"):
        return "inf"
    if x == float("-inf"):
        return "-inf"
    return x


def int_dtype(dt):
    if dt == np.uint8:
        return np.dtype("<u1"), "uint8"
    if dt.itemsize >= 4 and dt != np.int32:
        return np.dtype("<i8"), "int64"
    return np.dtype("<i4"), "int32"


def convert(space, at, leaves, float32=False):
    """The rlgraph space spec of a Gymnasium space; appends (numpy dtype, shape) per leaf.
    With `float32`, float64 boxes become float32 (RLgraph's `force_float32`)."""
    where = at or "the root"
    if isinstance(space, S.Dict):
        return {"type": "dict",
                "spec": {k: convert(space[k], f"{at}/{k}", leaves, float32) for k in sorted(space.spaces)}}
    if isinstance(space, S.Tuple):
        return {"type": "tuple",
                "spec": [convert(s, f"{at}/{i}", leaves, float32) for i, s in enumerate(space.spaces)]}
    if isinstance(space, S.Discrete):
        leaves.append((np.dtype("<i4"), ()))
        start = int(space.start)
        return {"type": "int-box", "shape": [], "low": start, "high": start + int(space.n), "dtype": "int32"}
    if isinstance(space, S.MultiBinary):
        shape = list(np.atleast_1d(space.n)) if not isinstance(space.n, (list, tuple)) else list(space.n)
        leaves.append((np.dtype("?"), tuple(shape)))
        return {"type": "bool-box", "shape": [int(d) for d in shape]}
    if isinstance(space, S.MultiDiscrete):
        nvec, start = np.asarray(space.nvec), np.asarray(space.start)
        if nvec.size and (np.any(nvec != nvec.flat[0]) or np.any(start != start.flat[0])):
            raise Unsupported(f"{where}: {space} has different category counts per element; rlgraph's "
                              "IntBox has one range for all elements")
        dt, name = int_dtype(np.dtype(space.dtype))
        leaves.append((dt, tuple(nvec.shape)))
        lo = int(start.flat[0]) if start.size else 0
        hi = lo + (int(nvec.flat[0]) if nvec.size else 1)
        return {"type": "int-box", "shape": list(nvec.shape), "low": lo, "high": hi, "dtype": name}
    if isinstance(space, S.Box):
        dt, shape = np.dtype(space.dtype), [int(d) for d in space.shape]
        low, high = np.asarray(space.low), np.asarray(space.high)
        if dt == np.bool_:
            leaves.append((np.dtype("?"), tuple(shape)))
            return {"type": "bool-box", "shape": shape}
        if dt.kind in "iu":
            if low.size and (np.any(low != low.flat[0]) or np.any(high != high.flat[0])):
                raise Unsupported(f"{where}: {space} has per-element integer bounds; rlgraph's IntBox has "
                                  "one range for all elements")
            target, name = int_dtype(dt)
            leaves.append((target, tuple(shape)))
            spec = {"type": "int-box", "shape": shape, "dtype": name}
            if low.size:
                spec["low"], spec["high"] = int(low.flat[0]), int(high.flat[0]) + 1
            return spec
        if dt.kind == "f":
            wide = dt == np.float64 and not float32
            target, name = (np.dtype("<f8"), "float64") if wide else (np.dtype("<f4"), "float32")
            leaves.append((target, tuple(shape)))
            spec = {"type": "float-box", "shape": shape, "dtype": name}
            if low.size and np.all(low == low.flat[0]) and np.all(high == high.flat[0]):
                spec["low"], spec["high"] = finite(low.flat[0]), finite(high.flat[0])
            elif low.size:
                spec["low"] = [finite(x) for x in low.flat]
                spec["high"] = [finite(x) for x in high.flat]
            return spec
        raise Unsupported(f"{where}: {space} has dtype {dt}, which rlgraph has no space for")
    raise Unsupported(f"{where}: {type(space).__name__} ({space}) has no rlgraph counterpart; supported are "
                      "Box, Discrete, MultiDiscrete, MultiBinary, Dict and Tuple")


def flatten(space, x, out):
    if isinstance(space, S.Dict):
        for k in sorted(space.spaces):
            flatten(space[k], x[k], out)
    elif isinstance(space, S.Tuple):
        for s, v in zip(space.spaces, x):
            flatten(s, v, out)
    else:
        out.append(x)


def encode(space, leaves, observation):
    values = []
    flatten(space, observation, values)
    parts = []
    for (dt, shape), v in zip(leaves, values):
        parts.append(np.ascontiguousarray(np.asarray(v).astype(dt, copy=False).reshape(shape)).tobytes())
    return b"".join(parts)


def action(space, a):
    """A Gymnasium action from rlgraph's JSON form of a value."""
    if isinstance(space, S.Dict):
        return {k: action(space[k], a[k]) for k in space.spaces}
    if isinstance(space, S.Tuple):
        return tuple(action(s, v) for s, v in zip(space.spaces, a))
    if isinstance(space, S.Discrete):
        return np.int64(a)
    if isinstance(space, S.MultiBinary):
        return np.asarray(a, dtype=np.int8).reshape(space.shape)
    return np.asarray(a, dtype=space.dtype).reshape(space.shape)


# The options of RLgraph's OpenAIGymEnv that the bridge applies itself instead of passing them
# to gymnasium.make (`frameskip` too, for NoFrameskip ids).
RLGRAPH_OPTIONS = ("max_num_noops", "noop_action", "episodic_life", "fire_reset", "clip_rewards")


def option(opts, key, kind, default, minimum=None):
    value = opts.pop(key, default)
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok or (minimum is not None and value < minimum):
        what = "true or false" if kind is bool else f"an integer >= {minimum}"
        raise ValueError(f"option {key}: expected {what}, got {value!r}")
    return value


class RLgraphAtari(gym.Wrapper):
    """RLgraph's OpenAIGymEnv options for Atari, as the DQN papers use them.

    frameskip: repeat each action this many frames, sum the rewards, and observe the
      pixel-wise maximum of the last two frames (as Gymnasium's AtariPreprocessing; at an
      early end the last two frames seen, not stale ones);
    max_num_noops: after a reset, 1 to this many `noop_action`s drawn from the environment's
      own seeded RNG (as AtariPreprocessing's noop_max);
    episodic_life: losing a life ends the agent's episode, and the next reset continues the
      game with one no-op instead of restarting it (RLgraph's and DeepMind's semantics; a
      reset with a seed always restarts);
    fire_reset: after every reset press FIRE (1) then 2, for games that wait for it;
    clip_rewards: rewards become their sign (RLgraph's Ape-X clips in its replay actor).
    """

    def __init__(self, env, opts, frameskip):
        super().__init__(env)
        self.frameskip = frameskip
        self.max_num_noops = option(opts, "max_num_noops", int, 0, 0)
        self.noop_action = option(opts, "noop_action", int, 0, 0)
        self.episodic_life = option(opts, "episodic_life", bool, False)
        self.fire_reset = option(opts, "fire_reset", bool, False)
        self.clip_rewards = option(opts, "clip_rewards", bool, False)
        needs_ale = self.episodic_life or self.fire_reset
        if needs_ale and not hasattr(env.unwrapped, "ale"):
            raise ValueError("episodic_life and fire_reset need an Atari (ALE) environment")
        if self.fire_reset:
            meanings = env.unwrapped.get_action_meanings()
            if len(meanings) < 3 or meanings[1] != "FIRE":
                raise ValueError(f"fire_reset needs action 1 to be FIRE and 3 actions at least, got {meanings}")
        self.lives = 0
        self.game_over = True

    def _skip(self, action):
        total, last, before = 0.0, None, None
        for _ in range(self.frameskip):
            obs, reward, terminated, truncated, info = self.env.step(action)
            before, last = last, obs
            total += float(reward)
            if terminated or truncated:
                break
        if before is not None:
            last = np.maximum(before, last)
        return last, total, terminated, truncated, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self._skip(action)
        self.game_over = terminated or truncated
        if self.episodic_life:
            lives = self.env.unwrapped.ale.lives()
            if 0 < lives < self.lives:
                terminated = True
            self.lives = lives
        if self.clip_rewards:
            reward = float(np.sign(reward))
        return obs, reward, terminated, truncated, info

    def _episodic_reset(self, seed):
        if self.game_over or not self.episodic_life or seed is not None:
            obs, info = self.env.reset(seed=seed)
            noops = self.env.unwrapped.np_random.integers(1, self.max_num_noops + 1) if self.max_num_noops else 0
            for _ in range(noops):
                obs, _, terminated, truncated, info = self.env.step(self.noop_action)
                if terminated or truncated:
                    obs, info = self.env.reset(seed=seed)
        else:
            obs, _, _, _, info = self._skip(self.noop_action)
        self.game_over = False
        if hasattr(self.env.unwrapped, "ale"):
            self.lives = self.env.unwrapped.ale.lives()
        return obs, info

    def reset(self, *, seed=None, options=None):
        obs, info = self._episodic_reset(seed)
        if self.fire_reset:
            for press in (1, 2):
                obs, _, terminated, truncated, info = self.step(press)
                if terminated or truncated:
                    obs, info = self._episodic_reset(None)
        return obs, info


def construct(env_id, kwargs):
    """gymnasium.make(env_id), or, where env_id is `module:Name` or `path/to/file.py:Name`
    and Name an identifier (a registered id such as `module:MyEnv-v0` is not one), the class
    or function Name there called with the keywords: a user's own environment, registered
    nowhere. The module is imported from the working folder (python -c puts it on sys.path);
    a file is loaded from its path."""
    source, sep, name = env_id.rpartition(":")
    if not (sep and source and name.isidentifier()):
        return gym.make(env_id, **kwargs)
    if source.endswith(".py"):
        import importlib.util
        import os

        path = os.path.abspath(source)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no Python file {path}")
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        import importlib

        module = importlib.import_module(source)
    target = getattr(module, name, None)
    if target is None:
        raise AttributeError(f"{source} has no {name}")
    if not callable(target):
        raise TypeError(f"{source}:{name} is a {type(target).__name__}, not a class or function")
    env = target(**kwargs)
    if not isinstance(env, gym.Env):
        raise TypeError(f"{source}:{name}() made a {type(env).__name__}, not a gymnasium.Env")
    return env


def make(env_id, kwargs):
    """The environment, and whether its float64 observations come as float32."""
    kwargs = dict(kwargs)
    opts = {k: kwargs.pop(k) for k in RLGRAPH_OPTIONS if k in kwargs}
    # As RLgraph's OpenAIGymEnv: float64 states (MuJoCo's) are sent as float32, which is what
    # networks take, unless asked otherwise.
    float32 = option(kwargs, "force_float32", bool, True)
    # RLgraph skips frames itself on NoFrameskip ids, and sets the environment's own
    # frameskip on the others.
    skip = option(kwargs, "frameskip", int, 1, 1) if "NoFrameskip" in env_id else 1
    env = construct(env_id, kwargs)
    if skip > 1 or opts:
        env = RLgraphAtari(env, opts, skip)
    return env, float32


def step_many(envs, obs_space, obs_leaves, actions):
    """Steps copy i with actions[i], resetting each copy whose episode ends. The payload is
    every copy's observation after its step, then the first observation of the next episode
    of each copy that ended, in copy order."""
    if not isinstance(actions, list) or len(actions) != len(envs):
        raise ValueError(f"expected a list of {len(envs)} actions, got {actions!r:.200}")
    rewards, terminated, truncated, after, restarts = [], [], [], [], []
    for env, a in zip(envs, actions):
        obs, reward, term, trunc, _ = env.step(action(env.action_space, a))
        rewards.append(float(reward))
        terminated.append(bool(term))
        truncated.append(bool(trunc))
        after.append(encode(obs_space, obs_leaves, obs))
        if term or trunc:
            first, _ = env.reset()
            restarts.append(encode(obs_space, obs_leaves, first))
    send({"ok": True, "rewards": rewards, "terminated": terminated, "truncated": truncated},
         b"".join(after + restarts))


def main():
    args = json.loads(sys.argv[1])
    env_id = args["id"]
    copies = args.get("copies", 1)
    try:
        if not isinstance(copies, int) or isinstance(copies, bool) or copies < 1:
            raise ValueError(f"copies must be a whole number >= 1, got {copies!r}")
        if env_id.startswith("ALE/") or "NoFrameskip" in env_id:
            import ale_py

            gym.register_envs(ale_py)
        made = [make(env_id, args.get("kwargs", {})) for _ in range(copies)]
        env, float32 = made[0]
        envs = [e for e, _ in made]
    except Exception as e:  # noqa: BLE001
        fail(f"gymnasium.make({env_id!r}) failed: {type(e).__name__}: {e}")
        return
    try:
        obs_leaves, act_leaves = [], []
        spaces = {
            "observation_space": convert(env.observation_space, "", obs_leaves, float32),
            "action_space": convert(env.action_space, "", act_leaves),
        }
    except Unsupported as e:
        fail(f"unsupported space in {env_id}: {e}")
        return
    send({"ok": True, **spaces})
    obs_space = env.observation_space
    for line in sys.stdin.buffer:
        try:
            req = json.loads(line)
            op = req["op"]
            if op == "reset":
                obs, _ = env.reset(seed=req.get("seed"))
                send({"ok": True}, encode(obs_space, obs_leaves, obs))
            elif op == "step":
                obs, reward, terminated, truncated, _ = env.step(action(env.action_space, req["action"]))
                send({"ok": True, "reward": float(reward), "terminated": bool(terminated),
                      "truncated": bool(truncated)}, encode(obs_space, obs_leaves, obs))
            elif op == "reset_many":
                seeds = req.get("seeds") or [None] * len(envs)
                if len(seeds) != len(envs):
                    fail(f"expected {len(envs)} seeds, got {len(seeds)}")
                    continue
                send({"ok": True}, b"".join(encode(obs_space, obs_leaves, e.reset(seed=s)[0]) for e, s in zip(envs, seeds)))
            elif op == "step_many":
                step_many(envs, obs_space, obs_leaves, req["actions"])
            elif op == "render":
                if env.render_mode != "rgb_array":
                    fail(f"{env_id} renders only when made with render_mode=rgb_array "
                         f"(gym:{env_id}?render_mode=rgb_array), not {env.render_mode!r}")
                    continue
                frame = np.ascontiguousarray(np.asarray(env.render(), dtype=np.uint8))
                if frame.ndim != 3 or frame.shape[2] != 3:
                    fail(f"{env_id} rendered an array of shape {frame.shape}, not height x width x 3")
                    continue
                send({"ok": True, "height": frame.shape[0], "width": frame.shape[1]}, frame.tobytes())
            elif op == "get_state":
                state = getattr(env.unwrapped, "state", None)
                send({"ok": True, "state": None if state is None else [float(x) for x in np.ravel(state)]})
            elif op == "set_state":
                old = getattr(env.unwrapped, "state", None)
                if old is None:
                    fail(f"{env_id} has no attribute `unwrapped.state` to set")
                    continue
                new = np.asarray(req["state"], dtype=np.float64)
                if new.size != np.size(old):
                    fail(f"expected {np.size(old)} values, got {new.size}")
                    continue
                env.unwrapped.state = new.reshape(np.shape(old))
                send({"ok": True})
            elif op == "close":
                for e in envs:
                    e.close()
                send({"ok": True})
                return
            else:
                fail(f"unknown request {op!r}")
        except Exception as e:  # noqa: BLE001 - the Rust side gets every failure as an error
            fail(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
