// A table whose columns sort when their header is clicked (again: the
// other way), drawn with d3-selection's data join.

import { ascending, descending } from "d3-array";

// columns: [{ label, value(row) -> number|string (what sorts), text(row) ->
// string (what shows; default: value), numeric, words (names that wrap only
// at their hyphens and spaces, never inside a word), title }]
// options: { sort: index of the column sorted first, descending: bool,
// foot: [cells] of a last row that never sorts, caption }
// A cell's class: numbers right-aligned on one line, names kept whole.
function cellClass(c) {
  if (c?.numeric) return "num";
  return c?.words ? "words" : null;
}

export function sortableTable(parent, columns, rows, options = {}) {
  const table = parent.append("table").attr("class", "sortable");
  if (options.caption) table.append("caption").text(options.caption);
  const head = table.append("thead").append("tr");
  const body = table.append("tbody");
  let sorted = { column: options.sort ?? -1, descending: options.descending ?? true };

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
    th.attr("aria-sort", (_, i) =>
      i === sorted.column ? (sorted.descending ? "descending" : "ascending") : "none",
    );
    body
      .selectAll("tr")
      .data(order)
      .join("tr")
      .selectAll("td")
      .data((row) => columns.map((c) => [c, row]))
      .join("td")
      .attr("class", ([c]) => cellClass(c))
      .text(([c, row]) => (c.text ? c.text(row) : c.value(row)));
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

