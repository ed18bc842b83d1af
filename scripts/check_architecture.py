#!/usr/bin/env python3
"""Holds ARCHITECTURE.md's layer list to the crates' Cargo.toml files.

Each line of the "Layer by layer" list names crates, with the workspace crates each depends
on in brackets (short names: `core` for rlgraph-core). A crate with a bracket must depend on
exactly those workspace crates; every crate may depend only on crates of earlier layers; and
every workspace member must be in the list. Exits 1 naming the first difference.
"""
import pathlib
import re
import sys
import tomllib

root = pathlib.Path(__file__).resolve().parent.parent
workspace = tomllib.loads((root / "Cargo.toml").read_text())
members = {}
for path in workspace["workspace"]["members"]:
    manifest = tomllib.loads((root / path / "Cargo.toml").read_text())
    members[manifest["package"]["name"]] = manifest


def short(name):
    """rlgraph-core -> core, as the list writes them."""
    return name.removeprefix("rlgraph-")


def workspace_deps(name):
    deps = members[name].get("dependencies", {})
    return {short(d) for d in deps if d in members}


text = (root / "ARCHITECTURE.md").read_text()
block = text.split("Layer by layer", 1)[1].split("\n\n", 2)[1]
items = re.findall(r"^(\d+)\. (.*?)(?=^\d+\. |\Z)", block, re.S | re.M)
layer_of, listed = {}, {}
for number, line in items:
    line = " ".join(line.split())
    for part in line.split(";"):
        names = re.findall(r"`([^`]+)`", part.split("(")[0].split(":")[0])
        bracket = re.search(r"\(([^)]*)\)", part)
        for name in names:
            layer_of[short(name)] = int(number)
            if bracket:
                listed[short(name)] = {short(d.strip()) for d in bracket.group(1).split(",")}
            elif "no workspace crate" in part:
                listed[short(name)] = set()

failures = []
for name in members:
    if short(name) not in layer_of:
        failures.append(f"{name} is a workspace member but not in ARCHITECTURE.md's layer list")
        continue
    actual = workspace_deps(name)
    if short(name) in listed and actual != listed[short(name)]:
        failures.append(
            f"{name}: ARCHITECTURE.md lists {sorted(listed[short(name)])}, Cargo.toml has {sorted(actual)}"
        )
    for dep in actual:
        if layer_of.get(dep, 99) >= layer_of[short(name)]:
            failures.append(f"{name} (layer {layer_of[short(name)]}) depends on {dep}, not of an earlier layer")
for failure in failures:
    print(f"check_architecture: {failure}", file=sys.stderr)
if failures:
    sys.exit(1)
print(f"check_architecture: {len(members)} crates, each depending only on what ARCHITECTURE.md's layers allow", file=sys.stderr)
