// Numbers for people, as memprof's text formats write them (src/units.rs):
// binary prefixes (1 KiB = 1024 B), one decimal, thousands separators.

const UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

export function human(bytes) {
  if (bytes < 1024) return `${thousands(bytes)} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit + 1 < UNITS.length) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}

export function thousands(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export function bytesExact(bytes) {
  return `${human(bytes)} (${thousands(bytes)} B)`;
}

// One decimal, thousands separated: 3,269.5.
function oneDecimal(value) {
  const [whole, fraction] = value.toFixed(1).split(".");
  return `${thousands(whole)}.${fraction}`;
}

export function percent(part, total) {
  if (!total) return "0.0%";
  return `${oneDecimal((part * 100) / total)}%`;
}

export function signedHuman(delta) {
  if (delta > 0) return `+${human(delta)}`;
  if (delta < 0) return `-${human(-delta)}`;
  return human(0);
}

/// The relative change of old -> new: "+4.9%", "added", "removed".
export function change(oldBytes, newBytes, status) {
  if (status === "added") return "added";
  if (status === "removed") return "removed";
  if (oldBytes === 0) return newBytes === 0 ? "0.0%" : "new";
  const p = ((newBytes - oldBytes) * 100) / oldBytes;
  const text = `${oneDecimal(Math.abs(p))}%`;
  if (text === "0.0%") return text;
  return p > 0 ? `+${text}` : `-${text}`;
}

export function plural(n, one, many) {
  return `${thousands(n)} ${n === 1 ? one : many}`;
}

// An estimated figure, `~20.7 KiB`; nothing as it is, `0 B`, never `~0 B`
// (src/render/header.rs says the same).
export function about(bytes) {
  return bytes === 0 ? human(0) : `~${human(bytes)}`;
}
