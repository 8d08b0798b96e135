// Metering (docs/api.md "Usage"): lizard.usage() reports compute seconds and
// cost per project. Bounds, not timings: at least the time slept, at most
// the wall time elapsed.
import assert from "node:assert/strict";
import { test } from "node:test";

import { InvalidArgumentError, Lizard, NotFoundError } from "../dist/index.js";
import { useDaemon } from "./helpers.mjs";

const ctx = useDaemon();

test("usage: running time billed at the size price; bad input rejected", async () => {
  await ctx.ready();
  const admin = new Lizard();
  const project = await admin.createProject(`usage-${Date.now()}`);
  const t0 = Date.now();
  const sb = await ctx.create("tiny", { project: project.id, size: "small" });
  await new Promise((r) => setTimeout(r, 1000));
  await sb.kill();
  const wall = (Date.now() - t0) / 1000;

  const report = await new Lizard({ project: project.id }).usage({ from: new Date(t0 - 60_000) });
  assert.equal(report.projects.length, 1);
  const u = report.projects[0];
  assert.equal(u.project, project.id);
  assert.ok(u.compute.seconds >= 1 && u.compute.seconds <= wall + 0.002, `${u.compute.seconds}`);
  assert.equal(u.compute.bySize.small.seconds, u.compute.seconds);
  // The built-in size table: small costs 0.025 per hour.
  assert.ok(Math.abs(u.compute.cost - (u.compute.seconds * 0.025) / 3600) < 1e-9);
  assert.ok(Math.abs(u.total - u.compute.cost - u.volumes.cost) < 1e-12);

  await assert.rejects(admin.usage({ from: "yesterday" }), InvalidArgumentError);
  await assert.rejects(admin.usage({ project: "no-such-project" }), NotFoundError);
});
