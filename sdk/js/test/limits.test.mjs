// The per-project running-sandbox cap: over it, create is RateLimitError.
import assert from "node:assert/strict";
import { test } from "node:test";

import { LizardError, RateLimitError, Sandbox } from "../dist/index.js";
import { useDaemon } from "./helpers.mjs";

const ctx = useDaemon({ extraArgs: ["--max-running", "1"] });

test("over --max-running: RateLimitError with the server's message", async () => {
  const first = await ctx.create("tiny");
  const e = await Sandbox.create("tiny").catch((x) => x);
  assert.ok(e instanceof RateLimitError && e instanceof LizardError, String(e));
  assert.equal(e.status, 429);
  assert.equal(e.code, "rate_limited");
  assert.ok(e.message.length > 0);
  // Freeing the slot makes room again.
  await first.kill();
  const again = await ctx.create("tiny");
  assert.equal((await again.process.exec("echo ok")).stdout, "ok\n");
});
