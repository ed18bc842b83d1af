#!/usr/bin/env bash
# Installs the Gymnasium bridge's Python side (gymnasium, ale-py with its Atari ROMs, opencv,
# and onnxruntime for the ONNX export's tests)
# into the ignored folder .gym-venv/, from PyPI, at the versions in gym-requirements.txt.
# Idempotent: when the venv already imports them at those versions it does nothing.
# Prints the venv's python, which RLGRAPH_PYTHON should name.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv="$PWD/.gym-venv"
requirements="scripts/gym-requirements.txt"
stamp="$venv/.installed-requirements"

if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$stamp" "$requirements" \
    && "$venv/bin/python" -c "import gymnasium, ale_py, cv2, onnxruntime" 2>/dev/null; then
    echo "$venv/bin/python"
    exit 0
fi

python=${PYTHON:-python3}
echo "installing gymnasium and ale-py into $venv (from PyPI, once)" >&2
# The stamp is written last, so an interrupted install is redone from scratch next time.
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements" >&2
"$venv/bin/python" -c "import gymnasium, ale_py, cv2, onnxruntime"
cp "$requirements" "$stamp"
echo "$venv/bin/python"
