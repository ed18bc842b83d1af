#!/usr/bin/env bash
# Installs the Python peers the bench scripts measure (PyTorch, EnvPool, cpprb,
# Stable-Baselines3, JAX with gymnax's MinAtar) into the ignored folder .bench-venv/, from
# PyPI, at the versions in scripts/bench-peers-requirements.txt (gymnax without its
# dependencies, which would move gymnasium back to 1.3; flax is listed instead); PyTorch's wheel brings about 3 GB of CUDA libraries
# with it (unused: the benches run on the CPU). Idempotent; prints the venv's python.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="$PWD/.bench-venv"
requirements="scripts/bench-peers-requirements.txt"
stamp="$venv/.installed-requirements"
if ! [[ -x "$venv/bin/python" && -f "$stamp" ]] || ! cmp -s "$stamp" "$requirements"; then
  echo "installing the bench peers into $venv (from PyPI, once)" >&2
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps gymnax==1.0.1 >&2
  cp "$requirements" "$stamp"
fi
echo "$venv/bin/python"
