/** `sandbox.process`: run commands, stream their output, manage background ones. */

import { APIConnectionError, InvalidArgumentError, TimeoutError, errorFor } from "./errors.js";
import { Transport, quoteId, sleep } from "./http.js";
import type { ExecResult, ProcessInfo, ProcessOutput } from "./types.js";

/** What the server uses when an exec names no timeout. */
export const SERVER_DEFAULT_EXEC_TIMEOUT_MS = 60_000;
/**
 * How much longer than the command's own limit the client waits for the
 * answer: the server needs a moment to kill the process group and reply.
 */
const READ_MARGIN_MS = 30_000;

export type Command = string | readonly string[];
/** Gets every chunk of output text as it is produced; may return a promise (awaited in order). */
export type OutputCallback = (data: string) => unknown;
export type Signal = number | string;

export interface ExecOptions {
  /** Default `root`; `user` is uid 1000 with home `/home/user`. */
  user?: string;
  cwd?: string;
  /** Added to (and overriding) the sandbox's env for this command. */
  env?: Record<string, string>;
  /** Limit for the command (default 60 000; 0 = none). At the limit the result has `timedOut: true`. */
  timeoutMs?: number;
  /** Text (or UTF-8 bytes) given to the command's stdin. */
  stdin?: string | Uint8Array;
  /** Stream stdout: called with each chunk as it arrives. */
  onStdout?: OutputCallback;
  /** Stream stderr: called with each chunk as it arrives. */
  onStderr?: OutputCallback;
  /** Start without waiting; returns a ProcessHandle. */
  background?: boolean;
  /** Cap per stream (default 1 MiB); beyond it output is dropped and `truncated` is true. */
  maxOutputBytes?: number;
}

const STATUS_OF_CODE: Record<string, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  paused: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

/** A background process started with `exec(cmd, {background: true})`. */
export class ProcessHandle {
  constructor(
    private readonly process: Process,
    readonly pid: number,
  ) {}

  /** Output collected so far, whether it still runs, and its exit code. */
  async output(): Promise<ProcessOutput> {
    return this.process.output(this.pid);
  }

  /** Write to its stdin; `eof` closes stdin afterwards. Returns bytes written. */
  async sendStdin(data: string | Uint8Array, opts: { eof?: boolean } = {}): Promise<number> {
    return this.process.sendStdin(this.pid, data, opts);
  }

  async signal(signal: Signal = "SIGTERM"): Promise<void> {
    return this.process.signal(this.pid, signal);
  }

  async kill(signal: Signal = "SIGKILL"): Promise<void> {
    return this.process.signal(this.pid, signal);
  }

  /**
   * Poll until the process exits; returns its final output.
   * Throws TimeoutError if it still runs after `timeoutMs` (default: wait forever).
   */
  async wait(opts: { timeoutMs?: number; pollIntervalMs?: number } = {}): Promise<ProcessOutput> {
    const start = Date.now();
    for (;;) {
      const out = await this.output();
      if (!out.running) return out;
      if (opts.timeoutMs !== undefined && Date.now() - start >= opts.timeoutMs) {
        throw new TimeoutError(`process ${this.pid} still running after ${opts.timeoutMs} ms`);
      }
      await sleep(opts.pollIntervalMs ?? 100);
    }
  }
}

export class Process {
  /** @internal */
  readonly #t: Transport;
  readonly #sandboxId: string;

  constructor(t: Transport, sandboxId: string) {
    this.#t = t;
    this.#sandboxId = sandboxId;
  }

  private path(suffix: string): string {
    return `/v1/sandboxes/${quoteId(this.#sandboxId)}${suffix}`;
  }

