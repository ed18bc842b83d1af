#!/usr/bin/env python3
"""Checks that the built book's images load in headless Chromium.

    python3 scripts/check_book_render.py [BUILD_DIR]

For the index, a concepts page, the performance page and every other built page that shows
an image, it writes a small HTML page that loads each of that page's `<img>`s (resolved as
the page resolves them) and records whether each loaded and its `naturalWidth`, opens it with
`chromium --headless --dump-dom`, and reads the results back from the dumped DOM. It fails
(exit 1, naming the page and the image) on an image that did not load or has no width.

Chromium is found as the picture tests find it (`RLGRAPH_CHROMIUM`, then
/usr/bin/chromium, chromium-browser, google-chrome; scripts/install-test-tools.sh installs
it). Without it the check is skipped, and fails only under RLGRAPH_REQUIRE_TOOLS=1 (which
./scripts/test.sh sets). Python's standard library only.
"""

import html
import html.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PAGES = ["index.html", "concepts/meta-graph.html", "performance/index.html"]


def shown(path):
    """A path as messages show it: from the repository's root where it lies inside it."""
    rel = os.path.relpath(path, REPO)
    return path if rel.startswith("..") else rel


def chromium():
    if os.environ.get("RLGRAPH_CHROMIUM"):
        path = os.environ["RLGRAPH_CHROMIUM"]
        return path if os.path.exists(path) else None
    for path in ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]:
        if os.path.exists(path):
            return path
    return shutil.which("chromium")


class Images(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.srcs = []

    def handle_starttag(self, tag, attrs):
        src = dict(attrs).get("src")
        if tag == "img" and src and src not in self.srcs:
            self.srcs.append(src)


def images_of(page):
    parser = Images()
    parser.feed(pathlib.Path(page).read_text(encoding="utf-8"))
    return parser.srcs


PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>image probe</title></head>
<body><pre id="results">pending</pre>
<script>
const srcs = %s;
const results = [];
let left = srcs.length;
function done() {
  document.getElementById("results").textContent = "RESULTS " + JSON.stringify(results);
}
if (left === 0) done();
srcs.forEach((src, i) => {
  const img = new Image();
  const finish = (loaded) => {
    results[i] = {src: src, loaded: loaded, width: img.naturalWidth, height: img.naturalHeight};
    if (--left === 0) done();
  };
  img.onload = () => finish(true);
  img.onerror = () => finish(false);
  img.src = src;
});
</script></body></html>
"""


def probe(binary, page, srcs, workdir):
    """Loads `srcs` (as `page` resolves them) in headless Chromium; returns one result each."""
    base = pathlib.Path(page).parent
    urls = []
    for src in srcs:
        parts = urllib.parse.urlsplit(src)
        if parts.scheme in ("http", "https", "data"):
            urls.append(src)
        else:
            urls.append((base / urllib.parse.unquote(parts.path)).resolve().as_uri())
    probe_page = pathlib.Path(workdir) / "probe.html"
    probe_page.write_text(PROBE % json.dumps(urls), encoding="utf-8")
    profile = pathlib.Path(workdir) / "profile"
    # The flags are the picture tests' (rlgraph-cli/tests/integration/graph_pictures.rs): off
    # the network, out of the user's profile.
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--allow-file-access-from-files",
        "--user-data-dir=%s" % profile,
        "--virtual-time-budget=5000",
        "--dump-dom",
        probe_page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    m = re.search(r"RESULTS (\[.*?\])</pre>", done.stdout, re.DOTALL)
    if not m:
        raise RuntimeError("chromium gave no results for %s (exit %d): %s"
                           % (page, done.returncode, done.stderr.strip()[-500:]))
    return json.loads(html.unescape(m.group(1)))


def main():
    build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(REPO, "docs", "book", "build")
    if not os.path.isfile(os.path.join(build, "index.html")):
        print("check_book_render: no built book in %s (run ./scripts/book.sh)" % build, file=sys.stderr)
        return 1
    binary = chromium()
    if not binary:
        required = os.environ.get("RLGRAPH_REQUIRE_TOOLS") == "1"
        print("check_book_render: %s: no chromium (scripts/install-test-tools.sh installs it)"
              % ("failed" if required else "skipped"), file=sys.stderr)
        return 1 if required else 0
    pages = [os.path.join(build, p) for p in PAGES]
    for root, _, files in os.walk(build):
        for f in sorted(files):
            path = os.path.join(root, f)
            if f.endswith(".html") and f != "print.html" and path not in pages and images_of(path):
                pages.append(path)
    errors, checked = [], 0
    with tempfile.TemporaryDirectory(prefix="rlgraph-book-render-") as workdir:
        for page in pages:
            if not os.path.isfile(page):
                errors.append("%s: page missing from the build" % shown(page))
                continue
            srcs = images_of(page)
            try:
                results = probe(binary, page, srcs, workdir)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                errors.append(str(e))
                continue
            for src, result in zip(srcs, results):
                checked += 1
                if not result or not result["loaded"] or result["width"] <= 0:
                    errors.append("%s: image %s did not load (%s)" % (shown(page), src, result))
    for error in errors:
        print(error, file=sys.stderr)
    if errors:
        print("check_book_render: %d problem(s)" % len(errors), file=sys.stderr)
        return 1
    print("check_book_render: %d pages, %d images, every one loaded in headless Chromium" % (len(pages), checked),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
