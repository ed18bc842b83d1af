#!/usr/bin/env bash
# The README's test command: formatting, lints, docs, the book and every test, on both
# backends. On a fresh machine it first installs libtorch (the torch==2.13.0 wheel from PyPI)
# into the ignored folder .libtorch/, gymnasium and ale-py (for the Gymnasium bridge's tests)
# and mdbook (for the book) into the ignored venv .gym-venv/, and Chromium and Graphviz (for
# the picture tests and the book's render check) from Debian's packages; after that it takes
# seconds to confirm they are there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The crates download while libtorch does.
cargo fetch --locked --quiet &
fetch_pid=$!
./scripts/install-libtorch.sh
./scripts/install-test-tools.sh
wait "$fetch_pid"
# The venv is only needed by the tests, so it downloads while the lints compile.
gym_log="$(mktemp)"
./scripts/install-gym.sh >"$gym_log" &
gym_pid=$!
# The picture and bridge tests fail, rather than skip, when a tool is missing.
export RLGRAPH_REQUIRE_TOOLS=1 RLGRAPH_REQUIRE_GYM=1
# Property tests draw the same cases on every run of this command, so CI is red only for a
# change, never for a draw; `cargo test` without it draws new cases, and fuzz.sh explores.
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261125}"
export LIBTORCH="$PWD/.libtorch"
export LD_LIBRARY_PATH="$PWD/.libtorch/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step() { printf '\n==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
# The CLI's libtorch path, over the whole workspace so that every other crate keeps its
# features and only rlgraph-cli and the crates above it are checked again.
cargo clippy --workspace --all-targets --locked --features rlgraph-cli/tch -- -D warnings
# The face crate without its `distributed` feature, as a crate that trains in one process
# builds it (the workspace's own builds always have the feature, through the CLI).
cargo clippy -p rlgraph -p executors --all-targets --locked -- -D warnings

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

if ! wait "$gym_pid"; then
    echo "scripts/install-gym.sh failed; run it alone to see why" >&2
    exit 1
fi
RLGRAPH_PYTHON="$(tail -n 1 "$gym_log")"
export RLGRAPH_PYTHON

step "book (build, links, images)"
./scripts/book.sh

step "cargo test (candle and tch)"
# Libraries, binaries and integration tests, then the doc tests, with the CLI's libtorch path
# (`"backend": "tch"`, a feature) built in, so each test binary is built and run once.
# Examples are left out of this build: clippy --all-targets has already checked that they
# compile, and linking them again in the test profile cost minutes.
cargo test --workspace --locked --features rlgraph-cli/tch --tests
cargo test --workspace --locked --features rlgraph-cli/tch --doc
step "done"
