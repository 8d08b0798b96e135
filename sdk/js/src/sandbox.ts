/** Sandbox handles. */

import {
  InvalidArgumentError,
  LizardError,
  NotFoundError,
  TimeoutError,
  UnavailableError,
} from "./errors.js";
import { ClientOptions, Transport, quoteId, sleep } from "./http.js";
import { Filesystem } from "./fs.js";
import { Process } from "./process.js";
import type {
  ExposedPort,
  NetworkOptions,
  PortInfo,
  SandboxInfo,
  SandboxStatus,
  Snapshot,
  StatusResult,
  VolumeSpec,
} from "./types.js";

/** Lifetime the SDK asks for when the caller names none (5 minutes). */
export const DEFAULT_TIMEOUT_MS = 300_000;
/** How long `waitForStatus`, `waitForSnapshot` and `restore({wait: true})` wait by default. */
export const DEFAULT_WAIT_MS = 60_000;
/** The server answers a status long-poll after at most this long. */
const STATUS_POLL_MAX_MS = 30_000;

export interface SandboxOptions {
  /** Project id, slug or name (default: the key's project). */
  project?: string;
  /** Alias of `project`. */
  projectId?: string;
  /** Lifetime in ms (default 300 000; 0 = no expiry). Not the limit of any command. */
  timeoutMs?: number;
  /** `small`, `medium` or `large` (sizes and prices live in the server config). */
  size?: string;
  cpuCount?: number;
  memoryMB?: number;
  /** Environment of every command in the sandbox. */
  env?: Record<string, string>;
  metadata?: Record<string, string>;
  /** Volumes to attach, e.g. `[{volume: "data", mountPath: "/workspace"}]` or `["data"]`. */
  volumes?: VolumeSpec[];
  network?: NetworkOptions;
}

export interface CreateOptions extends SandboxOptions, ClientOptions {}

export interface ListOptions extends ClientOptions {
  project?: string;
  status?: string;
}

export interface RestoreOptions extends ClientOptions {
  /** Lifetime of the new sandbox (default 300 000; 0 = no expiry). */
  timeoutMs?: number;
  metadata?: Record<string, string>;
  env?: Record<string, string>;
  /**
   * While no pooled copy is ready the server answers 503 (UnavailableError).
   * With `wait: true`, retry as its `Retry-After` says, for up to
   * `waitTimeoutMs` (default 60 000).
   */
  wait?: boolean;
  waitTimeoutMs?: number;
}

export interface WaitOptions {
  /** Give up (TimeoutError) after this long. */
  timeoutMs?: number;
}

export interface WaitForSnapshotOptions extends WaitOptions, ClientOptions {
  pollIntervalMs?: number;
}

/** One sandbox. Make it with `Sandbox.create`, `Sandbox.connect` or `Sandbox.restore`. */
export class Sandbox {
  /** The sandbox's id (`sb_…`). */
  readonly sandboxId: string;
  /** Run commands: `exec`, background processes. */
  readonly process: Process;
  /** Files: `write`, `read`, `readBytes`, `list`, `stat`, `mkdir`, `remove`, `rename`. */
  readonly fs: Filesystem;
  readonly #t: Transport;

  /** @internal Use `Sandbox.create` / `Sandbox.connect`. */
  constructor(sandboxId: string, transport: Transport) {
    this.sandboxId = sandboxId;
    this.#t = transport;
    this.process = new Process(transport, sandboxId);
    this.fs = new Filesystem(transport, sandboxId);
  }

  // ---- making handles ----

  /** Start a sandbox from `template` (default `base`) and return its handle. */
  static async create(template = "base", opts: CreateOptions = {}): Promise<Sandbox> {
    return createSandbox(new Transport(opts), template, opts);
  }

  /**
   * A handle to an existing sandbox. Only checks that it exists (throws
   * NotFoundError once it stopped); does not resume a paused sandbox.
   */
  static async connect(sandboxId: string, opts: ClientOptions = {}): Promise<Sandbox> {
    return connectSandbox(new Transport(opts), sandboxId);
  }

  /** Running and paused sandboxes the key may see (its project's; admin: any). */
  static async list(opts: ListOptions = {}): Promise<SandboxInfo[]> {
    return listSandboxes(new Transport(opts), opts.project, opts.status);
  }

  /** Start a new sandbox from a snapshot (new id, same size). */
  static async restore(snapshotId: string, opts: RestoreOptions = {}): Promise<Sandbox> {
    return restoreSnapshot(new Transport(opts), snapshotId, opts);
  }

