// memprof's report page: reads the page document (src/render/html/page.rs)
// from the inline JSON and draws the header facts, the flamegraph and the
// tables. Everything is in the page; nothing is fetched.

import { select } from "d3-selection";
import { CHANGED, diverging, Graph, pathOf, treeOf, UNCHANGED } from "./flame.js";
import { about, bytesExact, change, human, percent, plural, signedHuman, thousands } from "./format.js";
import { sortableTable } from "./table.js";
import "./report.css";

const page = JSON.parse(document.getElementById("memprof-data").textContent);
const main = select("#memprof-report");
main.selectAll("noscript").remove();

// In a frame (a notebook's output), the page starts short: its sections
// below the graph folded, each opened by a click on its title.
const embedded = window.parent !== window;
const sections = [];
// Zooms the graph to a path (set once the graph is drawn).
let zoomGraphTo = () => false;
// A section folds: its title is the summary of a <details> holding the rest.
function section(id, title) {
  sections.push({ id, title });
  const details = main
    .append("section")
    .attr("id", id)
    .append("details")
    .property("open", !embedded || id === "graph");
  details.append("summary").append("h2").text(title);
  return details;
}
// Opens the section holding `element`, if it is folded.
function unfold(element) {
  const details = element?.closest("section")?.querySelector(":scope > details");
  if (details) details.open = true;
}

header();
graph();
if (page.changes) changes(page.changes);
if (page.advice) advice(page.advice);
if (page.top) top(page.top);
if (page.families) families(page.families);
if (page.kinds) kinds(page.kinds);
nav();
followHeight();
// When the page was drawn, in milliseconds since navigation began (the
// browser tests read it).
window.memprofReady = performance.now();

function header() {
  const h = main.append("header");
  h.append("h1").text(page.title);
  const grid = h.append("div").attr("class", "facts");
  for (const input of page.inputs) {
    const card = grid.append("dl").attr("class", `card ${input.role}`);
    const fact = (term, value) => {
      card.append("dt").text(term);
      card.append("dd").text(value);
    };
    if (input.role !== "input") card.append("div").attr("class", "role").text(input.role);
    fact("input", input.name);
    const kind = {
      raw: "raw instance bytes",
      archive: ".ommx archive",
      directory: "OCI layout directory",
      artifact: "OMMX artifact (its layers, handed over by OMMX)",
    }[input.container] ?? input.container;
    fact("kind", input.baseline_of ? `baseline of ${input.baseline_of}` : `${kind}${input.gzip ? ", gzip" : ""}`);
    fact("layers", input.layers);
    const c = input.counts;
    fact(
      "entities",
      [
        plural(c.variables, "variable", "variables"),
        plural(c.constraints, "constraint", "constraints"),
        plural(c.removed_constraints, "removed constraint", "removed constraints"),
        plural(c.named_functions, "named function", "named functions"),
        plural(c.terms, "stored term", "stored terms"),
      ].join(", "),
    );
    if (input.file_bytes != null) fact("file", bytesExact(input.file_bytes));
    if (!input.baseline_of) fact("wire", `${bytesExact(c.wire_bytes)} of instance data`);
    card.append("dt").text("logical");
    const dd = card.append("dd");
    dd.append("strong").attr("class", "total").text(bytesExact(input.logical_bytes));
    dd.append("span").text(`, ${input.accounting}`);
    const real = input.real_memory;
    if (real) {
      card.append("dt").text("real memory");
      card
        .append("dd")
        .attr("class", "real-memory")
        .text(
          `${about(real.resident_bytes)} resident, ~${human(real.load_peak_bytes)} peak to load in ${real.runtime}, estimated` +
            (real.first_load_extra_bytes > 0
              ? `; a fresh process's first load adds ~${human(real.first_load_extra_bytes)}`
              : ""),
        );
      const held = real.held_bytes;
      const owners = [
        ["decision_variables", "variables"],
        ["objective", "objective"],
        ["constraints", "constraints"],
        ["removed_constraints", "removed constraints"],
        ["instance", "instance"],
      ].filter(([key]) => held && held[key] > 0);
      if (owners.length) {
        const own = owners.reduce((sum, [key]) => sum + held[key], 0);
        const parts = owners.map(([key, label]) => `${label} ~${human(held[key])}`).join(", ");
        card
          .append("dd")
          .attr("class", "real-memory-held note")
          .text(
            `of the resident, ~${human(own)} is the instance's own allocations (${parts}); the rest is heap the allocator kept`,
          );
      }
    }
  }
  h.append("p")
    .attr("class", "note")
    .text("KiB, MiB and GiB are 1024-based. Percentages are of the total unless said otherwise.");
}