  /**
   * Run `cmd` and wait for it. A string runs through `/bin/sh -c`; an array
   * runs the program directly (no shell). A non-zero exit code and a timeout
   * are results, not errors. With `onStdout`/`onStderr` the output streams
   * to the callbacks while the command runs; the result still holds the
   * whole (capped) output. With `background: true` returns a ProcessHandle at once.
   */
  exec(cmd: Command, opts: ExecOptions & { background: true }): Promise<ProcessHandle>;
  exec(cmd: Command, opts?: ExecOptions & { background?: false }): Promise<ExecResult>;
  exec(cmd: Command, opts?: ExecOptions): Promise<ExecResult | ProcessHandle>;
  async exec(cmd: Command, opts: ExecOptions = {}): Promise<ExecResult | ProcessHandle> {
    const body: Record<string, unknown> = { cmd: command(cmd) };
    if (opts.user !== undefined) body.user = opts.user;
    if (opts.cwd !== undefined) body.cwd = opts.cwd;
    if (opts.env !== undefined) body.env = opts.env;
    if (opts.timeoutMs !== undefined) body.timeoutMs = opts.timeoutMs;
    if (opts.stdin !== undefined) body.stdin = text(opts.stdin);
    if (opts.maxOutputBytes !== undefined) body.maxOutputBytes = opts.maxOutputBytes;
    if (opts.background) {
      if (opts.onStdout || opts.onStderr) {
        throw new InvalidArgumentError(
          "background processes do not stream; read their output with handle.output()",
        );
      }
      body.background = true;
      const doc = await this.#t.json<{ pid: number }>("POST", this.path("/exec"), { json: body });
      return new ProcessHandle(this, Number(doc.pid));
    }
    const timeoutMs = readTimeout(opts.timeoutMs);
    if (!opts.onStdout && !opts.onStderr) {
      const doc = await this.#t.json<Partial<ExecResult>>("POST", this.path("/exec"), {
        json: body,
        timeoutMs,
      });
      return result(doc);
    }
    return this.execStream(body, timeoutMs, opts.onStdout, opts.onStderr);
  }

  private async execStream(
    body: Record<string, unknown>,
    timeoutMs: number,
    onStdout?: OutputCallback,
    onStderr?: OutputCallback,
  ): Promise<ExecResult> {
    const reply = await this.#t.stream("POST", this.path("/exec"), {
      json: body,
      timeoutMs,
      headers: { Accept: "application/x-ndjson" },
    });
    const out: string[] = [];
    const err: string[] = [];
    let final: Record<string, unknown> | undefined;
    const decoder = new TextDecoder();
    let pending = "";
    const handle = async (line: string): Promise<void> => {
      if (!line.trim()) return;
      const ev = JSON.parse(line) as Record<string, unknown>;
      const data = typeof ev.data === "string" ? ev.data : "";
      if (ev.type === "stdout") {
        out.push(data);
        if (onStdout) await onStdout(data);
      } else if (ev.type === "stderr") {
        err.push(data);
        if (onStderr) await onStderr(data);
      } else if (ev.type === "exit") {
        final = ev;
      } else if (ev.type === "error") {
        const e = (ev.error ?? {}) as { code?: string; message?: string };
        throw errorFor(
          e.code ? STATUS_OF_CODE[e.code] : undefined,
          e.message || "exec failed",
          e.code,
        );
      }
    };
    // Leaving this loop early (a callback threw) cancels the rest of the stream.
    for await (const chunk of reply.chunks()) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        await handle(line);
      }
    }
    await handle(pending + decoder.decode());
    if (final === undefined) {
      throw new APIConnectionError("the exec stream ended without an exit event");
    }
    return result({
      stdout: out.join(""),
      stderr: err.join(""),
      exitCode: final.exitCode as number,
      truncated: Boolean(final.truncated),
      timedOut: Boolean(final.timedOut),
    });
  }

  /** Background processes of the sandbox (running and finished). */
  async list(): Promise<ProcessInfo[]> {
    const doc = await this.#t.json<{ processes?: ProcessInfo[] }>("GET", this.path("/processes"));
    return doc.processes ?? [];
  }

  /** Send `signal` (a number or a name like `"SIGTERM"`) to a background process. */
  async signal(pid: number, signal: Signal = "SIGTERM"): Promise<void> {
    await this.#t.json("POST", this.path(`/processes/${pidOf(pid)}/signal`), { json: { signal } });
  }

  /** Send `signal` (default SIGKILL) to a background process. */
  async kill(pid: number, signal: Signal = "SIGKILL"): Promise<void> {
    return this.signal(pid, signal);
  }

  /** Write text to a background process's stdin; `eof` closes it after. Returns bytes written. */
  async sendStdin(
    pid: number,
    data: string | Uint8Array,
    opts: { eof?: boolean } = {},
  ): Promise<number> {
    const s = text(data);
    const doc = await this.#t.json<{ written?: number }>(
      "POST",
      this.path(`/processes/${pidOf(pid)}/stdin`),
      { json: { data: s, eof: Boolean(opts.eof) } },
    );
    return doc.written ?? new TextEncoder().encode(s).length;
  }

  /** Output collected so far (capped like exec), whether it runs, its exit code. */
  async output(pid: number): Promise<ProcessOutput> {
    return this.#t.json<ProcessOutput>("GET", this.path(`/processes/${pidOf(pid)}/output`));
  }
}

/** Client-side limit for an exec: always longer than the command may run (0 = none). */
function readTimeout(timeoutMs: number | undefined): number {
  const t = timeoutMs ?? SERVER_DEFAULT_EXEC_TIMEOUT_MS;
  return t === 0 ? 0 : t + READ_MARGIN_MS;
}

function result(doc: Partial<ExecResult>): ExecResult {
  return {
    stdout: doc.stdout ?? "",
    stderr: doc.stderr ?? "",
    exitCode: doc.exitCode as number,
    truncated: Boolean(doc.truncated),
    timedOut: Boolean(doc.timedOut),
  };
}

function command(cmd: Command): string | string[] {
  if (typeof cmd === "string") return cmd;
  if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((a) => typeof a === "string")) {
    throw new InvalidArgumentError("cmd must be a string or a non-empty array of strings");
  }
  return [...cmd];
}

function text(data: string | Uint8Array): string {
  return typeof data === "string" ? data : new TextDecoder().decode(data);
}

function pidOf(pid: number): number {
  if (!Number.isInteger(pid) || pid <= 0) throw new InvalidArgumentError("pid must be a positive integer");
  return pid;
}
