// exposePort (docs/api.md "Ports", issue 4): a server in the sandbox on
// 0.0.0.0:PORT is reached through the daemon's proxy with the access token.
import assert from "node:assert/strict";
import { request } from "node:http";
import { test } from "node:test";

import { NotFoundError } from "../dist/index.js";
import { useDaemon } from "./helpers.mjs";

const ctx = useDaemon();

/** GET through the proxy: connect to the URL's port on 127.0.0.1, route by Host. */
function proxyGet(u, headers = {}) {
  const url = new URL(u);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: url.port, path: url.pathname + url.search, headers: { Host: url.host, ...headers } },
      (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function until(fn, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("seed: expose a python http.server and reach it with the token", async () => {
  const sandbox = await ctx.create("base");
  await sandbox.fs.write("/tmp/hello.txt", "hello through the proxy\n");
  await sandbox.process.exec(
    "nohup python3 -m http.server 3000 --bind 0.0.0.0 --directory /tmp >/tmp/http.log 2>&1 </dev/null &",
  );
  const exposed = await sandbox.exposePort(3000);
  const { url, hostname, accessToken } = exposed;
  assert.equal(exposed.port, 3000);
  assert.equal(hostname.split(".")[0], `3000-${sandbox.sandboxId}`);
  assert.ok(accessToken.length >= 16);
  assert.ok(url.includes(`lizard_token=${accessToken}`) || url.includes(encodeURIComponent(accessToken)), url);
  const base = new URL(url);
  const file = `${base.protocol}//${base.host}/hello.txt`;

  const ok = await until(async () => {
    const r = await proxyGet(file, { "X-Lizard-Access-Token": accessToken });
    return r.status === 200 ? r : undefined;
  });
  assert.ok(ok, "the proxied server never answered 200");
  assert.equal(ok.body, "hello through the proxy\n");
  assert.equal((await proxyGet(file)).status, 401);
  assert.equal((await proxyGet(file, { "X-Lizard-Access-Token": "wrong" })).status, 401);

  // Exposing again returns the same token; the port is listed; closing kills the token.
  assert.equal((await sandbox.exposePort(3000)).accessToken, accessToken);
  assert.deepEqual((await sandbox.listPorts()).map((p) => p.port), [3000]);
  await sandbox.closePort(3000);
  assert.equal((await proxyGet(file, { "X-Lizard-Access-Token": accessToken })).status, 401);
});

test("exposePort on a killed sandbox is NotFoundError", async () => {
  const sb = await ctx.create("tiny");
  await sb.kill();
  await assert.rejects(sb.exposePort(3000), NotFoundError);
});
