// Volumes (docs/api.md "Volumes", issue 5): data outlives sandboxes; one
// running sandbox at a time.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ConflictError, Lizard, NotFoundError, Volume } from "../dist/index.js";
import { useDaemon } from "./helpers.mjs";

const ctx = useDaemon();

test("data on a volume survives kill; attach conflicts; delete", async () => {
  await ctx.ready();
  const vol = await Volume.create("data", { sizeMB: 64 });
  assert.match(vol.id, /^vol_/);
  assert.equal(vol.name, "data");
  assert.equal(vol.sizeMB, 64);
  assert.equal(vol.attachedTo, null);

  const first = await ctx.create("tiny", { volumes: ["data"] });
  await first.fs.write("/workspace/notes.txt", "kept across sandboxes\n");
  assert.equal((await Volume.get("data")).attachedTo, first.sandboxId);
  await assert.rejects(ctx.create("tiny", { volumes: [{ volume: vol.id }] }), ConflictError);
  await assert.rejects(Volume.delete("data"), ConflictError);
  await first.kill();

  const second = await ctx.create("tiny", { volumes: [{ volume: vol.id, mountPath: "/data" }] });
  assert.equal(await second.fs.read("/data/notes.txt"), "kept across sandboxes\n");
  await second.kill();

  const lizard = new Lizard();
  assert.ok((await lizard.listVolumes()).some((v) => v.id === vol.id));
  await lizard.deleteVolume(vol.id);
  await assert.rejects(lizard.getVolume(vol.id), NotFoundError);
  const dup = await lizard.createVolume("dup", { sizeMB: 8 });
  await assert.rejects(lizard.createVolume("dup", { sizeMB: 8 }), ConflictError);
  await lizard.deleteVolume(dup.name);
});
