/**
 * Typed errors thrown by the SDK.
 *
 * Every error from the server carries its message (`err.message`), the HTTP
 * status (`err.status`) and the server's error code (`err.code`, e.g.
 * `"not_found"`). Errors thrown without a server answer (a connection that
 * failed, a client-side timeout) have `status` undefined.
 */

export interface LizardErrorOptions {
  status?: number;
  code?: string;
  /** Seconds the server asked the caller to wait (`Retry-After`). */
  retryAfter?: number;
  cause?: unknown;
}

/** Base class of every error the SDK throws. */
export class LizardError extends Error {
  readonly status?: number;
  readonly code?: string;
  readonly retryAfter?: number;

  constructor(message: string, opts: LizardErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.status = opts.status;
    this.code = opts.code;
    this.retryAfter = opts.retryAfter;
  }
}

/** 400: the request was malformed (bad JSON, wrong types, a bad path such as `..`). */
export class InvalidArgumentError extends LizardError {}
/** 401: no API key, an unknown key or a revoked key. */
export class AuthenticationError extends LizardError {}
/** 403: the key may not do this, or permission denied inside the sandbox. */
export class ForbiddenError extends LizardError {}
/** 404: unknown id (or an id of another project), missing file, stopped sandbox. */
export class NotFoundError extends LizardError {}
/** 409: wrong state (e.g. `paused`), the thing already exists, a volume in use. */
export class ConflictError extends LizardError {}
/** 413: request body too large, or the sandbox's disk is full. */
export class PayloadTooLargeError extends LizardError {}
/** 429: over a limit (e.g. the project's running-sandbox cap). */
export class RateLimitError extends LizardError {}
/** 503: no capacity (or no pooled snapshot copy) right now; see `retryAfter`. */
export class UnavailableError extends LizardError {}
/**
 * A wait ran out of time: the client stopped waiting for an answer, or
 * `waitForStatus`/`waitForSnapshot`/`ProcessHandle.wait` gave up.
 * An exec that hits its own `timeoutMs` is *not* an error: its result has
 * `timedOut: true`.
 */
export class TimeoutError extends LizardError {}
/** The server could not be reached (refused, reset, DNS, ...). */
export class APIConnectionError extends LizardError {}

type ErrorClass = new (message: string, opts?: LizardErrorOptions) => LizardError;

const BY_STATUS: Record<number, ErrorClass> = {
  400: InvalidArgumentError,
  401: AuthenticationError,
  403: ForbiddenError,
  404: NotFoundError,
  408: TimeoutError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: RateLimitError,
  503: UnavailableError,
  504: TimeoutError,
};

const BY_CODE: Record<string, ErrorClass> = {
  bad_request: InvalidArgumentError,
  invalid_argument: InvalidArgumentError,
  unauthorized: AuthenticationError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  conflict: ConflictError,
  paused: ConflictError,
  too_large: PayloadTooLargeError,
  rate_limited: RateLimitError,
  unavailable: UnavailableError,
  timeout: TimeoutError,
};

/** The typed error for an HTTP status, or (for errors inside a stream) a code. */
export function errorFor(
  status: number | undefined,
  message: string,
  code?: string,
  retryAfter?: number,
): LizardError {
  let cls: ErrorClass | undefined = status === undefined ? undefined : BY_STATUS[status];
  if (cls === undefined && code !== undefined) cls = BY_CODE[code];
  return new (cls ?? LizardError)(message, { status, code, retryAfter });
}
