// Transport behaviour that a healthy lizardd cannot be made to show
// (connections dropped mid-request, a server that never answers, 503s):
// a small local HTTP server misbehaves on purpose, and the SDK must retry
// only what is safe to send twice.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import {
  APIConnectionError,
  Lizard,
  Sandbox,
  TimeoutError,
  UnavailableError,
} from "../dist/index.js";

let server;
let url;
let plan = []; // per request: "drop" | "hang" | [status, body, headers]
const seen = [];

before(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body });
      const step = plan.shift() ?? [500, { error: { code: "internal", message: "unplanned" } }];
      if (step === "drop") return req.socket.destroy();
      if (step === "hang") return;
      const [status, doc, headers = {}] = step;
      res.writeHead(status, { "Content-Type": "application/json", ...headers });
      res.end(JSON.stringify(doc));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${server.address().port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

function reset(steps) {
  plan = steps;
  seen.length = 0;
}

const info = (id) => ({ sandboxId: id, status: "running", metadata: {} });

test("GET and DELETE are retried after a dropped connection", async () => {
  reset(["drop", [200, { sandboxes: [info("sb_a")] }]]);
  const list = await Sandbox.list({ apiUrl: url, apiKey: "k" });
  assert.deepEqual(list.map((s) => s.sandboxId), ["sb_a"]);
  assert.equal(seen.length, 2);
  assert.equal(seen[0].auth, "Bearer k");

  reset([[200, info("sb_b")], "drop", "drop", [204, {}]]);
  const sb = await Sandbox.connect("sb_b", { apiUrl: url, apiKey: "k" });
  assert.equal(await sb.kill(), true);
  assert.deepEqual(seen.map((s) => s.method), ["GET", "DELETE", "DELETE", "DELETE"]);
});

test("a POST that reached the server is not sent again", async () => {
  reset(["drop", [201, info("sb_twice")]]);
  const e = await Sandbox.create("tiny", { apiUrl: url, apiKey: "k" }).catch((x) => x);
  assert.ok(e instanceof APIConnectionError, String(e));
  assert.equal(seen.length, 1);
  const body = JSON.parse(seen[0].body);
  assert.equal(body.template, "tiny");
  assert.equal(body.timeoutMs, 300_000);
});

test("gives up after three dropped GETs", async () => {
  reset(["drop", "drop", "drop", [200, { sandboxes: [] }]]);
  await assert.rejects(Sandbox.list({ apiUrl: url, apiKey: "k" }), APIConnectionError);
  assert.equal(seen.length, 3);
});

test("a server that never answers is TimeoutError after requestTimeoutMs", async () => {
  reset(["hang"]);
  const e = await new Lizard({ apiUrl: url, apiKey: "k", requestTimeoutMs: 300 }).list().catch((x) => x);
  assert.ok(e instanceof TimeoutError, String(e));
  assert.equal(seen.length, 1);
});

test("503 is UnavailableError with retryAfter; restore waits for the pool", async () => {
  const busy = [503, { error: { code: "unavailable", message: "no ready copy" } }, { "Retry-After": "0.2" }];
  reset([busy]);
  const e = await Sandbox.restore("snap_x", { apiUrl: url, apiKey: "k", wait: false }).catch((x) => x);
  assert.ok(e instanceof UnavailableError);
  assert.equal(e.retryAfter, 0.2);
  assert.equal(e.message, "no ready copy");

  reset([busy, busy, [201, info("sb_restored")]]);
  const sb = await Sandbox.restore("snap_x", { apiUrl: url, apiKey: "k", wait: true, waitTimeoutMs: 10_000 });
  assert.equal(sb.sandboxId, "sb_restored");
  assert.equal(seen.length, 3);
  assert.ok(seen.every((s) => s.method === "POST" && s.url === "/v1/snapshots/snap_x/restore"));
});

test("an exec stream that ends without an exit event is an error", async () => {
  reset([[200, info("sb_s")]]);
  const sb = await Sandbox.connect("sb_s", { apiUrl: url, apiKey: "k" });
  reset([[200, { type: "stdout", data: "partial" }, { "Content-Type": "application/x-ndjson" }]]);
  await assert.rejects(sb.process.exec("x", { onStdout: () => {} }), APIConnectionError);
  assert.equal(seen[0].url, "/v1/sandboxes/sb_s/exec");
});
