// snapshot / waitForSnapshot / restore (docs/api.md "Snapshots", issue 5).
import assert from "node:assert/strict";
import { test } from "node:test";

import { Lizard, NotFoundError, Sandbox } from "../dist/index.js";
import { useDaemon } from "./helpers.mjs";

const ctx = useDaemon();

test("seed: snapshot, waitForSnapshot, restore a new sandbox with the files", async () => {
  const sandbox = await ctx.create("tiny");
  await sandbox.fs.write("/srv/app/state.txt", "saved state\n");

  const saved = await sandbox.snapshot("my-app", { poolSize: 1 });
  assert.match(saved.id, /^snap_/);
  assert.equal(saved.name, "my-app");
  const ready = await Sandbox.waitForSnapshot(saved.id);
  assert.equal(ready.status, "ready");
  assert.equal(ready.memory, false); // container runtime: files only
  assert.equal(ready.sourceSandboxId, sandbox.sandboxId);

  const copy = await Sandbox.restore(saved.id);
  ctx.made.push(copy);
  assert.notEqual(copy.sandboxId, sandbox.sandboxId);
  assert.equal(await copy.fs.read("/srv/app/state.txt"), "saved state\n");
  const [a, b] = await Promise.all([sandbox.getInfo(), copy.getInfo()]);
  assert.equal(b.cpuCount, a.cpuCount);
  assert.equal(b.memoryMB, a.memoryMB);
  // The copy is independent of the original.
  await copy.fs.write("/srv/app/state.txt", "changed\n");
  assert.equal(await sandbox.fs.read("/srv/app/state.txt"), "saved state\n");

  // A second restore waits for the pool (poolSize 1) to refill.
  const second = await Sandbox.restore(saved.id, { wait: true, waitTimeoutMs: 120_000 });
  ctx.made.push(second);
  assert.equal(await second.fs.read("/srv/app/state.txt"), "saved state\n");

  assert.ok((await Sandbox.listSnapshots()).some((s) => s.id === saved.id));
  assert.ok((await new Lizard().listSnapshots()).some((s) => s.id === saved.id));
  assert.equal(await Sandbox.deleteSnapshot(saved.id), true);
  assert.equal(await Sandbox.deleteSnapshot(saved.id), false);
  await assert.rejects(Sandbox.getSnapshot(saved.id), NotFoundError);
  // Deleting the snapshot never affects sandboxes restored from it.
  assert.equal((await copy.process.exec("cat /srv/app/state.txt")).stdout, "changed\n");
});

test("unknown snapshot ids are NotFoundError", async () => {
  await ctx.ready();
  await assert.rejects(Sandbox.waitForSnapshot("snap_nope"), NotFoundError);
  await assert.rejects(Sandbox.restore("snap_nope", {}), NotFoundError);
});