function graph() {
  const s = section("graph", "Where the bytes are");
  const bar = s.append("div").attr("class", "toolbar");
  const views = page.views;
  const rootLabel = (view) => {
    const inputs = page.inputs;
    const name = inputs[inputs.length - 1].name;
    const total = view.tree.bytes[0];
    if (!view.tree.old_bytes) return `${name}: ${human(total)}`;
    return `${inputs[0].name} → ${name}: ${human(view.tree.old_bytes[0])} → ${human(total)}`;
  };
  const trees = views.map(() => null);
  const treeAt = (i) => (trees[i] ??= treeOf(views[i], rootLabel(views[i])));

  const note = s.append("p").attr("class", "note view-note");
  const status = s.append("p").attr("class", "status").attr("aria-live", "polite");
  const zoomed = status.append("span").attr("class", "zoomed");
  const found = status.append("span").attr("class", "found");
  const chartBox = s.append("div").attr("id", "chart").attr("class", "chart");
  const g = new Graph(chartBox.node(), {
    onZoom(d) {
      if (!d) {
        zoomed.text("Click a frame to zoom into it; click the first frame or Reset to zoom out. ");
        return;
      }
      const path = pathOf(d, g.leavesFirst);
      const size =
        d.data.old == null
          ? `${human(d.data.value)}, ${percent(d.data.value, g.total)} of the total`
          : `${human(d.data.old)} → ${human(d.data.value)}`;
      zoomed.text(`Zoomed into ${path}: ${size}. `);
    },
    onSearch(result) {
      found.text(
        result
          ? `${plural(result.frames, "frame matches", "frames match")}: ${bytesExact(result.bytes)}, ${percent(result.bytes, result.total)} of the total.`
          : "",
      );
      found.classed("none", result && result.frames === 0);
    },
  });

  let current = 0;
  const group = (label) => bar.append("div").attr("class", "group").attr("role", "group").attr("aria-label", label);
  if (views.length > 1) {
    const v = group("view");
    v.append("span").attr("class", "label").text("Size by");
    v.selectAll("button")
      .data(views)
      .join("button")
      .attr("class", "view")
      .attr("data-view", (d) => d.id)
      .text((d) => d.label)
      .on("click", (_, d) => showView(views.indexOf(d)));
  }
  const shape = group("shape");
  shape.append("span").attr("class", "label").text("Draw as");
  shape
    .selectAll("button")
    .data([
      ["Icicle", true],
      ["Flame", false],
    ])
    .join("button")
    .attr("class", "shape")
    .classed("on", (d) => d[1] === g.icicle)
    .text((d) => d[0])
    .on("click", (_, d) => {
      g.setIcicle(d[1]);
      shape.selectAll("button").classed("on", (e) => e[1] === d[1]);
    });
  const order = group("order");
  order.append("span").attr("class", "label").text("Stacks");
  const setOrder = (leaves) => {
    order.selectAll("button").classed("on", (e) => e[1] === leaves);
    g.setLeavesFirst(leaves);
    describeView();
  };
  order
    .selectAll("button")
    .data([
      ["Root first", false],
      ["Leaves first", true],
    ])
    .join("button")
    .attr("class", "order")
    .classed("on", (d) => d[1] === g.leavesFirst)
    .text((d) => d[0])
    .on("click", (_, d) => setOrder(d[1]));
  if (views[0].tree.old_bytes) {
    const w = group("widths");
    w.append("span").attr("class", "label").text("Widths");
    w.selectAll("button")
      .data([
        ["new", "New bytes (added paths show)"],
        ["old", "Old bytes (removed paths show)"],
      ])
      .join("button")
      .attr("class", "widths")
      .classed("on", (d) => d[0] === g.widths)
      .text((d) => d[1])
      .on("click", (_, d) => {
        g.setWidths(d[0]);
        w.selectAll("button").classed("on", (e) => e[0] === d[0]);
      });
  }
  bar.append("button").attr("id", "reset").text("Reset zoom").on("click", () => g.resetZoom());
  const search = bar.append("div").attr("class", "group search");
  const input = search
    .append("input")
    .attr("type", "search")
    .attr("id", "search")
    .attr("placeholder", "Search frames (e.g. Constraint.function)")
    .attr("aria-label", "search frames");
  let pending = null;
  input.on("input", (event) => {
    clearTimeout(pending);
    const term = event.target.value;
    pending = setTimeout(() => g.search(term), 120);
  });

  if (views[0].tree.old_bytes) legend(s);

  function describeView() {
    const view = views[current];
    const folded = view.tree.folded
      ? ` Frames under ${human(view.tree.min_bytes)} are folded into "(N others)" frames (${plural(view.tree.folded, "frame", "frames")}).`
      : "";
    const side = view.tree.old_bytes ? " (new or old, as the widths say)" : "";
    const leaves = g.leavesFirst
      ? " Leaves first: the frames holding bytes stand on the root, each as wide as all its places together, their callers beyond them."
      : "";
    note.text(`Frames are as wide as their ${view.note}${side}.${leaves}${folded}`);
  }

  function showView(i) {
    current = i;
    bar.selectAll("button.view").classed("on", (d) => d === views[current]);
    describeView();
    g.show(treeAt(current));
  }
  showView(0);
  zoomGraphTo = (path) => {
    if (g.leavesFirst) setOrder(false);
    if (current !== 0) showView(0);
    unfold(chartBox.node());
    const ok = g.zoomToPath(path);
    chartBox.node().scrollIntoView({ block: "nearest" });
    return ok;
  };
}

