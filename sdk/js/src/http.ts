/**
 * HTTP transport over the runtime's built-in `fetch`: auth, typed errors,
 * client-side timeouts and safe retries.
 *
 * Retries are limited to what cannot run a request twice: a failure while
 * *connecting* (nothing was sent) is retried for every method, a failure
 * after sending only for GET and DELETE, which are idempotent. A streamed
 * request body can be sent only once and is never retried.
 */

import {
  APIConnectionError,
  AuthenticationError,
  InvalidArgumentError,
  LizardError,
  TimeoutError,
  errorFor,
} from "./errors.js";

export const DEFAULT_API_URL = "http://127.0.0.1:7400";
/** Client-side limit for ordinary calls. Exec and file calls compute their own. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const SDK_VERSION = "0.1.0";

const USER_AGENT = `lizard-sdk-js/${SDK_VERSION}`;
const IDEMPOTENT = new Set(["GET", "HEAD", "DELETE"]);
const ATTEMPTS = 3;
/** undici error codes that mean the request never left this host. */
const CONNECT_FAILURES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
]);
/** undici's own limits (300 s for headers / between body chunks). */
const UNDICI_TIMEOUTS = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

export interface ClientOptions {
  /** API key; default `LIZARD_API_KEY`. */
  apiKey?: string;
  /** Server URL; default `LIZARD_API_URL`, then `http://127.0.0.1:7400`. */
  apiUrl?: string;
  /** Client-side limit for ordinary calls in ms (default 60 000). */
  requestTimeoutMs?: number;
}

export type Query = Record<string, string | number | boolean | undefined | null>;
export type RequestBody = Uint8Array | ReadableStream<Uint8Array>;

export interface RequestOptions {
  query?: Query;
  json?: unknown;
  body?: RequestBody;
  headers?: Record<string, string>;
  /**
   * Client-side limit in ms: undefined = the transport's default, 0 = none.
   * With `idle`, the limit applies to a stall (no bytes moving), not the whole call.
   */
  timeoutMs?: number;
  idle?: boolean;
  auth?: boolean;
}

function env(name: string): string | undefined {
  const g = globalThis as { process?: { env?: Record<string, string | undefined> } };
  const v = g.process?.env?.[name];
  return v ? v : undefined;
}

/** Aborts a fetch after `ms` (of inactivity, when `idle`). */
class Timer {
  readonly controller = new AbortController();
  fired = false;
  private handle?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly ms: number,
    private readonly idle: boolean,
  ) {
    this.arm();
  }

  private arm(): void {
    if (this.ms <= 0) return;
    this.handle = setTimeout(() => {
      this.fired = true;
      this.controller.abort(new TimeoutError(`no answer within ${this.ms} ms`));
    }, this.ms);
  }

  /** Progress was made: an idle timer starts over. */
  touch(): void {
    if (!this.idle || this.handle === undefined) return;
    clearTimeout(this.handle);
    this.arm();
  }

  clear(): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handle = undefined;
  }
}

/** A response whose body has not been read yet (exec streams, file downloads). */
export class StreamReply {
  constructor(
    readonly response: Response,
    private readonly timer: Timer,
    private readonly what: string,
  ) {}

  /** The body in pieces as they arrive. Breaking out of the loop cancels the rest. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    const body = this.response.body;
    if (body === null) {
      this.timer.clear();
      return;
    }
    const reader = body.getReader();
    let done = false;
    try {
      for (;;) {
        let r: { done: boolean; value?: Uint8Array };
        try {
          r = await reader.read();
        } catch (e) {
          throw this.readError(e);
        }
        if (r.done) {
          done = true;
          return;
        }
        this.timer.touch();
        yield r.value as Uint8Array;
      }
    } finally {
      this.timer.clear();
      if (!done) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
  }

  /** Discard the body (frees the connection). */
  async cancel(): Promise<void> {
    this.timer.clear();
    await this.response.body?.cancel().catch(() => undefined);
  }

  private readError(e: unknown): LizardError {
    if (this.timer.fired || UNDICI_TIMEOUTS.has(causeCode(e) ?? "")) {
      return new TimeoutError(`${this.what}: the answer stalled`, { cause: e });
    }
    return new APIConnectionError(`${this.what}: connection lost while reading: ${describe(e)}`, {
      cause: e,
    });
  }
}

/** A configured client of one Lizard server with one API key. */
export class Transport {
  readonly apiUrl: string;
  readonly requestTimeoutMs: number;
  // A private field, so that logging a client or sandbox never prints the key.
  readonly #apiKey?: string;

