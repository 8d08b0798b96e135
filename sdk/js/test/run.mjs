// `npm test`: run test/*.test.mjs with node --test, except the
// pending-*.test.mjs files (features the server does not have yet), which
// `npm run test:pending` runs instead.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pending = process.argv.includes("--pending");
const files = readdirSync(here)
  .filter((f) => f.endsWith(".test.mjs") && f.startsWith("pending-") === pending)
  .sort()
  .map((f) => join(here, f));
if (files.length === 0) {
  console.log("no test files");
  process.exit(0);
}
const r = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit" });
process.exit(r.status ?? 1);