function legend(s) {
  const l = s.append("div").attr("class", "legend");
  l.append("span").text("shrank 4× or more, or removed");
  // The colours a change can take: none paler than CHANGED, grey between.
  const stops = [];
  for (let i = 0; i <= 6; i++) stops.push(`${diverging(-1 + ((1 - CHANGED) * i) / 6)} ${(i / 6) * 45}%`);
  stops.push(`${UNCHANGED} 45%`, `${UNCHANGED} 55%`);
  for (let i = 0; i <= 6; i++) stops.push(`${diverging(CHANGED + ((1 - CHANGED) * i) / 6)} ${55 + (i / 6) * 45}%`);
  l.append("span").attr("class", "ramp").style("background", `linear-gradient(to right, ${stops.join(", ")})`);
  l.append("span").text("grew 4× or more, or added");
  l.append("span").attr("class", "swatch").style("background", UNCHANGED);
  l.append("span").text("unchanged");
}

function changes(c) {
  const s = section("changes", "What changed");
  sortableTable(
    s,
    [
      { label: "count", value: (r) => r.name },
      { label: "old", value: (r) => r.old, text: (r) => count(r, r.old), numeric: true },
      { label: "new", value: (r) => r.new, text: (r) => count(r, r.new), numeric: true },
      {
        label: "change",
        value: (r) => r.delta,
        text: (r) => (r.name === "bytes" ? signedHuman(r.delta) : `${r.delta > 0 ? "+" : ""}${thousands(r.delta)}`),
        numeric: true,
      },
    ],
    c.counts,
  );
  s.append("p").text(
    `${plural(c.changed, "path changed", "paths changed")}, ${plural(c.unchanged, "path", "paths")} unchanged; the largest changes first:`,
  );
  const more = c.changed - c.rows.length;
  const t = sortableTable(
    s,
    [
      { label: "path", value: (r) => r.path, path: true },
      { label: "status", value: (r) => r.status },
      { label: "old", value: (r) => r.old, text: (r) => human(r.old), numeric: true },
      { label: "new", value: (r) => r.new, text: (r) => human(r.new), numeric: true },
      { label: "change", value: (r) => r.new - r.old, text: (r) => signedHuman(r.new - r.old), numeric: true },
      {
        label: "%",
        value: (r) => (r.old ? (r.new - r.old) / r.old : Infinity),
        text: (r) => change(r.old, r.new, r.status),
        numeric: true,
      },
    ],
    c.rows,
    { foot: more > 0 ? [`(${plural(more, "smaller change", "smaller changes")} not listed)`] : null },
  );
  t.attr("id", "changes-table");
  t.selectAll("tbody tr").attr("class", (r) => (r.new > r.old ? "grew" : r.new < r.old ? "shrank" : null));
  function count(r, v) {
    return r.name === "bytes" ? human(v) : thousands(v);
  }
}

// Bytes with the exact count where the unit rounds it (units::exact).
function exact(bytes) {
  return bytes < 1024 ? `${thousands(bytes)} B` : bytesExact(bytes);
}

// What a recommendation asks of the user (src/advise/mod.rs, `Change`). A
// function, which is hoisted: the page is drawn before a constant here
// would be set.
function changeOf(r) {
  return {
    ommx: { rank: 0, label: "in OMMX" },
    "ommx-3.0": { rank: 1, label: "to OMMX 3.0b7" },
    "not-in-ommx": { rank: 2, label: "not in OMMX" },
  }[r.change];
}

