// Builds the report page's script and stylesheet into dist/ (committed, and
// embedded in the memprof binary by src/render/html/mod.rs), with the
// licences of every bundled package in dist/LICENSES.txt.
//
//   npm ci && npm run build
//
// The output is deterministic: CI rebuilds it and fails when it differs
// from what is committed.
import * as esbuild from "esbuild";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const result = await esbuild.build({
  entryPoints: ["src/report.js"],
  outfile: "dist/report.js",
  bundle: true,
  minify: true,
  format: "iife",
  target: ["chrome100", "firefox100", "safari15"],
  charset: "utf8",
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});
if (result.errors.length) process.exit(1);

// The page inlines both files: neither may end its element early.
for (const [file, end] of [["dist/report.js", "</script"], ["dist/report.css", "</style"]]) {
  const text = readFileSync(file, "utf8").toLowerCase();
  for (const bad of [end, "<!--"]) {
    if (text.includes(bad)) {
      console.error(`${file} holds ${bad}: it cannot be inlined in the page`);
      process.exit(1);
    }
  }
}

// Every package whose code went into the bundle (not only read and then
// shaken out), with its licence text.
const packages = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
    if (m && bytesInOutput > 0) packages.add(m[1]);
  }
}
let notices =
  "The script of memprof's report page bundles these packages (from web/package-lock.json).\n";
for (const name of [...packages].sort()) {
  const dir = join("node_modules", name);
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = ["LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE"].find((f) => existsSync(join(dir, f)));
  if (!file) {
    console.error(`${name}: no licence file found`);
    process.exit(1);
  }
  const text = readFileSync(join(dir, file), "utf8").trim();
  notices += `\n==== ${name} ${meta.version} (${meta.license}) ====\n\n${text}\n`;
}
writeFileSync("dist/LICENSES.txt", notices);
