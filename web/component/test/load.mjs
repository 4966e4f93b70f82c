// load bundles one of the component's TypeScript modules for node, which cannot run
// TypeScript itself, and imports it.
import * as esbuild from "esbuild";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export async function load(path) {
  const r = await esbuild.build({
    entryPoints: [fileURLToPath(new URL("../" + path, import.meta.url))],
    bundle: true, format: "esm", platform: "node", write: false, logLevel: "warning",
  });
  const file = join(mkdtempSync(join(tmpdir(), "otpgate-component-")), "module.mjs");
  writeFileSync(file, r.outputFiles[0].text);
  return import(pathToFileURL(file).href);
}
