// Sandbox lifecycle: create options, connect, getInfo, setTimeout, list,
// kill, the Lizard client, configuration and typed errors.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  APIConnectionError,
  AuthenticationError,
  DEFAULT_TIMEOUT_MS,
  InvalidArgumentError,
  Lizard,
  LizardError,
  NotFoundError,
  Sandbox,
} from "../dist/index.js";
import { freePort, useDaemon } from "./helpers.mjs";

const ctx = useDaemon();

const remainingMs = (info) => Date.parse(info.expiresAt) - Date.now();

test("create: default lifetime is 5 minutes; getInfo fields", async () => {
  await ctx.ready();
  const sb = await Sandbox.create("tiny", { metadata: { job: "j1" } });
  ctx.made.push(sb);
  assert.equal(DEFAULT_TIMEOUT_MS, 300_000);
  assert.match(sb.sandboxId, /^sb_[a-z0-9]+$/);
  const info = await sb.getInfo();
  assert.equal(info.sandboxId, sb.sandboxId);
  assert.equal(info.template, "tiny");
  assert.equal(info.status, "running");
  assert.ok(["container", "microvm"].includes(info.runtime));
  assert.deepEqual(info.metadata, { job: "j1" });
  assert.ok(remainingMs(info) > 200_000 && remainingMs(info) <= 300_000, info.expiresAt);
  assert.equal(await sb.isRunning(), true);
});

test("create: env applies to every exec; projectId alias; size", async () => {
  const sb = await ctx.create("tiny", { projectId: "default", env: { GREETING: "hi" }, size: "small" });
  assert.equal((await sb.process.exec("echo $GREETING")).stdout, "hi\n");
  assert.equal((await sb.process.exec("echo $GREETING", { env: { GREETING: "own" } })).stdout, "own\n");
  const info = await sb.getInfo();
  assert.equal(info.size, "small");
  const projects = await new Lizard().listProjects();
  assert.equal(info.project, projects.find((p) => p.name === "default").id);
  await assert.rejects(
    Sandbox.create("tiny", { project: "default", projectId: "other" }),
    InvalidArgumentError,
  );
});

test("timeoutMs 0 means no expiry; setTimeout sets a new lifetime", async () => {
  const sb = await ctx.create("tiny", { timeoutMs: 0 });
  assert.equal((await sb.getInfo()).expiresAt, null);
  const info = await sb.setTimeout(60_000);
  assert.equal(info.sandboxId, sb.sandboxId);
  assert.ok(remainingMs(info) > 30_000 && remainingMs(info) <= 60_000, info.expiresAt);
  assert.equal((await sb.setTimeout(0)).expiresAt, null);
});

test("connect, list, kill; a killed sandbox is NotFoundError", async () => {
  const sb = await ctx.create("tiny");
  const connected = await Sandbox.connect(sb.sandboxId);
  assert.equal(connected.sandboxId, sb.sandboxId);
  assert.equal((await connected.getInfo()).status, "running");
  assert.equal((await connected.process.exec("echo via connect")).stdout, "via connect\n");
  const listed = await Sandbox.list();
  assert.ok(listed.some((s) => s.sandboxId === sb.sandboxId));
  assert.ok((await Sandbox.list({ status: "running" })).some((s) => s.sandboxId === sb.sandboxId));

  assert.equal(await connected.kill(), true);
  assert.equal(await sb.kill(), false);
  await assert.rejects(sb.getInfo(), NotFoundError);
  await assert.rejects(Sandbox.connect(sb.sandboxId), NotFoundError);
  await assert.rejects(sb.process.exec("true"), NotFoundError);
  await assert.rejects(sb.fs.read("/etc/hostname"), NotFoundError);
  assert.equal(await sb.isRunning(), false);
  assert.ok(!(await Sandbox.list()).some((s) => s.sandboxId === sb.sandboxId));
});

