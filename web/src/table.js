// A table whose columns sort when their header is clicked (again: the
// other way), drawn with d3-selection's data join, in a box of its own
// that scrolls sideways when the table is wider than the page: no word is
// ever broken to make a table fit.

import { ascending, descending } from "d3-array";

// columns: [{ label, value(row) -> number|string (what sorts), text(row) ->
// string (what shows; default: value), numeric, words (names that wrap only
// at their hyphens and spaces), path (frames joined by ';', which wrap only
// after a ';'), title }]
// options: { sort: index of the column sorted first, descending: bool,
// foot: [cells] of a last row that never sorts, caption }
// A row with `members` (rows alike in all but their names) is drawn as one
// row with a button that shows its members below it, in their order.
// A cell's class: numbers right-aligned on one line, paths marked.
function cellClass(c) {
  if (c?.numeric) return "num";
  if (c?.path) return "path";
  return c?.words ? "words" : null;
}

// A path's text, with a place to break after each ';' and nowhere else.
function pathCell(td, text) {
  const parts = String(text).split(";");
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    td.append(last ? part : `${part};`);
    if (!last) td.appendChild(document.createElement("wbr"));
  });
}

export function sortableTable(parent, columns, rows, options = {}) {
  const box = parent.append("div").attr("class", "table-box");
  const table = box.append("table").attr("class", "sortable");
  if (options.caption) table.append("caption").text(options.caption);
  const head = table.append("thead").append("tr");
  const body = table.append("tbody");
  let sorted = { column: options.sort ?? -1, descending: options.descending ?? true };
  const open = new Set();

  const th = head
    .selectAll("th")
    .data(columns)
    .join("th")
    .attr("scope", "col")
    .attr("class", cellClass)
    .attr("title", (c) => c.title ?? null)
    .attr("tabindex", 0)
    .text((c) => c.label)
    .on("click", (_, c) => sortBy(columns.indexOf(c)))
    .on("keydown", (event, c) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        sortBy(columns.indexOf(c));
      }
    });

  function sortBy(index) {
    const again = sorted.column === index;
    const numeric = columns[index].numeric;
    // First click: numbers largest first, text A to Z.
    sorted = { column: index, descending: again ? !sorted.descending : numeric };
    draw();
  }

  function draw() {
    let order = rows.slice();
    if (sorted.column >= 0) {
      const value = columns[sorted.column].value;
      const cmp = sorted.descending ? descending : ascending;
      order.sort((a, b) => cmp(value(a), value(b)));
    }
    order = order.flatMap((r) => (r.members && open.has(r) ? [r, ...r.members] : [r]));
    th.attr("aria-sort", (_, i) =>
      i === sorted.column ? (sorted.descending ? "descending" : "ascending") : "none",
    );
    body
      .selectAll("tr")
      .data(order)
      .join("tr")
      .classed("group", (row) => Boolean(row.members))
      .classed("member", (row) => Boolean(row.groupedIn))
      .selectAll("td")
      .data((row) => columns.map((c) => [c, row]))
      .join("td")
      .attr("class", ([c]) => cellClass(c))
      .each(function ([c, row], i) {
        const td = this;
        td.textContent = "";
        const text = c.text ? c.text(row) : c.value(row);
        if (i === 0 && row.members) {
          const button = document.createElement("button");
          button.className = "expand";
          button.setAttribute("aria-expanded", String(open.has(row)));
          button.title = open.has(row) ? "hide the rows" : "show the rows";
          button.textContent = open.has(row) ? "▾" : "▸";
          button.addEventListener("click", () => {
            if (open.has(row)) open.delete(row);
            else open.add(row);
            draw();
          });
          td.appendChild(button);
          td.append(" ");
        }
        if (c.path) pathCell(td, text);
        else td.append(String(text));
      });
  }

  if (options.foot) {
    table
      .append("tfoot")
      .append("tr")
      .selectAll("td")
      .data(options.foot)
      .join("td")
      .attr("class", (_, i) => cellClass(columns[i]))
      .text((d) => d);
  }
  draw();
  return table;
}
