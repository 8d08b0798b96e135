// pause / resume / waitForStatus (docs/api.md "Pause and resume", issue 5).
import assert from "node:assert/strict";
import { test } from "node:test";

import { ConflictError, Sandbox, TimeoutError } from "../dist/index.js";
import { useDaemon } from "./helpers.mjs";

const ctx = useDaemon();

test("seed: pause, waitForStatus, resume; processes and files survive", async () => {
  const sandbox = await ctx.create("tiny");
  await sandbox.fs.write("/tmp/kept.txt", "kept");
  const bg = await sandbox.process.exec("sleep 600", { background: true });

  await sandbox.pause();
  assert.equal(await sandbox.waitForStatus("paused"), "paused");
  assert.equal((await sandbox.getInfo()).status, "paused");
  assert.equal(await sandbox.isRunning(), false);
  const e = await sandbox.process.exec("true").catch((x) => x);
  assert.ok(e instanceof ConflictError, String(e));
  assert.equal(e.code, "paused");
  // connect does not resume.
  const connected = await Sandbox.connect(sandbox.sandboxId);
  assert.equal((await connected.getInfo()).status, "paused");
  await assert.rejects(sandbox.pause(), ConflictError);

  await sandbox.resume();
  assert.equal(await sandbox.waitForStatus("running"), "running");
  assert.equal(await sandbox.fs.read("/tmp/kept.txt"), "kept");
  assert.equal((await sandbox.process.output(bg.pid)).running, true);
  await assert.rejects(sandbox.resume(), ConflictError);
});

test("waitForStatus gives up with TimeoutError", async () => {
  const sb = await ctx.create("tiny");
  await assert.rejects(sb.waitForStatus("paused", { timeoutMs: 500 }), TimeoutError);
});
