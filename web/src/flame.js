// The page's flamegraph: d3-flame-graph drawing one of the page's views
// (logical bytes, wire bytes; a diff's union of paths), with zoom, search
// and tooltips, and a diverging palette for diffs.

import { hsl } from "d3-color";
import flamegraph, { tooltip } from "d3-flame-graph";
import { interpolateRdBu, schemeSet3 } from "d3-scale-chromatic";
import { select } from "d3-selection";
import { timerFlush } from "d3-timer";
import { bytesExact, change, human, percent, plural, signedHuman, thousands } from "./format.js";

// The tree of a view, rebuilt from its columns (see src/render/html/flame.rs):
// nodes in preorder, each followed by `children` subtrees.
export function treeOf(view, rootLabel) {
  const t = view.tree;
  const diff = Array.isArray(t.old_bytes);
  const nodes = new Array(t.name.length);
  for (let i = 0; i < nodes.length; i++) {
    const node = { name: t.names[t.name[i]], value: t.bytes[i], leaves: t.leaves[i] };
    if (diff) {
      node.old = t.old_bytes[i];
      node.oldLeaves = t.old_leaves[i];
    }
    nodes[i] = node;
  }
  const open = [[nodes[0], t.children[0]]];
  for (let i = 1; i < nodes.length; i++) {
    while (open[open.length - 1][1] === 0) open.pop();
    const parent = open[open.length - 1];
    (parent[0].children ??= []).push(nodes[i]);
    parent[1] -= 1;
    open.push([nodes[i], t.children[i]]);
  }
  nodes[0].label = rootLabel;
  return { root: nodes[0], diff };
}