  /** Wait until a snapshot is ready; throws LizardError if it failed. */
  static async waitForSnapshot(snapshotId: string, opts: WaitForSnapshotOptions = {}): Promise<Snapshot> {
    return waitForSnapshot(new Transport(opts), snapshotId, opts);
  }

  static async getSnapshot(snapshotId: string, opts: ClientOptions = {}): Promise<Snapshot> {
    return getSnapshot(new Transport(opts), snapshotId);
  }

  static async listSnapshots(opts: ClientOptions & { project?: string } = {}): Promise<Snapshot[]> {
    return listSnapshots(new Transport(opts), opts.project);
  }

  /** Delete a snapshot and its pooled copies (restored sandboxes keep working). false if it did not exist. */
  static async deleteSnapshot(snapshotId: string, opts: ClientOptions = {}): Promise<boolean> {
    return deleteSnapshot(new Transport(opts), snapshotId);
  }

  // ---- this sandbox ----

  #path(suffix = ""): string {
    return `/v1/sandboxes/${quoteId(this.sandboxId)}${suffix}`;
  }

  async getInfo(): Promise<SandboxInfo> {
    return this.#t.json<SandboxInfo>("GET", this.#path());
  }

  /** true while running; false when paused or gone. */
  async isRunning(): Promise<boolean> {
    try {
      return (await this.getInfo()).status === "running";
    } catch (e) {
      if (e instanceof NotFoundError) return false;
      throw e;
    }
  }

  /** New lifetime counted from now (0 = no expiry). */
  async setTimeout(timeoutMs: number): Promise<SandboxInfo> {
    return this.#t.json<SandboxInfo>("POST", this.#path("/timeout"), { json: { timeoutMs } });
  }

  /** Stop the sandbox now. true if it was killed, false if it was already gone. */
  async kill(): Promise<boolean> {
    try {
      await this.#t.json("DELETE", this.#path());
      return true;
    } catch (e) {
      if (e instanceof NotFoundError) return false;
      throw e;
    }
  }

  /**
   * Make a server listening on `0.0.0.0:port` in the sandbox reachable.
   * The URL carries the access token; other clients send it as the
   * `X-Lizard-Access-Token` header. Exposing a port again returns the same token.
   */
  async exposePort(port: number): Promise<ExposedPort> {
    return this.#t.json<ExposedPort>("POST", this.#path("/ports"), { json: { port } });
  }

  /** Exposed ports (without their tokens). */
  async listPorts(): Promise<PortInfo[]> {
    const doc = await this.#t.json<{ ports?: PortInfo[] }>("GET", this.#path("/ports"));
    return doc.ports ?? [];
  }

  /** Stop exposing `port`; its token stops working. */
  async closePort(port: number): Promise<void> {
    await this.#t.json("DELETE", this.#path(`/ports/${Number(port)}`));
  }

  /** Queue a pause and return at once; then `waitForStatus("paused")`. */
  async pause(): Promise<void> {
    await this.#t.json("POST", this.#path("/pause"));
  }

  /** Queue a resume and return at once; then `waitForStatus("running")`. */
  async resume(): Promise<void> {
    await this.#t.json("POST", this.#path("/resume"));
  }

  /**
   * Wait until the sandbox reaches `status` (`"paused"`, `"running"`).
   * Throws LizardError with the reason when the pause/resume failed, and
   * TimeoutError when the status was not reached within `timeoutMs`
   * (default 60 000).
   */
  async waitForStatus(status: SandboxStatus, opts: WaitOptions = {}): Promise<SandboxStatus> {
    const total = opts.timeoutMs ?? DEFAULT_WAIT_MS;
    const deadline = Date.now() + total;
    for (;;) {
      const left = Math.max(0, deadline - Date.now());
      const pollMs = Math.min(left, STATUS_POLL_MAX_MS);
      const r = await this.#t.json<StatusResult>("GET", this.#path("/status"), {
        query: { wait: status, timeoutMs: pollMs },
        timeoutMs: pollMs + 30_000,
      });
      if (r.reached || r.status === status) return r.status;
      if (r.error) {
        throw new LizardError(r.error.message || `the sandbox did not reach ${status}`, {
          code: r.error.code,
        });
      }
      if (Date.now() >= deadline) {
        throw new TimeoutError(
          `sandbox ${this.sandboxId} is ${r.status}, not ${status}, after ${total} ms`,
        );
      }
    }
  }

  /**
   * Save the sandbox as a project template. Returns at once with the
   * snapshot (`status: "creating"`); `Sandbox.waitForSnapshot(id)` waits
   * until it is ready. `poolSize` (1..10, default 5): ready copies the host keeps.
   */
  async snapshot(name: string, opts: { poolSize?: number } = {}): Promise<Snapshot> {
    return this.#t.json<Snapshot>("POST", this.#path("/snapshots"), {
      json: { name, poolSize: opts.poolSize },
    });
  }

  toString(): string {
    return `Sandbox(${this.sandboxId})`;
  }
}