test("an expired sandbox is gone", async () => {
  const sb = await ctx.create("tiny", { timeoutMs: 1000 });
  const deadline = Date.now() + 30_000;
  while ((await sb.isRunning()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await assert.rejects(Sandbox.connect(sb.sandboxId), NotFoundError);
});

test("Lizard client: project bound once, seed run-task flow", async () => {
  await ctx.ready();
  const adm = new Lizard();
  const proj = await adm.createProject(`js-${process.pid}`);
  const key = await adm.createKey("js-test", { project: proj.id });
  assert.match(key.key, /^lz_/);

  const lizard = new Lizard({ project: proj.id, apiKey: key.key });
  const sandbox = await lizard.create("base", { size: "small", timeoutMs: 120_000 });
  try {
    const info = await sandbox.getInfo();
    assert.equal(info.project, proj.id);
    assert.ok(["container", "microvm"].includes(info.runtime));
    assert.deepEqual((await lizard.list()).map((s) => s.sandboxId), [sandbox.sandboxId]);
    const connected = await lizard.connect(sandbox.sandboxId);
    assert.equal((await connected.process.exec("python3 -c 'print(2 ** 10)'")).stdout, "1024\n");
  } finally {
    assert.equal(await sandbox.kill(), true);
  }
  // A project key sees nothing of other projects: a foreign id is 404.
  const other = await ctx.create("tiny");
  await assert.rejects(lizard.connect(other.sandboxId), NotFoundError);
  const names = (await lizard.templates()).map((t) => t.name);
  assert.ok(names.includes("tiny") && names.includes("base"), names.join(","));

  // Keys can be listed and revoked; a revoked key is AuthenticationError.
  assert.ok((await adm.listKeys()).some((k) => k.id === key.id));
  await adm.deleteKey(key.id);
  await assert.rejects(lizard.list(), AuthenticationError);
});

test("typed errors carry the server's status, code and message", async () => {
  await ctx.ready();
  const bad = await Sandbox.create("tiny", { apiKey: "lz_bad_key" }).catch((e) => e);
  assert.ok(bad instanceof AuthenticationError && bad instanceof LizardError);
  assert.equal(bad.status, 401);
  assert.equal(bad.code, "unauthorized");
  assert.ok(bad.message.length > 0);
  assert.equal(bad.name, "AuthenticationError");

  const missing = await Sandbox.connect("sb_doesnotexist").catch((e) => e);
  assert.ok(missing instanceof NotFoundError);
  assert.equal(missing.status, 404);
  assert.equal(missing.code, "not_found");

  await assert.rejects(Sandbox.create("no-such-template"), NotFoundError);
  await assert.rejects(Sandbox.create("tiny", { project: "no-such-project" }), NotFoundError);
  const inv = await Sandbox.create("tiny", { timeoutMs: -1 }).catch((e) => e);
  assert.ok(inv instanceof InvalidArgumentError);
  assert.equal(inv.status, 400);
  await assert.rejects(Sandbox.connect(""), InvalidArgumentError);
});

test("configuration: no key, options beat the environment, bad URL, unreachable server", async () => {
  await ctx.ready();
  const saved = process.env.LIZARD_API_KEY;
  delete process.env.LIZARD_API_KEY;
  try {
    const e = await Sandbox.list().catch((x) => x);
    assert.ok(e instanceof AuthenticationError);
    assert.match(e.message, /LIZARD_API_KEY/);
    assert.ok(Array.isArray(await Sandbox.list({ apiKey: saved })));
  } finally {
    process.env.LIZARD_API_KEY = saved;
  }
  await assert.rejects(Sandbox.list({ apiUrl: "ftp://example" }), InvalidArgumentError);
  assert.throws(() => new Lizard({ apiUrl: "not a url" }), InvalidArgumentError);
  // Nothing listens on a fresh free port: connect failures, retried, then APIConnectionError.
  const port = await freePort();
  const e = await Sandbox.create("tiny", { apiUrl: `http://127.0.0.1:${port}` }).catch((x) => x);
  assert.ok(e instanceof APIConnectionError, String(e));
  assert.equal(e.status, undefined);
  assert.match(e.message, /cannot reach/);
});

test("logging a sandbox or client never shows the API key", async () => {
  const { inspect } = await import("node:util");
  const sb = await ctx.create("tiny");
  const text = inspect(sb, { depth: 5 }) + inspect(new Lizard(), { depth: 5 }) + JSON.stringify(sb);
  assert.ok(!text.includes(process.env.LIZARD_API_KEY), text);
});
