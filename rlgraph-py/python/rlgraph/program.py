"""The ``rlgraph`` program inside the package: ``python -m rlgraph train ...`` (or the
``rlgraph`` command pip installs) runs the same subcommands as the Rust binary, and
:func:`launch` runs Ape-X or IMPALA as processes of it."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any, Dict, Optional, Sequence, Union

from rlgraph import _rlgraph


def _spawn_roles_with_this_python() -> None:
    # `launch` starts its actors, shards and learner as processes of the program; in a
    # Python process the program is `python -m rlgraph`, not the interpreter itself.
    os.environ.setdefault("RLGRAPH_PROGRAM", json.dumps([sys.executable, "-m", "rlgraph"]))


def cli(args: Sequence[str]) -> str:
    """Runs one subcommand of the ``rlgraph`` program in this process (``["train",
    "configs/dqn-cartpole.json", "--env", "CartPole-v1"]``) and returns what it prints (JSON
    for most). An error is a ``ValueError`` with the program's message."""
    if isinstance(args, str) or not all(isinstance(a, (str, os.PathLike)) for a in args):
        raise TypeError("args: expected a list of strings, as on the command line")
    _spawn_roles_with_this_python()
    return _rlgraph.program(["rlgraph", *[os.fspath(a) for a in args]])


def main() -> int:
    """The ``rlgraph`` command: the program's arguments from ``sys.argv``."""
    _spawn_roles_with_this_python()
    return _rlgraph.program_main(["rlgraph", *sys.argv[1:]])


def config_file(config: Union[str, "os.PathLike[str]", Dict[str, Any]], folder: str) -> str:
    """A path to ``config``: itself, or a dict written as JSON into ``folder``."""
    if isinstance(config, dict):
        path = os.path.join(folder, "config.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(config, f)
        return path
    if isinstance(config, (str, os.PathLike)):
        return os.fspath(config)
    raise TypeError(f"config: expected a path to an RLgraph JSON config or a dict, got {type(config).__name__}")


def launch(
    config: Union[str, "os.PathLike[str]", Dict[str, Any]],
    env: str,
    *,
    actors: Optional[int] = None,
    replay_shards: Optional[int] = None,
    timesteps: int = 20_000,
    seed: int = 0,
    backend: str = "candle",
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    target_return: Optional[float] = None,
    eval_every: Optional[int] = None,
    record: Optional[Union[str, "os.PathLike[str]"]] = None,
    args: Sequence[str] = (),
) -> Dict[str, Any]:
    """Runs an Ape-X or IMPALA config as processes on this machine, talking gRPC over
    loopback, as ``rlgraph launch`` does: ``actors`` actor processes, ``replay_shards``
    replay shards (Ape-X) and a learner; returns the learner's summary. ``out`` keeps its
    checkpoint and logs; ``record`` is a folder for the learner's input log, which
    :func:`replay` runs again; ``args`` are further flags of ``rlgraph launch``."""
    if not isinstance(env, str):
        raise TypeError("env: the distributed roles make their environments from an id (str)")
    with tempfile.TemporaryDirectory(prefix="rlgraph-launch-") as folder:
        argv = ["launch", config_file(config, folder), "--env", env, "--timesteps", str(int(timesteps)),
                "--seed", str(int(seed)), "--backend", backend]
        for flag, value in (("--actors", actors), ("--replay-shards", replay_shards), ("--out", out),
                            ("--target-return", target_return), ("--eval-every", eval_every),
                            ("--record", record)):
            if value is not None:
                argv += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
        return json.loads(cli([*argv, *args]))


def replay(
    log: Union[str, "os.PathLike[str]"],
    out: Union[str, "os.PathLike[str]"],
    *,
    check: bool = False,
    until: Optional[int] = None,
    config: Optional[Union[str, "os.PathLike[str]", Dict[str, Any]]] = None,
) -> Dict[str, Any]:
    """Runs a recorded learner again in this process from its input log (``launch(...,
    record=...)``, ``rlgraph train --record`` for GA3C), as ``rlgraph replay`` does; its
    checkpoint goes into ``out``. ``check`` compares every loss and publication with the live
    run's, ``until`` stops after that update, ``config`` replays the same experience through
    another learner config. Returns the replay's summary."""
    with tempfile.TemporaryDirectory(prefix="rlgraph-replay-") as folder:
        argv = ["replay", os.fspath(log), "--out", os.fspath(out)]
        if check:
            argv.append("--check")
        if until is not None:
            argv += ["--until", str(int(until))]
        if config is not None:
            argv += ["--config", config_file(config, folder)]
        return json.loads(cli(argv))