function changeText(r, accounting) {
  if (r.change === "ommx") return `a change in ${accounting}`;
  if (r.change === "ommx-3.0") return "moving to OMMX 3.0, a pre-release";
  return "a layout OMMX does not offer";
}

function savingText(r) {
  if (r.change === "ommx") return `saves ${exact(r.saving_bytes)}${r.measure === "file" ? " of the file" : ""}`;
  if (r.change === "ommx-3.0") return r.saving_bytes ? `would save ${exact(r.saving_bytes)}` : "saves nothing";
  return `${exact(r.saving_bytes)} less in that layout`;
}

function advice(a) {
  const s = section("advice", "What would make it smaller");
  const layers = a.layers;
  const several = layers.length + a.others.length + a.more > 1;
  if (a.others.length) {
    s.append("p").text(`The ${plural(layers.length, "layer", "layers")} with the largest savings in full; the others below.`);
  }
  for (const layer of layers) {
    const box = s.append("div").attr("class", "layer");
    if (several) box.append("h3").text(layer.label);
    const n = layer.recommendations.length;
    if (n === 0) {
      box.append("p").text(`No recommendations: nothing would save memory or file bytes under ${layer.accounting}'s accounting.`);
    } else {
      const changes = layer.recommendations.filter((r) => r.change === "ommx" && r.measure === "logical").length;
      let text = changes
        ? `The ${plural(changes, "change", "changes")} you can make in ${layer.accounting} to what it holds would save ` +
          `${exact(layer.estimated_saving_bytes)}, ${percent(layer.estimated_saving_bytes, layer.total_bytes)} ` +
          `of ${human(layer.total_bytes)}, together (each byte counted once)`
        : `No change you can make in ${layer.accounting} would save memory`;
      if (layer.file_saving_bytes > 0) {
        text += `; the file, ${exact(layer.file_bytes)}, would be ${exact(layer.file_saving_bytes)} smaller without its zero and duplicate terms`;
      }
      if (layer.recommendations.some((r) => r.change !== "ommx")) {
        text += ". Moving to OMMX 3.0 (a pre-release) and layouts OMMX does not offer are shown for comparison, not in this sum";
      }
      box.append("p").attr("class", "summary").text(`${text}.`);
      sortableTable(
        box,
        [
          { label: "rule", value: (r) => r.rule, words: true },
          { label: "change", value: (r) => changeOf(r).rank, text: (r) => changeOf(r).label, words: true },
          { label: "severity", value: (r) => ["info", "low", "medium", "high"].indexOf(r.severity), text: (r) => r.severity, numeric: true },
          { label: "saving", value: (r) => r.saving_bytes, text: (r) => human(r.saving_bytes), numeric: true },
          {
            label: "% of total",
            value: (r) => r.saving_percent,
            text: (r) => `${r.saving_percent.toFixed(1)}%${r.measure === "file" ? " of file" : ""}`,
            numeric: true,
          },
          { label: "concerned", value: (r) => r.bytes_concerned, text: (r) => human(r.bytes_concerned), numeric: true },
          { label: "finding", value: (r) => r.title },
        ],
        // In memprof's order: what the user can change first.
        layer.recommendations,
      )
        .selectAll("tbody tr")
        .attr("class", (r) => `severity-${r.severity}`);
      for (const r of layer.recommendations) {
        const d = box.append("details").attr("class", "recommendation");
        d.append("summary").text(`${r.rule} (${r.severity}, ${changeText(r, layer.accounting)}): ${savingText(r)}`);
        d.append("p").text(r.title);
        if (r.paths.length) {
          const p = d.append("p").attr("class", "paths");
          p.append("span").text("paths: ");
          for (const path of r.paths) {
            p.append("a")
              .attr("href", "#graph")
              .attr("class", "path")
              .attr("title", "zoom the graph to this path")
              .text(path)
              .on("click", (event) => {
                event.preventDefault();
                zoomGraphTo(path);
              });
          }
        }
        if (r.sample.length) {
          const ul = d.append("ul").attr("class", "samples");
          for (const x of r.sample) {
            let who = x.entity;
            if (x.id != null) who += ` ${x.id}`;
            if (x.name != null) who += ` "${x.name}"`;
            ul.append("li").text(`${who}: ${x.detail}`);
          }
        }
        d.append("p").attr("class", "suggestion").text(r.suggestion);
      }
    }
    for (const nc of layer.not_computed) {
      box.append("p").attr("class", "note").text(`Not computed: ${nc.rule}: ${nc.reason}`);
    }
  }
  if (a.others.length) {
    s.append("h3").text("Other layers");
    sortableTable(
      s,
      [
        { label: "layer", value: (r) => r.label },
        { label: "total", value: (r) => r.total_bytes, text: (r) => human(r.total_bytes), numeric: true },
        { label: "saving in OMMX", value: (r) => r.estimated_saving_bytes, text: (r) => human(r.estimated_saving_bytes), numeric: true },
        { label: "%", value: (r) => r.estimated_saving_bytes / (r.total_bytes || 1), text: (r) => percent(r.estimated_saving_bytes, r.total_bytes), numeric: true },
        { label: "recommendations", value: (r) => r.recommendations, numeric: true },
      ],
      a.others,
      { foot: a.more ? [`(${plural(a.more, "more layer", "more layers")}: memprof advise --layer N shows any)`] : null },
    );
  }
}

