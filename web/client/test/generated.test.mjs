// src/schema.ts is what openapi-typescript makes of api/openapi.yaml today: a changed
// document needs `npm run generate` (or `make generate`) and the result committed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

test("SchemaIsCurrent", () => {
  const dir = mkdtempSync(join(tmpdir(), "otpgate-schema-"));
  try {
    const out = join(dir, "schema.ts");
    execFileSync("npx", ["--no-install", "openapi-typescript", "../../api/openapi.yaml", "-o", out], { stdio: "pipe" });
    assert.ok(readFileSync(out, "utf8") === readFileSync("src/schema.ts", "utf8"),
      "web/client/src/schema.ts is stale: run `make generate` and commit the result");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