// The tree drawn leaves first (inferno's --reverse, memray's inverted flame
// graph): each frame's own figures (its own less its children's) stacked
// from that frame down to its top-level one, so that the root's children
// are the frames holding bytes, each as wide as it is wherever it sits,
// with its callers above it. Children largest first, as the page's trees.
const FIGURES = ["value", "leaves", "old", "oldLeaves"];
export function leavesFirst(tree) {
  const figures = FIGURES.filter((key) => tree.root[key] != null);
  const blank = (name) => Object.fromEntries([["name", name], ...figures.map((key) => [key, 0])]);
  const root = { ...blank(tree.root.name), label: tree.root.label };
  for (const key of figures) root[key] = tree.root[key];
  const kids = new Map();
  const child = (parent, name) => {
    let byName = kids.get(parent);
    if (!byName) kids.set(parent, (byName = new Map()));
    let node = byName.get(name);
    if (!node) {
      node = blank(name);
      byName.set(name, node);
      (parent.children ??= []).push(node);
    }
    return node;
  };
  // Depth first, with the path from the root's child down to each node.
  const path = [];
  const todo = (tree.root.children ?? []).map((node) => [node, 0]).reverse();
  while (todo.length) {
    const [node, depth] = todo.pop();
    path.length = depth;
    path.push(node);
    const own = figures.map((key) => node[key] - (node.children ?? []).reduce((sum, c) => sum + c[key], 0));
    if (own.some((x) => x > 0)) {
      let at = root;
      for (let i = path.length - 1; i >= 0; i--) {
        at = child(at, path[i].name);
        figures.forEach((key, k) => (at[key] += own[k]));
      }
    }
    for (const c of [...(node.children ?? [])].reverse()) todo.push([c, depth + 1]);
  }
  const size = (n) => Math.max(n.value, n.old ?? 0);
  const order = [root];
  while (order.length) {
    const n = order.pop();
    if (!n.children) continue;
    n.children.sort((a, b) => size(b) - size(a) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    order.push(...n.children);
  }
  return { root, diff: tree.diff, leavesFirst: true };
}

// Growth red, shrinkage blue, by the ratio of the two sides on a square-root
// scale that starts at a clear tint, so that a change of a tenth is told
// from none at a glance: any change is at least CHANGED of the way to the
// darkest red or blue, a path that grew by a tenth about 0.55, one that
// doubled 0.8, one that grew fourfold or was added the darkest (still
// light enough for a black label); unchanged paths are a light grey.
export const UNCHANGED = "#e3e3e3";
export const CHANGED = 0.4;
export function diverging(t) {
  return interpolateRdBu(0.5 - 0.36 * t);
}
export function diffColor(data) {
  const before = data.old;
  const after = data.value;
  if (before === after) return UNCHANGED;
  let t;
  if (before === 0) t = 1;
  else if (after === 0) t = -1;
  else {
    const r = Math.min(1, Math.abs(Math.log2(after / before)) / 2);
    t = Math.sign(after - before) * (CHANGED + (1 - CHANGED) * Math.sqrt(r));
  }
  return diverging(t);
}

// One hue per top-level part of an instance (constraints, variables, ...),
// each frame a little lighter or darker by its name, so neighbours part.
// The frames naming a layer or an input of several stand above those
// parts, in grey.
const GROUPING = /^(layer|file)\[\d+\]/;
function hashOf(text) {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
}
export function sectionColor(d) {
  const chain = d.ancestors().reverse().slice(1);
  const top = chain.find((a) => !GROUPING.test(a.data.name));
  if (!top) return d.depth === 0 ? "#c9cfd6" : "#aab4bf";
  const base = hsl(schemeSet3[Math.abs(hashOf(top.data.name)) % schemeSet3.length]);
  base.l = Math.min(0.9, Math.max(0.55, base.l + (((hashOf(d.data.name) >>> 0) % 13) - 6) / 100));
  return base.formatRgb();
}

// A frame's label in `px` pixels: the whole name when it fits, else its
// meaningful end: the field of `Type.field`, the part of `Container[part]`
// (the type or container is the frame's parent's business); the page's
// stylesheet cuts what still does not fit.
const measure = document.createElement("canvas").getContext("2d");
measure.font = "12px system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif";
const widths = new Map();
function textWidth(text) {
  let w = widths.get(text);
  if (w === undefined) widths.set(text, (w = measure.measureText(text).width));
  return w;
}
// d3-flame-graph shows no label in a frame narrower than this.
const LABELLED = 35;
export function labelFor(name, px) {
  const room = px - 8;
  if (px < LABELLED || textWidth(name) <= room) return name;
  let short = name;
  const bracket = name.indexOf("[");
  const dot = name.lastIndexOf(".");
  if (bracket > 0 && name.endsWith("]")) short = `…${name.slice(bracket)}`;
  else if (dot > 0 && dot < name.length - 1) short = `…${name.slice(dot + 1)}`;
  // Less than three characters and the ellipsis would say nothing.
  return textWidth(`${short.slice(0, 3)}…`) <= room ? short : "";
}

// A frame's path, frames joined by ';'; drawn leaves first, the frame and
// its callers above it, each held by the next: `terms ← Linear ← function`.
export function pathOf(node, leavesFirst = false) {
  const frames = node
    .ancestors()
    .reverse()
    .slice(1)
    .map((a) => a.data.name);
  return leavesFirst ? frames.reverse().join(" ← ") : frames.join(";");
}

export class Graph {
  // hooks: { onSearch(text), onZoom(node or null) }
  constructor(container, hooks) {
    this.container = container;
    this.hooks = hooks;
    this.icicle = true;
    this.leavesFirst = false;
    this.widths = "new";
    this.term = "";
    this.chart = null;
    new ResizeObserver(() => this.fit()).observe(container);
  }

  // Draws `source` (from treeOf), or its leaves-first tree, replacing what
  // was drawn.
  show(source) {
    if (this.chart) this.chart.destroy();
    select(this.container).selectAll("*").remove();
    this.source = source;
    const tree = this.leavesFirst ? (source.reversed ??= leavesFirst(source)) : source;
    this.tree = tree;
    this.total = tree.root.value;
    const tip = tooltip.defaultFlamegraphTooltip().text((d) => this.describe(d));
    // Drawn at once (no entrance transition: thousands of frames would
    // animate for a second, see settle()); zooms then animate.
    const chart = flamegraph()
      .width(Math.max(this.container.clientWidth, 320))
      .cellHeight(18)
      .transitionDuration(0)
      .minFrameSize(0.4)
      .sort(false)
      .inverted(this.icicle)
      .title("")
      .getName((d) => labelFor(d.data.label ?? d.data.name, (d.x1 - d.x0) * this.chart.width()))
      .getValue((data) => (this.widths === "old" ? data.old : data.value))
      .setSearchMatch((d, term) => d.depth > 0 && d.data.name.toLowerCase().includes(term))
      .setSearchHandler((results) => this.searched(results))
      .setDetailsHandler(() => {})
      .onClick((d) => this.hooks.onZoom(d.depth > 0 ? d : null))
      .tooltip(tip);
    const color = tree.diff ? (d) => diffColor(d.data) : sectionColor;
    chart.setColorMapper((d, original) => (d.highlight ? original : color(d)));
    this.chart = chart;
    select(this.container).datum(tree.root).call(chart);
    this.settle();
    chart.transitionDuration(250);
    this.hooks.onZoom(null);
    if (this.term) this.search(this.term);
  }

  // The width follows the container (a resized window, a notebook cell, a
  // scroll bar that came with the page's tables), at once: the graph is
  // never caught half-drawn, as it would be between a transition's ends.
  fit() {
    if (!this.chart) return;
    const width = Math.max(this.container.clientWidth, 320);
    if (Math.abs(width - this.chart.width()) < 1) return;
    this.chart.transitionDuration(0).width(width).update();
    this.settle();
    this.chart.transitionDuration(250);
  }

  // Ends a redraw at once, so that the graph is whole before it is painted
  // (a screenshot or a print never catches the root narrower than its
  // children): d3's transitions start on the next animation frame even
  // when of no duration, so they are run now; and d3-flame-graph grows each
  // new frame from nothing over d3's default 250 ms whatever its duration,
  // so that growth is stopped and the frame given its width, which its
  // group holds.
  settle() {
    timerFlush();
    select(this.container)
      .selectAll("g.frame")
      .each(function () {
        select(this).select("rect").interrupt().attr("width", this.getAttribute("width"));
      });
  }

  setIcicle(on) {
    this.icicle = on;
    if (this.source) this.show(this.source);
  }

  setLeavesFirst(on) {
    this.leavesFirst = on;
    if (this.source) this.show(this.source);
  }

  setWidths(side) {
    this.widths = side;
    if (this.source) this.show(this.source);
  }

  resetZoom() {
    this.chart?.resetZoom();
  }

  // Zooms to the frame at `path` (frames joined by ';'), if it is drawn.
  zoomToPath(path) {
    let node = select(this.container).datum();
    for (const frame of path.split(";")) {
      node = node?.children?.find((c) => c.data.name === frame);
    }
    if (node) this.chart.zoomTo(node);
    return Boolean(node);
  }

  search(term) {
    this.term = term.trim().toLowerCase();
    if (!this.chart) return;
    if (this.term) this.chart.search(this.term);
    else {
      this.chart.clear();
      this.hooks.onSearch(null);
    }
  }

  // The matches' share: bytes under the outermost matches only, so
  // nested matches are not counted twice.
  searched(results) {
    const matched = new Set(results);
    const value = (d) => (this.widths === "old" ? d.data.old : d.data.value);
    let bytes = 0;
    for (const d of results) {
      if (!d.ancestors().slice(1).some((a) => matched.has(a))) bytes += value(d);
    }
    const total = this.widths === "old" ? this.tree.root.old : this.total;
    this.hooks.onSearch({ frames: results.length, bytes, total });
  }

  // The tooltip of a frame: its path, bytes, share and leaves.
  describe(d) {
    const data = d.data;
    const lines = [d.depth === 0 ? data.label : data.name];
    if (d.depth > 1) lines.push(pathOf(d, this.leavesFirst));
    if (!this.tree.diff) {
      const parent = d.parent ? `, ${percent(data.value, d.parent.data.value)} of its parent` : "";
      lines.push(bytesExact(data.value));
      lines.push(`${percent(data.value, this.total)} of the total${parent}`);
      lines.push(plural(data.leaves, "leaf", "leaves"));
    } else {
      const status = data.old === 0 && data.value > 0 ? "added" : data.value === 0 && data.old > 0 ? "removed" : null;
      lines.push(`old ${human(data.old)} → new ${human(data.value)}`);
      lines.push(`${signedHuman(data.value - data.old)} (${change(data.old, data.value, status)})`);
      lines.push(
        `${percent(data.value, this.total)} of the new total, ${percent(data.old, this.tree.root.old)} of the old`,
      );
      lines.push(`leaves ${thousands(data.oldLeaves)} → ${thousands(data.leaves)}`);
    }
    return lines.join("\n");
  }
}
