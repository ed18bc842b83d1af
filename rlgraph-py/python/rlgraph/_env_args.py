"""What ``env=`` may be, turned into what the native agent takes: an id, or a list of
``gymnasium.Env`` objects (one per copy)."""

from __future__ import annotations

import os
from typing import Any, Callable, List, Union

import gymnasium as gym

EnvArg = Union[str, gym.Env, Callable[[], gym.Env], gym.vector.VectorEnv]


def copies(env: EnvArg, count: int, argument: str = "env") -> Union[str, List[gym.Env]]:
    """``count`` copies of ``env`` as the native agent takes them."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"num_envs: expected a whole number >= 1, got {count!r}")
    if isinstance(env, (str, os.PathLike)):
        return os.fspath(env)
    if isinstance(env, gym.Env):
        if count != 1:
            raise ValueError(
                f"num_envs={count}: one gymnasium.Env object (the {argument}) is one copy; "
                "pass a callable that makes one (the class itself will do) to run several"
            )
        return [env]
    if isinstance(env, gym.vector.VectorEnv):
        inner = getattr(env, "envs", None)
        if inner is None:
            raise TypeError(
                f"{argument}: a {type(env).__name__} steps its copies out of reach (in other processes); "
                "pass a gymnasium.vector.SyncVectorEnv, or a callable that makes one environment"
            )
        return list(inner)
    if callable(env):
        made = [env() for _ in range(count)]
        for m in made:
            if not isinstance(m, gym.Env):
                raise TypeError(f"{argument}: the callable made a {type(m).__name__}, not a gymnasium.Env")
        return made
    raise TypeError(
        f"{argument}: expected an environment id (str), a gymnasium.Env, a callable that makes one, "
        f"or a gymnasium SyncVectorEnv; got {type(env).__name__}"
    )


def fresh(env: EnvArg, count: int, argument: str) -> Union[str, List[gym.Env]]:
    """``count`` copies of ``env`` of their own (for evaluation): an id or a callable can make
    them; one environment object cannot."""
    if isinstance(env, (gym.Env, gym.vector.VectorEnv)):
        raise ValueError(
            f"{argument}: evaluation plays on environments of its own; pass env as an id or a "
            "callable that makes one (the class itself will do)"
        )
    return copies(env, count, argument)


def describe(env: Any) -> str:
    """A name for ``env`` in a saved run's summary."""
    if isinstance(env, (str, os.PathLike)):
        return os.fspath(env)
    return getattr(type(env), "__name__", "env")
