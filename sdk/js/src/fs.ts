/** `sandbox.fs`: files inside the sandbox, streamed both ways. */

import { InvalidArgumentError, NotFoundError } from "./errors.js";
import { Transport, concat, quoteId } from "./http.js";
import type { FileInfo, WriteInfo } from "./types.js";

/**
 * Client-side limit for file transfers: how long bytes may stop moving, not
 * the whole transfer, so large files are fine as long as data flows.
 */
export const FILE_IO_IDLE_TIMEOUT_MS = 300_000;

/** What `fs.write` accepts. Node streams (`fs.createReadStream`) are AsyncIterables. */
export type WriteData =
  | string
  | Uint8Array
  | ArrayBuffer
  | Blob
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>;

export interface UserOption {
  /** Whose permissions apply (default root); new files belong to this user. */
  user?: string;
}

export interface WriteOptions extends UserOption {
  /** Permission bits of a new file, e.g. `0o755`. */
  mode?: number;
}

export class Filesystem {
  /** @internal */
  readonly #t: Transport;
  readonly #sandboxId: string;

  constructor(t: Transport, sandboxId: string) {
    this.#t = t;
    this.#sandboxId = sandboxId;
  }

  private path(suffix = ""): string {
    return `/v1/sandboxes/${quoteId(this.#sandboxId)}/files${suffix}`;
  }

  /**
   * Write `data` to `path`: text (as UTF-8), bytes, a Blob, or a stream
   * (ReadableStream or any AsyncIterable such as a Node Readable), which is
   * sent as it is read, never held whole. Parent directories are created.
   */
  async write(path: string, data: WriteData, opts: WriteOptions = {}): Promise<WriteInfo> {
    const mode = opts.mode === undefined ? undefined : opts.mode.toString(8).padStart(4, "0");
    return this.#t.json<WriteInfo>("PUT", this.path(), {
      query: { path, user: opts.user, mode },
      body: toBody(data),
      headers: { "Content-Type": "application/octet-stream" },
      timeoutMs: FILE_IO_IDLE_TIMEOUT_MS,
      idle: true,
    });
  }

  /** The file's content as text (UTF-8). */
  async read(path: string, opts: UserOption = {}): Promise<string> {
    return new TextDecoder().decode(await this.readBytes(path, opts));
  }

  /** The file's content as bytes. */
  async readBytes(path: string, opts: UserOption = {}): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for await (const c of this.iterBytes(path, opts)) parts.push(c);
    return parts.length === 0 ? new Uint8Array(0) : concat(parts);
  }

  /** The file's content in pieces as it arrives, without holding it whole. */
  async *iterBytes(path: string, opts: UserOption = {}): AsyncGenerator<Uint8Array> {
    const reply = await this.#t.stream("GET", this.path(), {
      query: { path, user: opts.user },
      headers: { Accept: "application/octet-stream" },
      timeoutMs: FILE_IO_IDLE_TIMEOUT_MS,
      idle: true,
    });
    yield* reply.chunks();
  }

  /** Entries of a directory. */
  async list(path: string, opts: UserOption = {}): Promise<FileInfo[]> {
    const doc = await this.#t.json<{ entries?: FileInfo[] }>("GET", this.path("/list"), {
      query: { path, user: opts.user },
    });
    return doc.entries ?? [];
  }

  async stat(path: string, opts: UserOption = {}): Promise<FileInfo> {
    return this.#t.json<FileInfo>("GET", this.path("/stat"), { query: { path, user: opts.user } });
  }

  /** false when `path` does not exist. */
  async exists(path: string, opts: UserOption = {}): Promise<boolean> {
    try {
      await this.stat(path, opts);
      return true;
    } catch (e) {
      if (e instanceof NotFoundError) return false;
      throw e;
    }
  }

  /** `mkdir -p`. */
  async mkdir(path: string, opts: UserOption = {}): Promise<void> {
    await this.#t.json("POST", this.path("/mkdir"), { json: { path, user: opts.user } });
  }

  /** Remove a file, or a directory (non-empty ones need `recursive: true`). */
  async remove(path: string, opts: UserOption & { recursive?: boolean } = {}): Promise<void> {
    await this.#t.json("DELETE", this.path(), {
      query: { path, recursive: opts.recursive ? true : undefined, user: opts.user },
    });
  }

  async rename(from: string, to: string, opts: UserOption = {}): Promise<void> {
    await this.#t.json("POST", this.path("/rename"), { json: { from, to, user: opts.user } });
  }
}

function toBody(data: WriteData): Uint8Array | ReadableStream<Uint8Array> {
  if (typeof data === "string") return new TextEncoder().encode(data);
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (typeof Blob !== "undefined" && data instanceof Blob) {
    return data.stream() as ReadableStream<Uint8Array>;
  }
  if (data instanceof ReadableStream) return data;
  if (data && typeof (data as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") {
    return fromIterable(data as AsyncIterable<Uint8Array | string>);
  }
  throw new InvalidArgumentError(
    "data must be a string, Uint8Array, ArrayBuffer, Blob, ReadableStream or AsyncIterable",
  );
}

function fromIterable(src: AsyncIterable<Uint8Array | string>): ReadableStream<Uint8Array> {
  const it = src[Symbol.asyncIterator]();
  const enc = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      const r = await it.next();
      if (r.done) {
        ctl.close();
        return;
      }
      const v = r.value;
      if (typeof v === "string") ctl.enqueue(enc.encode(v));
      else if (v instanceof Uint8Array) ctl.enqueue(v);
      else ctl.error(new InvalidArgumentError("stream chunks must be Uint8Array or string"));
    },
    async cancel() {
      await it.return?.();
    },
  });
}