// ---- shared by Sandbox's static methods and the Lizard client ----

export async function createSandbox(
  t: Transport,
  template: string,
  opts: SandboxOptions,
): Promise<Sandbox> {
  if (opts.project !== undefined && opts.projectId !== undefined && opts.project !== opts.projectId) {
    throw new InvalidArgumentError("give project or projectId, not both");
  }
  const body: Record<string, unknown> = {
    template,
    project: opts.project ?? opts.projectId,
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    size: opts.size,
    cpuCount: opts.cpuCount,
    memoryMB: opts.memoryMB,
    env: opts.env,
    metadata: opts.metadata,
    volumes: opts.volumes?.map((v) => (typeof v === "string" ? { volume: v } : v)),
    network: opts.network,
  };
  const info = await t.json<SandboxInfo>("POST", "/v1/sandboxes", { json: body });
  return new Sandbox(info.sandboxId, t);
}

export async function connectSandbox(t: Transport, sandboxId: string): Promise<Sandbox> {
  const info = await t.json<SandboxInfo>("GET", `/v1/sandboxes/${quoteId(sandboxId)}`);
  return new Sandbox(info.sandboxId || sandboxId, t);
}

export async function listSandboxes(
  t: Transport,
  project?: string,
  status?: string,
): Promise<SandboxInfo[]> {
  const doc = await t.json<{ sandboxes?: SandboxInfo[] }>("GET", "/v1/sandboxes", {
    query: { project, status },
  });
  return doc.sandboxes ?? [];
}

export async function restoreSnapshot(
  t: Transport,
  snapshotId: string,
  opts: RestoreOptions,
): Promise<Sandbox> {
  const body = {
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    metadata: opts.metadata,
    env: opts.env,
  };
  const deadline = Date.now() + (opts.wait ? (opts.waitTimeoutMs ?? DEFAULT_WAIT_MS) : 0);
  for (;;) {
    try {
      const info = await t.json<SandboxInfo>(
        "POST",
        `/v1/snapshots/${quoteId(snapshotId)}/restore`,
        { json: body },
      );
      return new Sandbox(info.sandboxId, t);
    } catch (e) {
      // A 503 means the server did nothing, so asking again is safe.
      const left = deadline - Date.now();
      if (!(e instanceof UnavailableError) || left <= 0) throw e;
      await sleep(Math.min(left, Math.max(100, (e.retryAfter ?? 1) * 1000)));
    }
  }
}

export async function getSnapshot(t: Transport, snapshotId: string): Promise<Snapshot> {
  return t.json<Snapshot>("GET", `/v1/snapshots/${quoteId(snapshotId)}`);
}

export async function listSnapshots(t: Transport, project?: string): Promise<Snapshot[]> {
  const doc = await t.json<{ snapshots?: Snapshot[] }>("GET", "/v1/snapshots", {
    query: { project },
  });
  return doc.snapshots ?? [];
}

export async function deleteSnapshot(t: Transport, snapshotId: string): Promise<boolean> {
  try {
    await t.json("DELETE", `/v1/snapshots/${quoteId(snapshotId)}`);
    return true;
  } catch (e) {
    if (e instanceof NotFoundError) return false;
    throw e;
  }
}

export async function waitForSnapshot(
  t: Transport,
  snapshotId: string,
  opts: WaitForSnapshotOptions,
): Promise<Snapshot> {
  const total = opts.timeoutMs ?? DEFAULT_WAIT_MS;
  const deadline = Date.now() + total;
  let interval = opts.pollIntervalMs ?? 100;
  for (;;) {
    const snap = await getSnapshot(t, snapshotId);
    // Ready to restore: saved and, where the runtime keeps warm copies (no
    // memory snapshot), at least one copy is up; else restore would answer 503.
    if (snap.status === "ready" && (snap.memory || !snap.poolSize || (snap.poolReady ?? 0) > 0)) {
      return snap;
    }
    if (snap.status === "failed") {
      const err = snap.error;
      const message =
        typeof err === "string" ? err : err?.message || `snapshot ${snapshotId} failed`;
      throw new LizardError(message, { code: typeof err === "object" ? err?.code : undefined });
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new TimeoutError(`snapshot ${snapshotId} is still ${snap.status} after ${total} ms`);
    }
    await sleep(Math.min(left, interval));
    if (opts.pollIntervalMs === undefined) interval = Math.min(1000, interval * 2);
  }
}
