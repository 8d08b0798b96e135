// sandbox.fs: text, binary, streamed large files, directory calls, errors.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, test } from "node:test";

import { ConflictError, InvalidArgumentError, NotFoundError } from "../dist/index.js";
import { useDaemon } from "./helpers.mjs";

const ctx = useDaemon();
let sb;
let base;
const local = mkdtempSync(join(tmpdir(), "lizard-js-files-"));
before(async () => {
  sb = await ctx.create("tiny");
  base = await ctx.create("base");
});
after(() => rmSync(local, { recursive: true, force: true }));

const sha256 = (b) => createHash("sha256").update(b).digest("hex");

test("text round trip; parents are created", async () => {
  const text = "print(42)\nünïcödé ✓\n";
  const w = await sb.fs.write("/tmp/new/dir/task.py", text);
  assert.equal(w.path, "/tmp/new/dir/task.py");
  assert.equal(w.size, Buffer.byteLength(text));
  assert.equal(await sb.fs.read("/tmp/new/dir/task.py"), text);
  assert.equal((await sb.process.exec("cat /tmp/new/dir/task.py")).stdout, text);
});

test("seed: write a script and run it", async () => {
  await base.fs.write("/tmp/task.py", "print(42)\n");
  const result = await base.process.exec("python3 /tmp/task.py");
  assert.equal(result.stdout, "42\n");
});

test("binary: all 256 byte values, from Uint8Array, Buffer and ArrayBuffer", async () => {
  const all = new Uint8Array(256).map((_, i) => i);
  await sb.fs.write("/tmp/bin/u8", all);
  await sb.fs.write("/tmp/bin/buf", Buffer.from(all));
  await sb.fs.write("/tmp/bin/ab", all.buffer);
  for (const name of ["u8", "buf", "ab"]) {
    const back = await sb.fs.readBytes(`/tmp/bin/${name}`);
    assert.ok(back instanceof Uint8Array);
    assert.deepEqual(Buffer.from(back), Buffer.from(all), name);
  }
  assert.equal((await sb.fs.stat("/tmp/bin/u8")).size, 256);
  assert.equal((await sb.process.exec("od -An -tx1 /tmp/bin/u8 | tr -d ' \\n' | head -c 12")).stdout, "000102030405");
});

test("empty file", async () => {
  await sb.fs.write("/tmp/empty", "");
  assert.equal((await sb.fs.readBytes("/tmp/empty")).length, 0);
  assert.equal(await sb.fs.read("/tmp/empty"), "");
});

test("10 MB streamed both ways: Node Readable, ReadableStream, async generator", async () => {
  const size = 10 * 1024 * 1024;
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
  const path = join(local, "big.bin");
  writeFileSync(path, data);
  const want = sha256(data);

  const w = await sb.fs.write("/tmp/big1", createReadStream(path, { highWaterMark: 256 * 1024 }));
  assert.equal(w.size, size);
  assert.equal((await sb.process.exec("sha256sum /tmp/big1")).stdout.split(" ")[0], want);

  await sb.fs.write("/tmp/big2", Readable.toWeb(createReadStream(path)));
  async function* gen() {
    for (let off = 0; off < size; off += 1 << 20) yield data.subarray(off, off + (1 << 20));
  }
  await sb.fs.write("/tmp/big3", gen());
  for (const p of ["/tmp/big2", "/tmp/big3"]) {
    assert.equal((await sb.fs.stat(p)).size, size, p);
  }

  // Out again: in pieces, never whole, and as one buffer.
  const h = createHash("sha256");
  let pieces = 0;
  for await (const chunk of sb.fs.iterBytes("/tmp/big3")) {
    h.update(chunk);
    pieces++;
  }
  assert.equal(h.digest("hex"), want);
  assert.ok(pieces > 1);
  assert.equal(sha256(await sb.fs.readBytes("/tmp/big2")), want);
});

test("list, stat, exists, mkdir -p, rename, remove", async () => {
  await sb.fs.mkdir("/tmp/tree/a/b");
  await sb.fs.mkdir("/tmp/tree/a/b"); // -p: again is fine
  await sb.fs.write("/tmp/tree/a/f.txt", "12345");
  const entries = await sb.fs.list("/tmp/tree/a");
  assert.deepEqual(entries.map((e) => [e.name, e.type]).sort(), [["b", "dir"], ["f.txt", "file"]]);
  const st = await sb.fs.stat("/tmp/tree/a/f.txt");
  assert.equal(st.size, 5);
  assert.equal(st.type, "file");
  assert.equal(st.path, "/tmp/tree/a/f.txt");
  assert.equal(await sb.fs.exists("/tmp/tree/a/f.txt"), true);
  assert.equal(await sb.fs.exists("/tmp/tree/nope"), false);

  await sb.fs.rename("/tmp/tree/a/f.txt", "/tmp/tree/g.txt");
  assert.equal(await sb.fs.read("/tmp/tree/g.txt"), "12345");
  assert.equal(await sb.fs.exists("/tmp/tree/a/f.txt"), false);

  await sb.fs.remove("/tmp/tree/g.txt");
  assert.equal(await sb.fs.exists("/tmp/tree/g.txt"), false);
  await assert.rejects(sb.fs.remove("/tmp/tree"), ConflictError); // not empty
  await sb.fs.remove("/tmp/tree", { recursive: true });
  assert.equal(await sb.fs.exists("/tmp/tree"), false);
});

test("files belong to the requesting user; mode", async () => {
  await base.fs.write("/home/user/mine.sh", "echo mine\n", { user: "user", mode: 0o755 });
  const st = await base.fs.stat("/home/user/mine.sh");
  assert.equal(st.uid, 1000);
  assert.equal(st.mode & 0o777, 0o755);
  assert.equal((await base.process.exec("/home/user/mine.sh", { user: "user" })).stdout, "mine\n");
  await assert.rejects(base.fs.write("/root/x", "no", { user: "user" }), { name: "ForbiddenError" });
});

test("errors: `..`, relative paths, missing files", async () => {
  await assert.rejects(sb.fs.read("/tmp/../etc/passwd"), InvalidArgumentError);
  await assert.rejects(sb.fs.write("/tmp/a/../../x", "x"), InvalidArgumentError);
  await assert.rejects(sb.fs.read("relative/path"), InvalidArgumentError);
  const e = await sb.fs.read("/no/such/file").catch((x) => x);
  assert.ok(e instanceof NotFoundError);
  assert.equal(e.status, 404);
  assert.ok(e.message.length > 0);
  await assert.rejects(sb.fs.stat("/no/such"), NotFoundError);
  await assert.rejects(sb.fs.list("/no/such"), NotFoundError);
  await assert.rejects(sb.fs.rename("/no/such", "/tmp/x"), NotFoundError);
  await assert.rejects(sb.fs.write("/tmp/x", 42), InvalidArgumentError);
});
