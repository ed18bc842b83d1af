#!/usr/bin/env bash
# Builds rlgraph-rs's tch backend for CUDA, against the libtorch a GPU machine already has.
#
#   scripts/build-cuda.sh [--benches] [--tests]
#       On a machine with Rust and a CUDA `torch` in python3: builds against that torch's own
#       libtorch (headers and libraries, as LIBTORCH_USE_PYTORCH finds them).
#   scripts/build-cuda.sh --for VERSION [--benches] [--tests]
#       For a machine that only receives the binaries (no Rust there): builds here against
#       torch==VERSION's headers and libraries from PyPI (VERSION is the target's
#       `python3 -c 'import torch; print(torch.__version__)'` without its +cuXXX), kept in the
#       ignored folder .libtorch-VERSION/.
#
# Either way the result is target/cuda-VERSION/dist/: `rlgraph` (with the tch backend), with
# --benches the criterion benches atari, tensor_envs and nature_dqn, with --tests the
# integration tests (`integration`: the GPU checks, and with RLGRAPH_TEST_DEVICE=cuda:0 every
# tch side of the component and conformance tests on the GPU), and run.sh, which runs any of
# them on the target with its Python torch's libtorch, CUDA part included:
#
#   target/cuda-2.11.0/dist/run.sh rlgraph train configs/ppo-cartpole-tensor.json \
#       --backend tch --device cuda:0 --tensor-envs 1024
#   RLGRAPH_TEST_DEVICE=cuda:0 target/cuda-2.11.0/dist/run.sh atari --bench tch
#   RLGRAPH_TEST_DEVICE=cuda:0 target/cuda-2.11.0/dist/run.sh integration conformance gpu::
#
# Every build has the CUDA graph shim (backend-tch's cuda-shim feature), compiled against
# the CUDA runtime headers of that torch's CUDA release (fetched from PyPI with --for).
#
# tch 0.26 is generated for libtorch 2.13.0. For another version, a copy of torch-sys is
# fitted to it (scripts/tch_for_torch.py stubs the few ops that version lacks; rlgraph-rs
# calls none of them) and used through a cargo [patch] given on the command line; Cargo.lock
# is put back afterwards.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

version="" benches=0 tests=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --for) version="${2:?--for takes a torch version, like 2.11.0}"; shift 2 ;;
    --benches) benches=1; shift ;;
    --tests) tests=1; shift ;;
    *) echo "build-cuda: unknown argument $1 (see the comment at the top of this script)" >&2; exit 2 ;;
  esac
done

if [[ -n "$version" ]]; then
  libtorch="$root/.libtorch-$version"
  ./scripts/install-libtorch.sh "$version" "$libtorch"
  # The CUDA graph shim compiles against the CUDA runtime's headers (nothing CUDA is linked):
  # those of the CUDA release that torch wheel names, from the nvidia wheels on PyPI.
  if [[ ! -f "$libtorch/cuda/include/crt/host_config.h" ]]; then
    python3 - "$version" "$libtorch/cuda" <<'PY'
import glob, os, re, shutil, subprocess, sys, tempfile, zipfile
version, dest = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--no-deps", "--only-binary=:all:", "-d", tmp]
    subprocess.run(pip + [f"torch=={version}"], check=True)
    wheel = zipfile.ZipFile(glob.glob(f"{tmp}/torch-*.whl")[0])
    meta = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    cuda = re.search(r"cuda-toolkit\[[^\]]*\]==(\d+\.\d+)", meta)
    if not cuda:
        sys.exit(f"build-cuda: torch {version} names no cuda-toolkit release; set RLGRAPH_CUDA_INCLUDE")
    subprocess.run(pip + [f"nvidia-cuda-runtime=={cuda[1]}.*", f"nvidia-cuda-crt=={cuda[1]}.*"], check=True)
    for w in glob.glob(f"{tmp}/nvidia_cuda_*.whl"):
        with zipfile.ZipFile(w) as z:
            for name in z.namelist():
                if "/include/" in name and not name.endswith("/"):
                    target = os.path.join(dest, "include", name.split("/include/", 1)[1])
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with z.open(name) as src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
    print(f"build-cuda: CUDA {cuda[1]} headers in {dest}/include", file=sys.stderr)
