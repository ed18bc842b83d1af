#!/usr/bin/env python3
"""Checks the book's links and images, and the README's and ARCHITECTURE.md's links.

    python3 scripts/check_book_links.py [BUILD_DIR]

BUILD_DIR is the built book (default: docs/book/build, where ./scripts/book.sh builds it).
Over the book's markdown sources (docs/book/src), README.md and ARCHITECTURE.md, and over
every page of the built HTML, it fails (exit 1, naming the file and the link) on:

- a relative link whose target file does not exist;
- a `#anchor` into a page (or within one) that has no element with that id in the built
  HTML (for a markdown file outside the book, no heading with that GitHub-style slug);
- an image (markdown `![..](..)` or `<img src>`) whose file is missing from the build.

External links (http, https, mailto, ...) are not checked. Python's standard library only.
"""

import html.parser
import os
import re
import sys
import urllib.parse

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BOOK_SRC = os.path.join(REPO, "docs", "book", "src")
TOP_LEVEL = ["README.md", "ARCHITECTURE.md"]

# A markdown link or image: `[text](target "title")`, the text allowed one level of brackets
# and line breaks.
MD_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_IMG = re.compile(r"<img\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.IGNORECASE)
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def shown(path):
    """A path as messages show it: from the repository's root where it lies inside it."""
    rel = os.path.relpath(path, REPO)
    return path if rel.startswith("..") else rel


def is_external(target):
    scheme = urllib.parse.urlsplit(target).scheme
    return scheme != "" or target.startswith("//")


def strip_code(text):
    """The markdown text without fenced code blocks and code spans (links there are code)."""
    lines, fenced = [], None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if m:
            if fenced is None:
                fenced = m.group(1)
            elif m.group(1) == fenced:
                fenced = None
            lines.append("")
            continue
        lines.append("" if fenced else line)
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), "\n".join(lines))


def slug(heading):
    """GitHub's (and mdBook's) id for a heading's text."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_heading_ids(path):
    ids, counts = set(), {}
    for line in strip_code(open(path, encoding="utf-8").read()).split("\n"):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = counts.get(base, 0)
            counts[base] = n + 1
            ids.add(base if n == 0 else "%s-%d" % (base, n))
    return ids


class PageParser(html.parser.HTMLParser):
    """Collects a page's ids, its `<a href>`s and its `<img src>`s."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.images = set(), [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href") is not None:
            self.links.append(attrs["href"])
        if tag == "img" and attrs.get("src") is not None:
            self.images.append(attrs["src"])


class Checker:
    def __init__(self, build):
        self.build = build
        self.pages = {}
        self.errors = []

    def page(self, path):
        if path not in self.pages:
            parser = PageParser()
            parser.feed(open(path, encoding="utf-8").read())
            self.pages[path] = parser
        return self.pages[path]

    def fail(self, where, target, why):
        error = "%s: %s: %s" % (shown(where), target, why)
        if error not in self.errors:
            self.errors.append(error)

    def built_page_for(self, md_path):
        """The built HTML page of a book source file, or None outside the book."""
        rel = os.path.relpath(md_path, BOOK_SRC)
        if rel.startswith(".."):
            return None
        return os.path.join(self.build, os.path.splitext(rel)[0] + ".html")

    def check_anchor(self, where, target, page_path, anchor, md_path=None):
        anchor = urllib.parse.unquote(anchor)
        if page_path is not None and os.path.isfile(page_path):
            if anchor not in self.page(page_path).ids:
                self.fail(where, target, "no element with id %r in %s" % (anchor, shown(page_path)))
        elif md_path is not None:
            if anchor not in markdown_heading_ids(md_path):
                self.fail(where, target, "no heading with id %r in %s" % (anchor, shown(md_path)))
        else:
            self.fail(where, target, "the page the anchor points into was not built")

    def check_markdown(self, md_path):
        text = strip_code(open(md_path, encoding="utf-8").read())
        found = [(m.group(1) == "!", m.group(3)) for m in MD_LINK.finditer(text)]
        found += [(True, src) for src in HTML_IMG.findall(text)]
        for is_image, target in found:
            if is_external(target):
                continue
            parts = urllib.parse.urlsplit(target)
            if not parts.path:
                # An anchor within this file.
                self.check_anchor(md_path, target, self.built_page_for(md_path), parts.fragment, md_path)
                continue
            dest = os.path.normpath(os.path.join(os.path.dirname(md_path), urllib.parse.unquote(parts.path)))
            if not os.path.exists(dest):
                self.fail(md_path, target, "no such file (%s)" % shown(dest))
                continue
            built = self.built_page_for(dest) if dest.endswith(".md") else None
            if is_image or not dest.endswith(".md"):
                # A file the book serves must be in the build too.
                rel = os.path.relpath(dest, BOOK_SRC)
                if not rel.startswith("..") and not os.path.isfile(os.path.join(self.build, rel)):
                    self.fail(md_path, target, "missing from the build (%s)" % rel)
            if parts.fragment:
                if dest.endswith(".md"):
                    self.check_anchor(md_path, target, built, parts.fragment, dest)
                else:
                    self.fail(md_path, target, "an anchor into a file that is not a page")

    def check_html(self, html_path):
        page = self.page(html_path)
        for is_image, target in [(False, t) for t in page.links] + [(True, t) for t in page.images]:
            if not target or is_external(target) or target.startswith("javascript:"):
                continue
            parts = urllib.parse.urlsplit(target)
            if not parts.path:
                if parts.fragment:
                    self.check_anchor(html_path, target, html_path, parts.fragment)
                continue
            dest = os.path.normpath(os.path.join(os.path.dirname(html_path), urllib.parse.unquote(parts.path)))
            if os.path.isdir(dest):
                dest = os.path.join(dest, "index.html")
            if not os.path.isfile(dest):
                why = "image missing from the build" if is_image else "no such file in the build"
                self.fail(html_path, target, "%s (%s)" % (why, shown(dest)))
                continue
            if parts.fragment and dest.endswith(".html"):
                self.check_anchor(html_path, target, dest, parts.fragment)


def main():
    build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(REPO, "docs", "book", "build")
    if not os.path.isfile(os.path.join(build, "index.html")):
        print("check_book_links: no built book in %s (run ./scripts/book.sh)" % build, file=sys.stderr)
        return 1
    checker = Checker(build)
    sources = [os.path.join(REPO, name) for name in TOP_LEVEL]
    for root, _, files in os.walk(BOOK_SRC):
        sources += [os.path.join(root, f) for f in sorted(files) if f.endswith(".md")]
    pages = []
    for root, _, files in os.walk(build):
        pages += [os.path.join(root, f) for f in sorted(files) if f.endswith(".html")]
    for path in sources:
        checker.check_markdown(path)
    for path in pages:
        checker.check_html(path)
    for error in checker.errors:
        print(error, file=sys.stderr)
    if checker.errors:
        print("check_book_links: %d broken link(s)" % len(checker.errors), file=sys.stderr)
        return 1
    print("check_book_links: %d markdown files and %d pages, every relative link, anchor and image resolves"
          % (len(sources), len(pages)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