  constructor(opts: ClientOptions = {}) {
    this.apiUrl = (opts.apiUrl ?? env("LIZARD_API_URL") ?? DEFAULT_API_URL).replace(/\/+$/, "");
    this.#apiKey = opts.apiKey ?? env("LIZARD_API_KEY");
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    let u: URL;
    try {
      u = new URL(this.apiUrl);
    } catch {
      u = new URL("invalid:");
    }
    if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) {
      throw new InvalidArgumentError(
        `LIZARD_API_URL must be http(s)://HOST[:PORT][/PREFIX], got ${JSON.stringify(this.apiUrl)}`,
      );
    }
  }

  url(path: string, query?: Query): string {
    let full = this.apiUrl + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v !== undefined && v !== null) q.append(k, String(v));
      }
      const s = q.toString();
      if (s) full += "?" + s;
    }
    return full;
  }

  /** Send a request and parse its JSON answer (`{}` for an empty body). */
  async json<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<T> {
    const reply = await this.stream(method, path, opts);
    const parts: Uint8Array[] = [];
    for await (const c of reply.chunks()) parts.push(c);
    const text = new TextDecoder().decode(concat(parts));
    if (!text) return {} as T;
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new LizardError(`server answered invalid JSON (HTTP ${reply.response.status})`, {
        status: reply.response.status,
        cause: e,
      });
    }
  }

  /**
   * Send a request; return the response with its body unread (status < 400).
   * Throws the typed error of the server's answer for status >= 400.
   */
  async stream(method: string, path: string, opts: RequestOptions = {}): Promise<StreamReply> {
    const headers: Record<string, string> = { "User-Agent": USER_AGENT, Accept: "application/json" };
    if (opts.auth !== false) {
      if (!this.#apiKey) {
        throw new AuthenticationError("no API key: set LIZARD_API_KEY or pass apiKey");
      }
      headers["Authorization"] = "Bearer " + this.#apiKey;
    }
    let body: RequestBody | string | undefined = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["Content-Type"] = "application/json";
    }
    Object.assign(headers, opts.headers);
    const streamed = body instanceof ReadableStream;
    const url = this.url(path, opts.query);
    const what = `${method} ${path}`;
    const ms = opts.timeoutMs ?? this.requestTimeoutMs;

    for (let attempt = 1; ; attempt++) {
      const timer = new Timer(ms, opts.idle === true);
      let response: Response;
      try {
        const init: RequestInit & { duplex?: "half" } = {
          method,
          headers,
          body: streamed ? touching(body as ReadableStream<Uint8Array>, timer) : body,
          signal: timer.controller.signal,
        };
        // fetch requires this for a streamed request body.
        if (streamed) init.duplex = "half";
        response = await fetch(url, init);
      } catch (e) {
        timer.clear();
        if (timer.fired || UNDICI_TIMEOUTS.has(causeCode(e) ?? "")) {
          throw new TimeoutError(`${what}: no answer within ${ms} ms`, { cause: e });
        }
        const code = causeCode(e);
        const safe = !streamed && (CONNECT_FAILURES.has(code ?? "") || IDEMPOTENT.has(method));
        if (safe && attempt < ATTEMPTS) {
          await sleep(50 * attempt);
          continue;
        }
        if (e instanceof LizardError) throw e;
        throw new APIConnectionError(`${what}: cannot reach ${this.apiUrl}: ${describe(e)}`, {
          cause: e,
        });
      }
      const reply = new StreamReply(response, timer, what);
      if (response.status >= 400) throw await errorOf(reply);
      return reply;
    }
  }
}

async function errorOf(reply: StreamReply): Promise<LizardError> {
  const res = reply.response;
  let raw = "";
  try {
    const parts: Uint8Array[] = [];
    for await (const c of reply.chunks()) parts.push(c);
    raw = new TextDecoder().decode(concat(parts));
  } catch {
    raw = "";
  }
  let code: string | undefined;
  let message = "";
  try {
    const doc = raw ? JSON.parse(raw) : undefined;
    const err = doc && typeof doc === "object" ? doc.error : undefined;
    if (err && typeof err === "object") {
      if (typeof err.code === "string") code = err.code;
      if (typeof err.message === "string") message = err.message;
    } else if (typeof err === "string") {
      message = err;
    }
  } catch {
    message = raw.trim().slice(0, 500);
  }
  if (!message) message = `HTTP ${res.status} ${res.statusText}`.trim();
  const ra = res.headers.get("Retry-After");
  const retryAfter = ra !== null && ra !== "" && Number.isFinite(Number(ra)) ? Number(ra) : undefined;
  return errorFor(res.status, message, code, retryAfter);
}

/** A copy of `src` that resets the idle timer whenever a block is sent. */
function touching(src: ReadableStream<Uint8Array>, timer: Timer): ReadableStream<Uint8Array> {
  const reader = src.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      const r = await reader.read();
      timer.touch();
      if (r.done) ctl.close();
      else ctl.enqueue(r.value);
    },
    async cancel(reason) {
      await reader.cancel(reason);
    },
  });
}

function causeCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; depth++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === "string") return c;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function describe(e: unknown): string {
  const cause = (e as { cause?: unknown })?.cause;
  const inner = cause instanceof Error ? cause.message : undefined;
  const outer = e instanceof Error ? e.message : String(e);
  return inner && inner !== outer ? `${outer} (${inner})` : outer;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** An id as one path segment (no `/` or `..` tricks). */
export function quoteId(id: string): string {
  if (typeof id !== "string" || !id) throw new InvalidArgumentError("id must be a non-empty string");
  return encodeURIComponent(id);
}