PY
  fi
  export RLGRAPH_CUDA_INCLUDE="$libtorch/cuda/include"
else
  read -r version libtorch < <(python3 -c 'import os, torch
print(torch.__version__.split("+")[0], os.path.dirname(torch.__file__))') || {
    echo "build-cuda: python3 has no torch; install a CUDA torch, or build for another machine with --for VERSION" >&2
    exit 1
  }
fi
out="$root/target/cuda-$version"
mkdir -p "$out"

config=()
if [[ "$version" != "2.13.0" ]]; then
  registry="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/torch-sys-0.26.0 2>/dev/null | head -1 || true)"
  if [[ -z "$registry" ]]; then
    cargo fetch --locked
    registry="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/torch-sys-0.26.0 | head -1)"
  fi
  shim="$out/torch-sys"
  if [[ ! -f "$shim/fitted-to" || "$(cat "$shim/fitted-to")" != "$version" ]]; then
    rm -rf "$shim"
    cp -r "$registry" "$shim"
    echo "build-cuda: fitting tch's shim to libtorch $version; stubbed:" >&2
    python3 scripts/tch_for_torch.py "$shim" "$libtorch" "$version" | sed 's/^/  /' >&2
    echo "$version" > "$shim/fitted-to"
  fi
  config=(--config "patch.crates-io.torch-sys.path='$shim'")
  cp Cargo.lock "$out/Cargo.lock.saved"
  trap 'cp "$out/Cargo.lock.saved" "$root/Cargo.lock"' EXIT
fi

export LIBTORCH="$libtorch" LIBTORCH_BYPASS_VERSION_CHECK=1 CARGO_TARGET_DIR="$out"
unset LIBTORCH_USE_PYTORCH
cargo "${config[@]}" build --release -p rlgraph-cli --features tch,backend-tch/cuda-shim
dist="$out/dist"
rm -rf "$dist"
mkdir -p "$dist"
# rlgraph runs rlgraph-tch beside it for a command on tch.
cp "$out/release/rlgraph" "$out/release/rlgraph-tch" "$dist/"
# Criterion benches and the integration tests, copied into dist under their target names.
copy_executables() {
  python3 -c 'import json, shutil, sys, os
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        shutil.copy(m["executable"], os.path.join(sys.argv[1], m["target"]["name"]))' "$dist"
}
if [[ "$benches" == 1 ]]; then
  cargo "${config[@]}" bench --no-run -p rlgraph-tests --features backend-tch/cuda-shim --bench atari --bench tensor_envs --bench nature_dqn --bench mlp_act \
    --message-format=json | copy_executables
fi
if [[ "$tests" == 1 ]]; then
  cargo "${config[@]}" test --release --no-run -p rlgraph-tests --features backend-tch/cuda-shim --test integration \
    --message-format=json | copy_executables
fi
strip "$dist"/* 2>/dev/null || true
cat > "$dist/run.sh" <<EOF
#!/usr/bin/env bash
# Runs one of these binaries with the libtorch of this machine's Python torch ($version).
set -euo pipefail
here="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
read -r found torch_dir < <(python3 -c 'import os, torch
print(torch.__version__.split("+")[0], os.path.dirname(torch.__file__))')
if [[ "\$found" != "$version" ]]; then
  echo "run.sh: these binaries were built for torch $version; this python3 has \$found (rebuild with scripts/build-cuda.sh --for \$found)" >&2
  exit 1
fi
export LIBTORCH="\$torch_dir" LD_LIBRARY_PATH="\$torch_dir/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
name="\${1:?run.sh takes the binary to run: \$(ls "\$here" | grep -v run.sh | tr '\n' ' ')}"
shift
exec "\$here/\$name" "\$@"
EOF
chmod +x "$dist/run.sh"
echo "build-cuda: $(du -sh "$dist" | cut -f1) in $dist" >&2
