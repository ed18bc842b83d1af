#!/usr/bin/env bash
# Installs the programs the picture and across-hosts tests drive, from Debian's packages, when they are
# missing: Chromium (the `rlgraph graph --format html` page is opened and clicked in it
# headless), Graphviz (the component view's DOT is rendered to check its size) and iproute2
# (the distributed test across hosts runs each role in a network namespace of its own).
# Idempotent: with all three present it only says so.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || [[ -x /usr/bin/chromium ]] || missing+=(chromium)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
command -v ip >/dev/null 2>&1 || [[ -x /usr/sbin/ip || -x /sbin/ip ]] || missing+=(iproute2)
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "chromium, graphviz and iproute2 present" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install ${missing[*]} with your package manager (the picture and across-hosts tests need them)" >&2
    exit 1
fi
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
echo "installing ${missing[*]} from Debian's packages" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
