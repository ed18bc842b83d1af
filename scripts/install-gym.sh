#!/usr/bin/env bash
# Installs the Gymnasium bridge's Python side (gymnasium, ale-py with its Atari ROMs, opencv,
# onnxruntime for the ONNX export's tests, grpcio for the distributed roles' tests,
# kubernetes-validate for the emitted manifests' test, mujoco, whose library the native
# MuJoCo tasks load, minatar, the reference of the native MinAtar games, mdbook, which
# builds the book, and pytest with pytest-xdist, which run the Python package's tests)
# into the ignored folder .gym-venv/, from PyPI, at the versions in gym-requirements.txt.
# Idempotent: when the venv already imports them at those versions it does nothing.
# With --bench it also adds the benchmark suites' other packages (Box2D) from
# bench-requirements.txt. Prints the venv's python, which RLGRAPH_PYTHON should name.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv="$PWD/.gym-venv"
requirements="scripts/gym-requirements.txt"
stamp="$venv/.installed-requirements"

# The benchmark suites' packages, on top of an installed venv.
bench() {
    local extra="scripts/bench-requirements.txt" extra_stamp="$venv/.installed-bench-requirements"
    if [[ -f "$extra_stamp" ]] && cmp -s "$extra_stamp" "$extra" \
        && "$venv/bin/python" -c "import Box2D" 2>/dev/null; then
        return
    fi
    echo "installing Box2D into $venv (from PyPI, once)" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$extra" >&2
    "$venv/bin/python" -c "import Box2D"
    cp "$extra" "$extra_stamp"
}

if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$stamp" "$requirements" \
    && "$venv/bin/python" -c "import gymnasium, ale_py, cv2, onnxruntime, grpc, grpc_tools, grpc_health, kubernetes_validate, yaml, mujoco, gymnasium.envs.mujoco, minatar.gym, pytest, xdist" 2>/dev/null \
    && "$venv/bin/mdbook" --version >/dev/null 2>&1; then
    [[ "${1:-}" == "--bench" ]] && bench
    echo "$venv/bin/python"
    exit 0
fi

python=${PYTHON:-python3}
echo "installing gymnasium and ale-py into $venv (from PyPI, once)" >&2
# The stamp is written last, so an interrupted install is redone from scratch next time.
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements" >&2
"$venv/bin/python" -c "import gymnasium, ale_py, cv2, onnxruntime, grpc, grpc_tools, grpc_health, kubernetes_validate, yaml, mujoco, gymnasium.envs.mujoco, minatar.gym, pytest, xdist"
"$venv/bin/mdbook" --version >&2
cp "$requirements" "$stamp"
[[ "${1:-}" == "--bench" ]] && bench
echo "$venv/bin/python"
