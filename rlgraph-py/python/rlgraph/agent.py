"""``rlgraph.Agent``: train, act, save and load an agent of an RLgraph JSON config."""

from __future__ import annotations

import copy
import json
import math
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np

from rlgraph import _env_args
from rlgraph._rlgraph import GA3C_CHECKPOINT_FILE, NativeAgent
from rlgraph.program import cli, config_file
from rlgraph.spaces import to_gym

LAYOUTS = ("single", "ga3c", "tensor")

Config = Union[str, "os.PathLike[str]", Dict[str, Any]]


def _read_config(config: Config) -> Tuple[Dict[str, Any], str]:
    """The config as a dict, and how errors name it."""
    if isinstance(config, dict):
        return config, ""
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ValueError(f"config: cannot read {path}: {e}") from None
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON: {e}") from None
        if not isinstance(parsed, dict):
            raise ValueError(f"{path}: expected a JSON object, got {type(parsed).__name__}")
        return parsed, path
    raise TypeError(f"config: expected a path to an RLgraph JSON config or a dict, got {type(config).__name__}")


def _whole(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name}: expected a whole number >= {minimum}, got {value!r}")
    return int(value)


class _Progress:
    """A progress line: tqdm's bar where tqdm is installed (it draws in Jupyter too), else a
    line on stderr redrawn at most five times a second."""

    def __init__(self, total: int) -> None:
        self.total, self.shown, self.drawn_at = total, 0, 0.0
        try:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="step")
        except ImportError:
            self.bar = None

    def update(self, done: int, leg: Dict[str, Any]) -> None:
        rewards = leg.get("episode_rewards") or []
        if self.bar is not None:
            self.bar.update(done - self.shown)
            if rewards:
                self.bar.set_postfix(last_return=f"{rewards[-1]:.1f}", refresh=False)
        elif time.monotonic() - self.drawn_at > 0.2 or done >= self.total:
            self.drawn_at = time.monotonic()
            last = f" | last return {rewards[-1]:.1f}" if rewards else ""
            sys.stderr.write(f"\r{done}/{self.total} steps{last}   ")
            sys.stderr.flush()
        self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        else:
            sys.stderr.write("\n")


