// sandbox.process: exec (string and argv), results, streaming, background.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import { InvalidArgumentError, NotFoundError, ProcessHandle, Sandbox } from "../dist/index.js";
import { useDaemon } from "./helpers.mjs";

const ctx = useDaemon();
let tiny;
let base;
before(async () => {
  tiny = await ctx.create("tiny");
  base = await ctx.create("base");
});

describe("exec", () => {
  test("seed: create, exec, kill", async () => {
    const sandbox = await Sandbox.create("base", { project: "default" });
    try {
      const { stdout } = await sandbox.process.exec('echo "hello from Lizard"');
      assert.equal(stdout, "hello from Lizard\n");
    } finally {
      assert.equal(await sandbox.kill(), true);
    }
    assert.equal(await sandbox.kill(), false);
  });

  test("a string runs through the shell, an argv array does not", async () => {
    const r = await tiny.process.exec("echo $((6 * 7)) | tr 4 X");
    assert.deepEqual(r, { stdout: "X2\n", stderr: "", exitCode: 0, truncated: false, timedOut: false });
    const a = await tiny.process.exec(["echo", "$HOME", "a b", "*"]);
    assert.equal(a.stdout, "$HOME a b *\n");
  });

  test("non-zero exit codes are results", async () => {
    const r = await tiny.process.exec("echo out; echo err >&2; exit 7");
    assert.equal(r.exitCode, 7);
    assert.equal(r.stdout, "out\n");
    assert.equal(r.stderr, "err\n");
  });

  test("a missing program is exit code 127, for argv too", async () => {
    assert.equal((await tiny.process.exec("no-such-program-xyz")).exitCode, 127);
    const r = await tiny.process.exec(["no-such-program-xyz", "arg"]);
    assert.equal(r.exitCode, 127);
    assert.match(r.stderr, /no-such-program-xyz/);
  });

  test("user, cwd and env", async () => {
    const r = await base.process.exec(["sh", "-c", "id -un; id -u; pwd; echo $GREETING"], {
      user: "user",
      cwd: "/home/user",
      env: { GREETING: "hi there" },
    });
    assert.equal(r.stdout, "user\n1000\n/home/user\nhi there\n");
    assert.equal((await base.process.exec("id -u")).stdout, "0\n");
  });

  test("run-task flow: python3 argv as user, JSON output", async () => {
    const script = ["import json", "values = [12, 8, 5]", "print(json.dumps({'total': sum(values)}))"].join("\n");
    await base.fs.write("/tmp/task.py", script);
    const result = await base.process.exec(["python3", "/tmp/task.py"], { user: "user", timeoutMs: 30_000 });
    assert.equal(result.exitCode, 0);
    assert.equal(result.truncated, false);
    assert.deepEqual(JSON.parse(result.stdout), { total: 25 });
  });

  test("stdin", async () => {
    const r = await tiny.process.exec("tr a-z A-Z", { stdin: "shout\n" });
    assert.equal(r.stdout, "SHOUT\n");
  });

  test("timeout: timedOut and nothing keeps running", async () => {
    const marker = "2996";
    const r = await tiny.process.exec(`sleep ${marker} & sleep ${marker}; echo never`, { timeoutMs: 1000 });
    assert.equal(r.timedOut, true);
    assert.doesNotMatch(r.stdout, /never/);
    const ps = await tiny.process.exec("ps -o pid,args");
    assert.doesNotMatch(ps.stdout, new RegExp(`sleep ${marker}`));
    assert.equal((await tiny.process.exec("echo ok")).stdout, "ok\n");
  });

  test("a command shorter than its timeout completes", async () => {
    const r = await tiny.process.exec("sleep 1; echo done", { timeoutMs: 3000 });
    assert.equal(r.stdout, "done\n");
    assert.equal(r.timedOut, false);
  });

  test("output beyond 1 MiB is truncated", async () => {
    const r = await tiny.process.exec("head -c 3000000 /dev/zero | tr '\\0' a; echo tail >&2");
    assert.equal(r.truncated, true);
    assert.equal(r.stdout.length, 1 << 20);
    assert.match(r.stdout, /^a+$/);
    assert.equal(r.stderr, "tail\n");
    const small = await tiny.process.exec("head -c 100000 /dev/zero | tr '\\0' b");
    assert.equal(small.truncated, false);
    assert.equal(small.stdout.length, 100000);
  });

  test("maxOutputBytes sets the cap", async () => {
    const r = await tiny.process.exec("head -c 5000 /dev/zero | tr '\\0' c", { maxOutputBytes: 1000 });
    assert.equal(r.truncated, true);
    assert.equal(r.stdout, "c".repeat(1000));
  });

  test("invalid UTF-8 becomes U+FFFD", async () => {
    const r = await tiny.process.exec("printf 'a\\377b'");
    assert.equal(r.stdout, "a\uFFFDb");
  });
});

