// Test harness: a real lizardd on a free port with a temporary data dir,
// like tests/integration/conftest.py. Each test file starts its own daemon
// (node --test runs files in separate processes) and stops it at the end,
// after killing the sandboxes its tests left behind.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, openSync, closeSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after } from "node:test";

import { Lizard, Sandbox } from "../dist/index.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const BUILD = process.env.LIZARD_BUILD_DIR ?? join(REPO, "build");
export const LIZARDD = join(BUILD, "lizardd");
export const TEMPLATE_DIR = process.env.LIZARD_TEMPLATE_DIR ?? "/var/lib/lizard/templates";
// Small writable layers, as in the Python tests; room for the 10 MB file tests.
const TEST_DISK_MB = 256;

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function healthy(url) {
  try {
    const r = await fetch(url + "/healthz");
    return r.ok && (await r.json()).status === "ok";
  } catch {
    return false;
  }
}

/** Start lizardd; resolves to {url, adminKey, stop()}. */
export async function startDaemon({ extraArgs = [] } = {}) {
  if (!existsSync(LIZARDD)) throw new Error(`${LIZARDD} is missing: run make first`);
  const tmp = mkdtempSync(join(tmpdir(), "lizard-js-"));
  const data = join(tmp, "data");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logPath = join(tmp, "lizardd.log");
  const log = openSync(logPath, "a");
  const proc = spawn(
    LIZARDD,
    ["--listen", `127.0.0.1:${port}`, "--data-dir", data, "--template-dir", TEMPLATE_DIR,
     "--disk-mb", String(TEST_DISK_MB), ...extraArgs],
    { stdio: ["ignore", log, log], env: { ...process.env, LIZARD_TEMPLATE_DIR: TEMPLATE_DIR },
      detached: true },
  );
  closeSync(log);
  let exited = null;
  proc.on("exit", (code, sig) => { exited = code ?? sig; });
  const tail = () => {
    try { return readFileSync(logPath, "utf8").split("\n").slice(-40).join("\n"); }
    catch { return "(no log)"; }
  };
  const deadline = Date.now() + 60_000;
  while (!(await healthy(url))) {
    if (exited !== null) throw new Error(`lizardd exited (${exited}) during start-up:\n${tail()}`);
    if (Date.now() > deadline) throw new Error(`lizardd did not answer /healthz:\n${tail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const adminKey = readFileSync(join(data, "admin-key"), "utf8").trim();

  let stopping = null;
  const stop = () => (stopping ??= stopNow());
  async function stopNow() {
    // Sandboxes outlive the daemon by design (a restart finds them), so kill
    // what the tests left before stopping it. If that fails (a hung daemon),
    // keep the data dir: removing it would recurse into mounted sandboxes.
    let clean = false; // a daemon that died by itself may have left sandboxes
    if (exited === null) {
      try {
        const adm = new Lizard({ apiUrl: url, apiKey: adminKey, requestTimeoutMs: 20_000 });
        for (const sb of await adm.list()) await (await adm.connect(sb.sandboxId)).kill();
        clean = true;
      } catch (e) {
        console.error(`cleanup of ${url} failed (${e}); keeping ${tmp}`);
      }
      const gone = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 30_000);
      await gone;
      clearTimeout(t);
    }
    if (process.env.LIZARD_TEST_KEEP || !clean) console.error(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
  // An interrupted run (Ctrl-C, a CI timeout) still cleans up.
  for (const sig of ["SIGINT", "SIGTERM"]) {
    process.once(sig, () => stop().finally(() => process.exit(130)));
  }
  return { url, port, adminKey, stop, logTail: tail };
}

export function requireTemplate(name) {
  if (!existsSync(join(TEMPLATE_DIR, name, "meta.json"))) {
    throw new Error(`template ${name} is not built in ${TEMPLATE_DIR}: run build/lizard template build ${name}`);
  }
}

/**
 * A daemon for this test file, started on first use: `await ctx.ready()`
 * (ctx.create does it too). Sets LIZARD_API_URL / LIZARD_API_KEY so the SDK
 * finds it the way a user's program would. Stopped in an `after` hook.
 */
export function useDaemon(opts = {}) {
  const ctx = { daemon: null, made: [] };
  let starting = null;
  ctx.ready = () => {
    starting ??= startDaemon(opts).then((d) => {
      ctx.daemon = d;
      process.env.LIZARD_API_URL = d.url;
      process.env.LIZARD_API_KEY = d.adminKey;
      return d;
    });
    return starting;
  };
  after(async () => {
    for (const sb of ctx.made) await sb.kill().catch(() => undefined);
    if (ctx.daemon) await ctx.daemon.stop();
  });
  /** Sandbox.create that is cleaned up at the end of the file. */
  ctx.create = async (template = "tiny", createOpts = {}) => {
    await ctx.ready();
    requireTemplate(template);
    const sb = await Sandbox.create(template, { timeoutMs: 600_000, ...createOpts });
    ctx.made.push(sb);
    return sb;
  };
  return ctx;
}