class Agent:
    """An agent of an RLgraph JSON config, trained by rlgraph-rs's worker.

    Args:
        config: a path to an RLgraph JSON config (``configs/ppo-cartpole.json``) or a dict of
            the same. A key the algorithm does not know is refused by its path.
        env: a native id (``"CartPole-v1"``, ``"Hopper-v5"``, ``"MinAtar/Breakout-v1"``,
            ``"gym:LunarLander-v3"``), a ``gymnasium.Env`` object, a callable that makes one
            (your own class, registered nowhere, will do), or a
            ``gymnasium.vector.SyncVectorEnv``.
        backend: ``"candle"`` (pure Rust, the default) or ``"tch"`` (libtorch, where the
            package was built with it).
        seed: the seed of every random choice (default: the config's
            ``execution_spec.seed``, else 0).
        num_envs: environment copies stepped together (an id or a callable makes them).
        layout: where the run goes: ``"single"`` (one thread, the default), ``"ga3c"``
            (GA3C's actor threads and batched predictor; ppo, actor_critic and IMPALA
            configs) or ``"tensor"`` (``num_envs`` device-resident copies; PPO). The last two
            run through the ``rlgraph`` program in this process, on an environment id.

    Native environments step in Rust with the GIL released; a Python environment takes the
    GIL only for its own ``reset`` and ``step``.
    """

    def __init__(
        self,
        config: Config,
        env: _env_args.EnvArg,
        *,
        backend: str = "candle",
        seed: Optional[int] = None,
        num_envs: int = 1,
        layout: str = "single",
    ) -> None:
        self.config, source = _read_config(config)
        if seed is not None:
            seed = _whole("seed", seed, 0)
        if backend not in ("candle", "tch"):
            raise ValueError(f"backend: expected 'candle' or 'tch', got {backend!r}")
        if layout not in LAYOUTS:
            raise ValueError(f"layout: expected one of {', '.join(LAYOUTS)}, got {layout!r}")
        self.backend, self.env, self.layout, self.num_envs = backend, env, layout, num_envs
        if layout != "single":
            if not isinstance(env, str):
                raise TypeError(f"env: layout={layout!r} makes its environments from an id (str), "
                                f"not a {type(env).__name__}")
            _whole("num_envs", num_envs, 1)
            if layout == "ga3c":
                # GA3C runs one environment per agent thread.
                self.config = copy.deepcopy(self.config)
                execution = self.config.setdefault("execution_spec", {})
                execution["executor"] = "ga3c"
                execution.setdefault("ga3c_spec", {})["num_agents"] = num_envs
            # The agent here acts (predict, evaluate, export) with what the program trained.
            num_envs = 1
        copies = _env_args.copies(env, num_envs)
        self._native = NativeAgent(json.dumps(self.config), source, copies, backend, seed, num_envs)
        # The seed in use: the one given, else the config's execution_spec.seed, else 0.
        self.seed: int = self._native.seed
        # Where the program keeps a GA3C or tensor run (its --out), once one has run.
        self._run_dir: Optional[str] = None
        self._program_steps = 0

    @property
    def observation_space(self):
        """The observation space, as a Gymnasium space."""
        return to_gym(json.loads(self._native.observation_space))

    @property
    def action_space(self):
        """The action space, as a Gymnasium space."""
        return to_gym(json.loads(self._native.action_space))

    @property
    def num_timesteps(self) -> int:
        """Environment steps trained so far (over every ``learn`` and a resumed run's legs)."""
        return self._native.timesteps if self.layout == "single" else self._program_steps

    def learn(
        self,
        total_timesteps: int,
        *,
        eval_every: Optional[int] = None,
        eval_episodes: int = 10,
        target_return: Optional[float] = None,
        callback: Optional[Callable[[Dict[str, Any]], Optional[bool]]] = None,
        callback_every: int = 1000,
        progress_bar: bool = True,
        checkpoint_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    ) -> Dict[str, Any]:
        """Trains for ``total_timesteps`` more environment steps and returns the run's summary:
        the dict ``rlgraph train`` prints (``timesteps_executed``, ``solved_at_timestep``,
        ``evaluations``, ...) with every episode's return (``episode_rewards``) and the step
        it ended at (``episode_timesteps``).

        Args:
            eval_every: every this many steps, play ``eval_episodes`` greedy episodes on
                environments of their own; ``target_return`` then applies to their mean.
            target_return: stop once the mean return of the last 100 episodes (or of an
                evaluation round) reaches this; 475 solves CartPole-v1.
            callback: called every ``callback_every`` steps with this call's local variables
                (``self``, ``leg``: the last leg's statistics, ``done``: steps so far); returning
                ``False`` stops the run.
            progress_bar: draw progress (tqdm's bar where tqdm is installed).
            checkpoint_dir: save the agent there (as :meth:`save`) at the end, and when Ctrl-C
                interrupts the run (the ``KeyboardInterrupt`` is raised again after).
        """
        total = _whole("total_timesteps", total_timesteps, 1)
        every = _whole("callback_every", callback_every, 1)
        episodes = _whole("eval_episodes", eval_episodes, 1)
        if eval_every is not None:
            eval_every = _whole("eval_every", eval_every, 1)
        if target_return is not None and not (isinstance(target_return, (int, float)) and math.isfinite(target_return)):
            raise ValueError(f"target_return: expected a finite number, got {target_return!r}")
        if callback is not None and not callable(callback):
            raise TypeError(f"callback: expected a callable, got {type(callback).__name__}")
        if self.layout != "single":
            if callback is not None:
                raise ValueError(f"callback: runs with layout='single'; layout={self.layout!r} runs in the program")
            return self._learn_in_program(self.num_timesteps + total, eval_every, episodes, target_return,
                                          checkpoint_dir)
        eval_envs = _env_args.fresh(self.env, episodes, "eval_every") if eval_every else []
        self._native.set_stopping(eval_every, eval_envs, episodes, target_return)
        start = self._native.timesteps
        end = start + total
        progress = _Progress(total) if progress_bar else None
        try:
            done = start
            while done < end:
                leg = self._native.run(min(done + every, end), end)
                done = self._native.timesteps
                if progress is not None:
                    progress.update(done - start, leg)
                if leg.get("solved_at_timestep") is not None:
                    break
                if callback is not None and callback(locals()) is False:
                    break
        except KeyboardInterrupt:
            if checkpoint_dir is not None:
                self.save(checkpoint_dir)
            raise
        finally:
            if progress is not None:
                progress.close()
        if checkpoint_dir is not None:
            self.save(checkpoint_dir)
        return self._native.summary()

    def _learn_in_program(self, end: int, eval_every: Optional[int], episodes: int,
                          target_return: Optional[float], checkpoint_dir: Any) -> Dict[str, Any]:
        """A GA3C or tensor run through the ``rlgraph`` program, continued from its last
        ``learn``; the agent here then acts with what it learned."""
        resume = self._run_dir is not None
        if self._run_dir is None:
            self._run_dir = os.fspath(checkpoint_dir) if checkpoint_dir is not None else tempfile.mkdtemp(prefix="rlgraph-run-")
        with tempfile.TemporaryDirectory(prefix="rlgraph-config-") as folder:
            argv = ["train", config_file(self.config, folder), "--env", self.env, "--seed", str(self.seed),
                    "--timesteps", str(end), "--out", self._run_dir, "--backend", self.backend]
            if self.layout == "tensor":
                argv += ["--tensor-envs", str(self.num_envs)]
            if resume:
                argv += ["--resume", self._run_dir]
            if eval_every is not None:
                argv += ["--eval-every", str(eval_every), "--eval-episodes", str(episodes)]
            if target_return is not None:
                argv += ["--target-return", str(target_return)]
            summary = json.loads(cli(argv))
        self._program_steps = int(summary["timesteps_executed"])
        self._native.restore_trained(self._run_dir)
        if checkpoint_dir is not None and os.path.abspath(checkpoint_dir) != os.path.abspath(self._run_dir):
            self.save(checkpoint_dir)
        return summary

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> Tuple[Any, Any]:
        """The action for ``observation`` (one, or a batch with a leading dimension), as
        numpy; greedy when ``deterministic``, else sampled as in training. Returns
        ``(action, state)`` in Stable-Baselines3's order of arguments and results.

        A recurrent (LSTM) policy carries one memory per row of the batch inside the agent
        from call to call, so ``state`` comes back as it went in; ``episode_start`` (one bool
        per row, as SB3's ``RecurrentPPO`` takes it) marks the rows that begin an episode,
        whose memory starts from zero. A memoryless policy ignores both."""
        if episode_start is not None:
            episode_start = [bool(x) for x in np.atleast_1d(np.asarray(episode_start))]
        return self._native.predict(observation, bool(deterministic), episode_start), state

    def get_weights(self) -> Dict[str, np.ndarray]:
        """Every variable of the agent's graph, by scope path, as numpy arrays."""
        return self._native.weights()

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Saves the agent into the directory ``path`` as ``rlgraph train --out`` does
        (``config.json``, ``checkpoint.safetensors``, ``summary.json``), so that ``rlgraph
        train --resume path`` continues the run, and :meth:`load` reads a CLI run."""
        if self._run_dir is not None:
            shutil.copytree(self._run_dir, os.fspath(path), dirs_exist_ok=True)
        else:
            self._native.save(os.fspath(path))

    @classmethod
    def load(
        cls,
        path: Union[str, "os.PathLike[str]"],
        env: Optional[_env_args.EnvArg] = None,
        *,
        backend: str = "candle",
        num_envs: Optional[int] = None,
        layout: Optional[str] = None,
    ) -> "Agent":
        """The agent saved in ``path`` (by :meth:`save` or ``rlgraph train --out``), on
        ``env`` (default: the id its ``summary.json`` names) with as many copies as it was
        saved with (default) and in the layout it ran in (default), ready to act or train
        on."""
        path = os.fspath(path)
        try:
            with open(os.path.join(path, "summary.json"), encoding="utf-8") as f:
                summary = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            summary = {"error": str(e)}
        if num_envs is None:
            num_envs = int(summary.get("num_envs", 1))
        if env is None:
            env = summary.get("env")
            if not isinstance(env, str):
                raise ValueError(f"{path}: no summary.json naming the environment ({summary.get('error', 'no env')}); pass env")
            if env.startswith("python:"):
                raise ValueError(f"{path}: trained on a Python environment ({env[7:]}); pass env")
        if layout is None:
            layout = ("ga3c" if os.path.exists(os.path.join(path, GA3C_CHECKPOINT_FILE))
                      else "tensor" if "tensor_envs" in summary else "single")
        if layout == "tensor" and "tensor_envs" in summary:
            num_envs = int(summary["tensor_envs"])
        agent = cls(os.path.join(path, "config.json"), env, backend=backend, num_envs=num_envs, layout=layout)
        if layout == "single":
            agent._native.restore(path)
        else:
            # The run goes on in a copy: the saved folder stays as it was.
            agent._run_dir = tempfile.mkdtemp(prefix="rlgraph-run-")
            shutil.copytree(path, agent._run_dir, dirs_exist_ok=True)
            agent._program_steps = int(summary.get("timesteps_executed", 0))
            agent._native.restore_trained(agent._run_dir)
        return agent

    def export_onnx(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the agent's acting graph to ``path`` as an ONNX model (as ``rlgraph
        export``)."""
        self._native.export_onnx(os.fspath(path))

    def __repr__(self) -> str:
        kind = self.config.get("type", "?")
        return (f"rlgraph.Agent(type={kind!r}, env={_env_args.describe(self.env)!r}, backend={self.backend!r}, "
                f"layout={self.layout!r}, steps={self.num_timesteps})")


def evaluate(
    agent: Union[Agent, str, "os.PathLike[str]"],
    env: Optional[_env_args.EnvArg] = None,
    episodes: int = 10,
    *,
    seed: int = 0,
    max_steps: int = 100_000,
) -> Dict[str, Any]:
    """Plays ``episodes`` greedy episodes (episode ``i`` from ``reset(seed + i)``) of an agent,
    or of the run saved at a path, on ``env`` (default: the agent's own id); returns
    ``{"returns": [...], "mean_return": ..., "std_return": ...}``."""
    if not isinstance(agent, Agent):
        agent = Agent.load(agent, env)
    env = agent.env if env is None else env
    one = _env_args.copies(env, 1)
    returns: List[float] = agent._native.evaluate(
        one, _whole("episodes", episodes, 1), _whole("seed", seed, 0), _whole("max_steps", max_steps, 1)
    )
    return {"returns": returns, "mean_return": float(np.mean(returns)), "std_return": float(np.std(returns))}
