/** Errors raised by the API client. `code` is stable for programs; `message` is for people. */
export class RpcctlClientError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RpcctlClientError';
    this.code = code;
  }
}

/**
 * The stable code of a non-2xx answer, the same in the Python, PHP and Go libraries. A replay
 * (the server's `X-Rpcctl-Reason: replayed`) answers 401 `Invalid signature.` like a signing
 * bug, but only needs signing again, so it has a code of its own.
 */
function apiErrorCode(status: number, reason?: string): string {
  if (reason === 'replayed') return 'E_REPLAYED';
  if (status === 401 || status === 403) return 'E_AUTH';
  if (status === 404) return 'E_NOT_FOUND';
  if (status === 400) return 'E_VALIDATION';
  if (status === 429) return 'E_RATE_LIMIT';
  return 'E_API';
}

/** The server answered with a non-2xx status; `message` is the API's `error` text. */
export class ApiError extends RpcctlClientError {
  readonly status: number;
  readonly body: unknown;
  readonly retryAfter: number | undefined;
  /** The `X-Rpcctl-Reason` header of an authentication failure (`replayed`, `bad_signature`, ...). */
  readonly reason: string | undefined;
  constructor(status: number, message: string, body: unknown, retryAfter?: number, reason?: string) {
    super(apiErrorCode(status, reason), message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
    this.reason = reason;
  }
}

/** The request never got an HTTP answer (refused, reset, timed out). */
export class NetworkError extends RpcctlClientError {
  constructor(message: string, cause: unknown) {
    super('E_NETWORK', message, { cause });
    this.name = 'NetworkError';
  }
}

/** The caller's AbortSignal ended the request (or a retry wait). */
export class AbortedError extends RpcctlClientError {
  constructor() {
    super('E_ABORTED', 'request aborted');
    this.name = 'AbortedError';
  }
}

/** A call (retries included) took longer than the client's `callTimeoutMs`. */
export class TimeoutError extends RpcctlClientError {
  readonly timeoutMs: number;
  constructor(baseUrl: string, timeoutMs: number) {
    super('E_TIMEOUT', `no answer from ${baseUrl} within ${timeoutMs / 1000} s`);
    this.name = 'TimeoutError';
    this.timeoutMs = timeoutMs;
  }
}