function top(t) {
  const s = section("top", "Largest entities");
  const layered = t.rows.some((r) => r.layer != null);
  s.append("p").text(
    t.rows.length
      ? `The ${plural(t.rows.length, "largest entity", "largest entities")}${t.kind === "all" ? "" : ` of kind ${t.kind}`} by logical bytes; ties are listed by id, smaller first, then by kind.`
      : `No ${t.kind === "all" ? "" : `${t.kind} `}entities.`,
  );
  if (!t.rows.length) return;
  const columns = [
    { label: "#", value: (r) => r.rank, text: (r) => r.rankText ?? r.rank, numeric: true },
    ...(layered ? [{ label: "layer", value: (r) => r.layer ?? -1, text: (r) => r.layer ?? "", numeric: true }] : []),
    { label: "kind", value: (r) => r.kind, text: (r) => r.kindText ?? r.kind },
    // The objective has no id.
    { label: "id", value: (r) => r.id ?? -1, text: (r) => r.idText ?? (r.id == null ? "-" : r.id), numeric: true },
    { label: "name", value: (r) => r.name },
    { label: "terms", value: (r) => r.terms ?? -1, text: (r) => (r.terms == null ? "-" : thousands(r.terms)), numeric: true },
    { label: "bytes", value: (r) => r.bytes, text: (r) => human(r.bytes), numeric: true },
    { label: "% of total", value: (r) => r.bytes, text: (r) => percent(r.bytes, logicalTotal()), numeric: true },
    { label: "on disk", value: (r) => r.wire_bytes, text: (r) => r.wireText ?? human(r.wire_bytes), numeric: true },
  ];
  const rows = grouped(t.rows.map((r, i) => ({ ...r, rank: i + 1 })));
  if (rows.some((r) => r.members)) {
    s.append("p")
      .attr("class", "note")
      .text("Three or more entities alike in kind, terms and bytes share a row; ▸ lists them.");
  }
  sortableTable(s, columns, rows).attr("id", "top-table");
}

// Three or more entities alike in all but their id and name (an LP's
// constraints of one shape) as one row, "100 constraints of 1.4 KiB each",
// whose members keep their own rows. The group stands where its first
// member ranked. (The page is drawn before a module constant would be set.)
function grouped(rows) {
  const GROUPED = 3;
  const key = (r) => [r.layer, r.kind, r.terms, r.bytes].join(" ");
  const byKey = new Map();
  for (const r of rows) {
    const k = key(r);
    if (!byKey.has(k)) byKey.set(k, []);
    byKey.get(k).push(r);
  }
  const out = [];
  for (const r of rows) {
    const members = byKey.get(key(r));
    if (members.length < GROUPED) out.push(r);
    else if (members[0] === r) {
      const ids = members.map((m) => m.id).filter((id) => id != null);
      const names = new Set(members.map((m) => m.name));
      const wire = members.map((m) => m.wire_bytes);
      const [low, high] = [Math.min(...wire), Math.max(...wire)];
      const group = {
        ...r,
        members,
        kindText: `${thousands(members.length)} ${nounOf(r.kind, true)} of ${human(r.bytes)} each`,
        // Ties of other kinds may stand between them.
        rankText: members.at(-1).rank - r.rank === members.length - 1 ? `${r.rank}–${members.at(-1).rank}` : r.rank,
        idText: ids.length ? `${Math.min(...ids)}–${Math.max(...ids)}` : "-",
        name: names.size === 1 ? r.name : "",
        wireText: low === high ? human(low) : `${human(low)}–${human(high)}`,
      };
      for (const m of members) m.groupedIn = group;
      out.push(group);
    }
  }
  return out;
}

