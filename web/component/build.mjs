// Builds the component into the one file the Go server embeds and serves:
// internal/web/static/otpgate-verify.js. The proof-of-work worker is bundled first and put in
// the component as a string (a page cannot start a worker from another origin's URL, but
// can from a blob). `node build.mjs --check` builds in memory and fails when the committed
// file differs, as the Go test TestBundleIsCurrent does.
import * as esbuild from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const out = fileURLToPath(new URL("../../internal/web/static/otpgate-verify.js", import.meta.url));
const src = (p) => fileURLToPath(new URL(p, import.meta.url));
// "source": the client's TypeScript, not its dist/, which may be absent or stale.
const common = { conditions: ["source"], bundle: true, minify: true, target: ["es2022"], platform: "browser", write: false, logLevel: "warning", charset: "utf8", legalComments: "eof" };

const worker = await esbuild.build({ ...common, entryPoints: [src("src/worker.ts")], format: "iife" });
const workerSource = worker.outputFiles[0].text;

const main = await esbuild.build({
  ...common,
  entryPoints: [src("src/index.ts")],
  format: "iife",
  banner: { js: "/* <otpgate-verify>: built from web/component by `make web`; do not edit. */" },
  plugins: [{
    name: "worker-source",
    setup(b) {
      b.onResolve({ filter: /^otpgate:worker$/ }, () => ({ path: "worker", namespace: "otpgate" }));
      b.onLoad({ filter: /.*/, namespace: "otpgate" }, () => ({ contents: `export default ${JSON.stringify(workerSource)};`, loader: "js" }));
    },
  }],
});
const bundle = main.outputFiles[0].text;

if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync(out, "utf8");
  } catch {}
  if (committed !== bundle) {
    console.error("internal/web/static/otpgate-verify.js is stale: run `make web` and commit the result");
    process.exit(1);
  }
} else {
  writeFileSync(out, bundle);
  console.log(`${out}: ${bundle.length} bytes`);
}
