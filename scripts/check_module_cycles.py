#!/usr/bin/env python3
"""Holds ARCHITECTURE.md's rule that no modules of a crate import each other, in a circle of
two or more.

For each workspace crate, every `crate::...` and `super::...` path outside comments and
`#[cfg(test)]` code is an edge from its module to the module it names (through `pub use`
re-exports, so `crate::Thing` counts as the module that defines `Thing`); a module naming
its own parent is not an edge (a parent's `mod.rs` is where its children's shared items
live). Prints every circle and exits 1 if there is one.
"""
import pathlib
import re
import sys
import tomllib

root = pathlib.Path(__file__).resolve().parent.parent


def source_without_comments_and_tests(text):
    text = text.split("#[cfg(test)]")[0]
    return "\n".join(line for line in text.split("\n") if not line.strip().startswith("//"))


def modules(src):
    """Module path ('' for the crate root, 'a::b') -> its code."""
    found = {}
    for path in src.rglob("*.rs"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if "bin" in parts:
            continue
        if parts[-1] in ("mod", "lib", "main"):
            parts = parts[:-1]
        found["::".join(parts)] = source_without_comments_and_tests(path.read_text())
    return found


def resolve(mods, base, path):
    """The deepest module `base` + `path` names, and the rest of the path."""
    for k in range(len(path), 0, -1):
        candidate = "::".join(base + path[:k])
        if candidate in mods:
            return candidate, path[k:]
    joined = "::".join(base)
    return (joined if joined in mods else None), path


def anchored(module, prefix):
    """The module a `use` prefix (`crate::a`, `super::b`, `self::c`, `d`) starts from."""
    parts = module.split("::") if module else []
    names = [p for p in prefix.split("::") if p]
    if names and names[0] == "crate":
        return [], names[1:]
    if names and names[0] == "super":
        return parts[:-1], names[1:]
    if names and names[0] == "self":
        return parts, names[1:]
    return parts, names


def reexports(mods):
    """Module -> name it re-exports -> the module that defines it."""
    table = {}
    for module, text in mods.items():
        for use in re.finditer(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", text, re.S):
            body = " ".join(use.group(1).split())
            grouped = re.match(r"(.*?)::\{(.*)\}$", body)
            if grouped:
                items = [(grouped.group(1), item.strip()) for item in grouped.group(2).split(",") if item.strip()]
            elif "::" in body:
                head, _, name = body.rpartition("::")
                items = [(head, name)]
            else:
                items = []
            for prefix, name in items:
                base, names = anchored(module, prefix)
                target, _ = resolve(mods, base, names)
                if target is not None and target != module:
                    table.setdefault(module, {})[name.split(" as ")[-1].strip()] = target
    return table


def edges(mods):
    table = reexports(mods)
    graph = {}
    for module, text in mods.items():
        parts = module.split("::") if module else []
        deps = set()
        for use in re.finditer(r"\b(crate|super)((?:::\w+)+)", text):
            names = use.group(2).split("::")[1:]
            base = [] if use.group(1) == "crate" else parts[:-1]
            target, rest = resolve(mods, base, names)
            if rest and target is not None and rest[0] in table.get(target, {}):
                target = table[target][rest[0]]
            if target and target != module and not module.startswith(target + "::"):
                deps.add(target)
        graph[module] = deps
    return graph


def circles(graph):
    """Strongly connected sets of two or more modules (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.append(w)
                if w == v:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    sys.setrecursionlimit(10_000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def self_test():
    """The check finds a circle of two, one through a re-export and one of three, and passes
    a parent naming its child and a child naming its parent."""
    mods = {
        "": "pub use thing::Thing;\nmod a; mod b; mod c; mod d; mod e; mod thing; mod outer;",
        "a": "use crate::b::B;",
        "b": "use crate::a::A;",
        "thing": "use crate::c::C;",
        "c": "fn f() -> crate::Thing { todo!() }",
        "d": "use super::e::E;",
        "e": "use crate::outer::inner::I;",
        "outer": "pub mod inner; use self::inner::I;",
        "outer::inner": "use super::helper; use crate::d::D;",
    }
    found = circles(edges(mods))
    expected = [["a", "b"], ["c", "thing"], ["d", "e", "outer::inner"]]
    assert sorted(found) == expected, found


def main():
    self_test()
    workspace = tomllib.loads((root / "Cargo.toml").read_text())
    bad = 0
    for member in workspace["workspace"]["members"]:
        src = root / member / "src"
        if not src.is_dir():
            continue
        graph = edges(modules(src))
        for members in circles(graph):
            bad += 1
            print(f"{member}: these modules import each other in a circle:", file=sys.stderr)
            for m in members:
                print(f"  {m or '(crate root)'} -> {', '.join(sorted(graph[m] & set(members)))}", file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"check_module_cycles: {len(workspace['workspace']['members'])} crates, no modules importing each other", file=sys.stderr)


if __name__ == "__main__":
    main()