// A kind (its label, src/model/kind.rs) in prose.
function nounOf(kind, many) {
  const noun =
    {
      removed: "removed constraint",
      "named-function": "named function",
      indicator: "indicator constraint",
      "removed-indicator": "removed indicator constraint",
      "one-hot": "one-hot constraint",
      "removed-one-hot": "removed one-hot constraint",
      sos1: "SOS1 constraint",
      "removed-sos1": "removed SOS1 constraint",
    }[kind] ?? kind;
  return many ? `${noun}s` : noun;
}

function logicalTotal() {
  return page.inputs[page.inputs.length - 1].logical_bytes;
}

function distributionColumns(withFamily) {
  const fig = (d, bytes) => {
    if (!d) return "-";
    const f = (v) => (bytes ? human(v) : thousands(v));
    const approx = d.exact ? "" : "~";
    return `${f(d.min)} / ${approx}${f(d.p50)} / ${approx}${f(d.p90)} / ${approx}${f(d.p99)} / ${f(d.max)}`;
  };
  return [
    { label: "kind", value: (r) => r.kind },
    ...(withFamily ? [{ label: "family", value: (r) => r.family }] : []),
    { label: "count", value: (r) => r.count, text: (r) => thousands(r.count), numeric: true },
    { label: "total", value: (r) => r.bytes.total, text: (r) => human(r.bytes.total), numeric: true },
    { label: "% of total", value: (r) => r.bytes.total, text: (r) => percent(r.bytes.total, logicalTotal()), numeric: true },
    { label: "bytes min / p50 / p90 / p99 / max", value: (r) => r.bytes.p50, text: (r) => fig(r.bytes, true), numeric: true, title: "sorts by the median" },
    { label: "terms min / p50 / p90 / p99 / max", value: (r) => r.terms?.p50 ?? -1, text: (r) => fig(r.terms, false), numeric: true, title: "sorts by the median" },
    { label: "largest (id name)", value: (r) => r.largest_bytes, text: (r) => `${r.largest} (${human(r.largest_bytes)})` },
  ];
}

function families(f) {
  const s = section("families", "Families");
  s.append("p").text("Entities sharing a name, largest total first (what --group-by name draws as frames). Percentiles are nearest-rank; ~ marks figures from log buckets (at most 0.78% low).");
  const foot = f.more
    ? [`(${plural(f.more.families, "more family", "more families")})`, "", thousands(f.more.entities), human(f.more.bytes), percent(f.more.bytes, logicalTotal())]
    : null;
  sortableTable(s, distributionColumns(true), f.rows, { foot }).attr("id", "families-table");
}

function kinds(rows) {
  const s = section("kinds", "Entity kinds");
  sortableTable(s, distributionColumns(false), rows).attr("id", "kinds-table");
}

function nav() {
  const n = main.insert("nav", "section");
  n.selectAll("a")
    .data(sections)
    .join("a")
    .attr("href", (d) => `#${d.id}`)
    .text((d) => d.title)
    .on("click", (_, d) => unfold(document.getElementById(d.id)?.firstElementChild));
}

// In a notebook the page sits in an iframe of the cell's width: the frame
// takes the page's height whenever it changes, and the static summary
// beside it (src/render/html/notebook.rs), for notebooks where this script
// cannot run, is hidden.
function followHeight() {
  let frame = null;
  try {
    frame = window.frameElement;
  } catch {
    return;
  }
  if (!frame) return;
  // Nothing scrolls up or down inside: the frame is as tall as the page,
  // and a wheel over it scrolls the notebook from the first notch. A frame
  // narrower than the page is laid out for (600 pixels) scrolls sideways.
  const root = document.documentElement;
  root.style.overflowY = "hidden";
  root.style.overflowX = "auto";
  // The body's own height, which shrinks when a section folds (the
  // document's scroll height never falls below the frame's), and a
  // sideways scrollbar's, if any.
  const fit = () => {
    const bar = window.innerHeight - root.clientHeight;
    frame.style.height = `${Math.ceil(document.body.getBoundingClientRect().height) + bar}px`;
  };
  new ResizeObserver(fit).observe(document.body);
  window.addEventListener("resize", fit);
  fit();
  const summary = frame.parentElement?.querySelector(":scope > .ommx-memprof-summary");
  if (summary) summary.hidden = true;
}
