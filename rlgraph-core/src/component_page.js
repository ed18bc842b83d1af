// The page's behaviour. VIEW is the component view's JSON (nodes with their methods,
// signatures, variables and devices; edges with the methods data flows into). Positions
// are fixed by the Rust layout: collapsing a scope hides what lies under it and redraws
// the edges between the boxes still shown, so nothing moves under the reader's eyes.
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const byPath = new Map(VIEW.nodes.map((n) => [n.path, n]));
  const boxes = new Map();
  document.querySelectorAll("g.node").forEach((g) => boxes.set(g.dataset.path, g));
  const frames = new Map();
  document.querySelectorAll("g.cluster").forEach((g) => frames.set(g.dataset.path, g));
  const collapsed = new Set();
  const under = (p, s) => p === s || p.startsWith(s + "/");

  // The box a path is drawn as: the outermost collapsed scope holding it, or itself.
  function shownAs(path) {
    let rep = path;
    for (const c of collapsed) {
      if (under(path, c) && c.length < rep.length) rep = c;
    }
    return rep;
  }
  const hiddenByAncestor = (path) => [...collapsed].some((c) => c !== path && under(path, c));

  function rectOf(path) {
    const r = boxes.get(path).querySelector("rect");
    const f = (a) => parseFloat(r.getAttribute(a));
    return { x: f("x"), y: f("y"), w: f("width"), h: f("height") };
  }

  function drawEdges() {
    const layer = document.getElementById("edges");
    layer.replaceChildren();
    const merged = new Map();
    for (const e of VIEW.edges) {
      const a = shownAs(e.from);
      const b = shownAs(e.to);
      if (a === b) continue;
      const key = a + "\u0000" + b;
      if (!merged.has(key)) merged.set(key, { a, b, methods: new Set() });
      e.methods.forEach((m) => merged.get(key).methods.add(m));
    }
    for (const { a, b, methods } of merged.values()) {
      const ra = rectOf(a);
      const rb = rectOf(b);
      const x1 = ra.x + ra.w, y1 = ra.y + ra.h / 2, x2 = rb.x, y2 = rb.y + rb.h / 2;
      const dx = Math.max(30, Math.abs(x2 - x1) / 2);
      const path = document.createElementNS(SVG, "path");
      path.setAttribute("d", `M ${x1} ${y1} C ${x1 + dx} ${y1}, ${x2 - dx} ${y2}, ${x2} ${y2}`);
      path.dataset.from = a;
      path.dataset.to = b;
      layer.appendChild(path);
      const label = document.createElementNS(SVG, "text");
      label.setAttribute("x", (x1 + x2) / 2);
      label.setAttribute("y", (y1 + y2) / 2 - 3);
      label.textContent = [...methods].join(", ");
      layer.appendChild(label);
    }
  }

  function redraw() {
    let shown = 0;
    for (const [path, g] of boxes) {
      const visible = shownAs(path) === path;
      g.classList.toggle("hidden", !visible);
      g.classList.toggle("collapsed", collapsed.has(path));
      const inside = [...boxes.keys()].filter((p) => p !== path && under(p, path)).length;
      g.querySelector(".badge").textContent = collapsed.has(path) ? `+${inside}` : "";
      if (visible) shown += 1;
    }
    for (const [path, g] of frames) {
      g.classList.toggle("hidden", hiddenByAncestor(path));
      g.classList.toggle("collapsed", collapsed.has(path));
      const frame = g.querySelector(".frame");
      if (!frame.dataset.full) {
        frame.dataset.full = ["x", "y", "width", "height"].map((a) => frame.getAttribute(a)).join(" ");
      }
      // A collapsed scope's frame shrinks to a halo around its own box.
      const [x, y, w, h] = collapsed.has(path)
        ? (({ x, y, w, h }) => [x - 4, y - 4, w + 8, h + 8])(rectOf(path))
        : frame.dataset.full.split(" ").map(Number);
      frame.setAttribute("x", x);
      frame.setAttribute("y", y);
      frame.setAttribute("width", w);
      frame.setAttribute("height", h);
    }
    drawEdges();
    document.getElementById("graph").dataset.shown = shown;
    document.getElementById("shown").textContent = `${shown} of ${boxes.size} components shown`;
  }

  function toggle(path) {
    if (collapsed.has(path)) collapsed.delete(path);
    else collapsed.add(path);
    redraw();
  }

  for (const [path, g] of frames) {
    g.querySelector(".title").addEventListener("click", () => toggle(path));
    boxes.get(path)?.classList.add("scope");
    boxes.get(path)?.addEventListener("click", () => toggle(path));
  }

  document.getElementById("collapse-all").addEventListener("click", () => {
    const tops = [...frames.keys()].filter((p) => ![...frames.keys()].some((q) => q !== p && under(p, q)));
    for (const p of frames.keys()) if (!tops.includes(p)) collapsed.add(p);
    redraw();
  });
  document.getElementById("expand-all").addEventListener("click", () => {
    collapsed.clear();
    redraw();
  });

  // Hover: the box's path, what each API method takes and returns, variables, devices.
  const tip = document.getElementById("tip");
  function describe(path) {
    const n = byPath.get(path);
    const lines = [n.kind ? `${path} (${n.kind})` : path];
    if (n.merged > 0) lines.push(`${n.merged} components merged into this box`);
    for (const [method, sig] of Object.entries(n.signatures)) {
      const ins = sig.inputs.length ? sig.inputs.join(" | ") : "";
      const outs = sig.outputs.length ? sig.outputs.join(" | ") : "?";
      lines.push(`${method}(${ins}) -> ${outs}`);
    }
    if (n.variables.length) lines.push(`${n.variables.length} variables, ${n.variable_elements} elements`);
    lines.push(`device: ${n.devices.join(", ")}`);
    if (n.backend_ms !== null && n.backend_ms !== undefined) {
      lines.push(`backend time: ${n.backend_ms.toFixed(2)} ms, ${(100 * n.backend_share).toFixed(1)}% of the graph's`);
    }
    return lines.join("\n");
  }
  for (const [path, g] of boxes) {
    g.addEventListener("mouseenter", () => {
      tip.textContent = describe(path);
      tip.hidden = false;
    });
    g.addEventListener("mousemove", (ev) => {
      tip.style.left = `${ev.clientX + 14}px`;
      tip.style.top = `${ev.clientY + 14}px`;
    });
    g.addEventListener("mouseleave", () => {
      tip.hidden = true;
    });
  }

  // Search: matching boxes are highlighted, the rest dimmed, and scopes hiding a match
  // are expanded.
  const search = document.getElementById("search");
  search.addEventListener("input", () => {
    const q = search.value.trim().toLowerCase();
    const hits = q ? [...boxes.keys()].filter((p) => p.toLowerCase().includes(q)) : [];
    for (const h of hits) for (const c of [...collapsed]) if (c !== h && under(h, c)) collapsed.delete(c);
    for (const [path, g] of boxes) {
      g.classList.toggle("hit", hits.includes(path));
      g.classList.toggle("dim", q !== "" && !hits.includes(path));
    }
    document.getElementById("found").textContent = q ? `${hits.length} found` : "";
    redraw();
    if (hits.length) boxes.get(hits[0]).scrollIntoView({ block: "center", inline: "center" });
  });

  redraw();
})();
