"""Fits a copy of torch-sys (tch's C++ shim over libtorch) to another libtorch version.

tch 0.26's generated shim names every op of libtorch 2.13. Against an older libtorch (the
2.11 a GPU machine's Python torch has, say) a few of those ops do not exist or take other
arguments, and the shim does not compile. This script compiles the shim's C++ files against
the given headers and turns each function that fails into one that reports an error when
called ("not in this libtorch"), until everything compiles. rlgraph-rs calls none of those
ops; tch keeps its C interface, so the Rust side needs no change.

Usage: tch_for_torch.py TORCH_SYS_COPY LIBTORCH_DIR VERSION
Prints the names of the functions it stubbed, one per line.
"""

import re
import subprocess
import sys

FILES = ["libtch/torch_api_generated.cpp", "libtch/torch_api.cpp"]
# A shim function starts at column 0 with its return type and name and ends with a lone "}".
START = re.compile(r"^[A-Za-z_][\w \*]*\b(at[gm]?_\w+|\w+)\(")


def errors(root, include, source):
    """The line numbers of `source` that the compiler rejects."""
    cmd = [
        "c++", "-fsyntax-only", "-std=c++17", "-w", "-fmax-errors=0",
        "-D_GLIBCXX_USE_CXX11_ABI=1", "-DGLOG_USE_GLOG_EXPORT",
        "-I", include, "-I", f"{include}/torch/csrc/api/include", source,
    ]
    run = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    pattern = re.compile(rf"^{re.escape(source)}:(\d+):\d+: error", re.M)
    return sorted({int(n) for n in pattern.findall(run.stderr)}), run.stderr


def stub(lines, line, version):
    """Replaces the body of the function holding `line` (1-based); returns its name."""
    i = line - 1
    while i >= 0 and not START.match(lines[i]):
        i -= 1
    if i < 0:
        return None
    j = i + 1
    while j < len(lines) and lines[j].rstrip() != "}":
        j += 1
    name = START.match(lines[i]).group(1)
    message = f"{name}: not in libtorch {version}, which this build of tch links"
    body = [f'  PROTECT(throw std::runtime_error("{message}");)\n']
    if not lines[i].startswith("void "):
        # The error is reported through torch_last_err; the value returned is never read.
        body.append("  return {};\n")
    lines[i + 1:j] = body
    return name


def main():
    root, libtorch, version = sys.argv[1:4]
    include = f"{libtorch}/include"
    for source in FILES:
        path = f"{root}/{source}"
        for _ in range(200):
            bad, log = errors(root, include, source)
            if not bad:
                break
            with open(path) as f:
                lines = f.readlines()
            # Stub from the bottom up so the line numbers above stay valid.
            names = {stub(lines, line, version) for line in sorted(bad, reverse=True)} - {None}
            print("\n".join(sorted(names)))
            if not names:
                sys.exit(f"tch_for_torch: {source} fails where no shim function can be stubbed:\n{log[-4000:]}")
            with open(path, "w") as f:
                f.writelines(lines)
        else:
            sys.exit(f"tch_for_torch: {source} still fails after 200 rounds")


if __name__ == "__main__":
    main()