describe("streaming", () => {
  test("callbacks get the output in order", async () => {
    const events = [];
    const r = await tiny.process.exec(
      "for i in 1 2 3 4 5; do echo line$i; echo e$i >&2; sleep 0.05; done; exit 4",
      { onStdout: (s) => events.push(["out", s]), onStderr: (s) => events.push(["err", s]) },
    );
    assert.equal(r.exitCode, 4);
    const out = events.filter(([k]) => k === "out").map(([, s]) => s).join("");
    const err = events.filter(([k]) => k === "err").map(([, s]) => s).join("");
    assert.equal(out, [1, 2, 3, 4, 5].map((i) => `line${i}\n`).join(""));
    assert.equal(err, [1, 2, 3, 4, 5].map((i) => `e${i}\n`).join(""));
    assert.equal(r.stdout, out);
    assert.equal(r.stderr, err);
  });

  test("output arrives while the command runs (async callback calls the SDK)", async () => {
    // The command waits for a file the stdout callback creates, so it can
    // only finish if the callback ran before the command exited.
    const go = `/tmp/go-${process.pid}`;
    const seen = [];
    const r = await tiny.process.exec(
      `echo ready; i=0; while [ ! -e ${go} ]; do sleep 0.05; i=$((i+1)); [ $i -gt 300 ] && exit 9; done; echo done`,
      {
        timeoutMs: 30_000,
        onStdout: async (s) => {
          seen.push(s);
          if (seen.join("").includes("ready") && !(await tiny.fs.exists(go))) await tiny.fs.write(go, "1");
        },
      },
    );
    assert.equal(r.exitCode, 0);
    assert.equal(r.timedOut, false);
    assert.equal(seen.join(""), "ready\ndone\n");
  });

  test("streamed timeout and truncation", async () => {
    let got = "";
    const r = await tiny.process.exec("echo first; sleep 30", { timeoutMs: 1000, onStdout: (s) => { got += s; } });
    assert.equal(r.timedOut, true);
    assert.equal(got, "first\n");
    const big = await tiny.process.exec("head -c 2000000 /dev/zero | tr '\\0' z", { onStdout: () => {} });
    assert.equal(big.truncated, true);
    assert.equal(big.stdout.length, 1 << 20);
  });

  test("a callback that throws rejects the exec", async () => {
    await assert.rejects(
      tiny.process.exec("echo x; sleep 1; echo y", { onStdout: () => { throw new Error("boom"); } }),
      /boom/,
    );
    assert.equal((await tiny.process.exec("echo still ok")).stdout, "still ok\n");
  });
});

describe("background processes", () => {
  test("stdin, output, list, wait", async () => {
    const h = await tiny.process.exec("cat; echo bye >&2", { background: true });
    assert.ok(h instanceof ProcessHandle);
    assert.ok(Number.isInteger(h.pid) && h.pid > 0);
    let listed = await tiny.process.list();
    assert.equal(listed.find((p) => p.pid === h.pid)?.running, true);
    assert.equal(await tiny.process.sendStdin(h.pid, "hello "), 6);
    await h.sendStdin("world\n", { eof: true });
    const out = await h.wait({ timeoutMs: 20_000 });
    assert.equal(out.stdout, "hello world\n");
    assert.equal(out.stderr, "bye\n");
    assert.equal(out.exitCode, 0);
    assert.equal(out.running, false);
    listed = await tiny.process.list();
    const p = listed.find((x) => x.pid === h.pid);
    assert.equal(p.running, false);
    assert.equal(p.exitCode, 0);
  });

  test("signals: SIGTERM by name, SIGKILL by number", async () => {
    const h = await tiny.process.exec(["sleep", "333"], { background: true });
    assert.equal((await tiny.process.output(h.pid)).running, true);
    await tiny.process.signal(h.pid, "SIGTERM");
    assert.equal((await h.wait({ timeoutMs: 20_000 })).exitCode, 128 + 15);
    const h2 = await tiny.process.exec("sleep 334", { background: true });
    await tiny.process.kill(h2.pid, 9);
    assert.equal((await h2.wait({ timeoutMs: 20_000 })).exitCode, 128 + 9);
    const h3 = await tiny.process.exec("sleep 335", { background: true });
    await h3.kill();
    assert.equal((await h3.wait({ timeoutMs: 20_000 })).exitCode, 128 + 9);
  });

  test("unknown pid is NotFoundError; streaming a background exec is refused", async () => {
    await assert.rejects(tiny.process.output(999_999), NotFoundError);
    await assert.rejects(tiny.process.signal(999_999, 15), NotFoundError);
    await assert.rejects(
      tiny.process.exec("true", { background: true, onStdout: () => {} }),
      InvalidArgumentError,
    );
  });

  test("wait gives up with TimeoutError", async () => {
    const h = await tiny.process.exec("sleep 336", { background: true });
    await assert.rejects(h.wait({ timeoutMs: 200 }), { name: "TimeoutError" });
    await h.kill();
  });
});

test("bad commands are InvalidArgumentError", async () => {
  await assert.rejects(tiny.process.exec([]), InvalidArgumentError);
  await assert.rejects(tiny.process.exec("true", { timeoutMs: -5 }), InvalidArgumentError);
});
