import type { ServerResponse } from 'node:http';
import { errorCode, RpcctlError } from '../util/errors.js';

/** A failure the client should see: status plus the `error` text of the envelope. */
export class HttpError extends RpcctlError {
  readonly code = 'E_HTTP';
  readonly status: number;
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, message: string, headers?: Record<string, string>, options?: ErrorOptions) {
    super(message, options);
    this.name = 'HttpError';
    this.status = status;
    this.headers = headers;
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = (message = 'Not found') => new HttpError(404, message);

/**
 * The one translation of domain errors into API answers: a code listed here is a client
 * mistake, answered with this status and the error's own message as the envelope's `error`.
 * Any other failure is the service's fault (500, message not shown). Route handlers throw the
 * domain error as it is; the API server's catch and the cabinet's `invokeRoute` apply this.
 */
export const STATUS_BY_CODE: Readonly<Record<string, 400 | 404 | 409>> = {
  E_PAYMENT_INVALID: 400,
  E_PAYOUT_INVALID: 400,
  E_XPUB: 400,
  E_SLOT_LIMIT: 400,
  E_INVALID_ADDRESS: 400,
  E_BLOCKED_DESTINATION: 400,
  E_ORPHANED: 400,
  // A signed payout transaction that is not what the lines say, or that the node refused (chains/payout-tx.ts).
  E_TX_DECODE: 400,
  E_TX_UNSIGNED: 400,
  E_TX_MISMATCH: 400,
  E_TX_FOREIGN_INPUTS: 400,
  E_TX_CHAIN: 400,
  E_TX_UNSUPPORTED: 400,
  E_TX_REJECTED: 400,
  E_PSBT_INVALID: 400,
  // The merchant's unspent coins do not cover the batch and its fee: the state, not the request, is short.
  E_PSBT_FUNDS: 409,
  E_NOT_FOUND: 404,
  E_CONFLICT: 409,
  E_IN_FLIGHT: 409,
  /** Another request moved the refund or payout line first: the client reads it again. */
  E_LINE_CHANGED: 409,
};

/** What the client is told of `err`: an HttpError as thrown, a listed domain error as its status; undefined for a fault. */
export function clientError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  const code = errorCode(err);
  const status = code === undefined ? undefined : STATUS_BY_CODE[code];
  return status === undefined ? undefined : new HttpError(status, (err as Error).message, undefined, { cause: err });
}

/**
 * Runs `work` for one field of the request: a client mistake in it is answered with the field
 * named first (`address: has an invalid checksum`), so the client knows which input it was.
 */
export async function forField<T>(field: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const known = err instanceof HttpError ? undefined : clientError(err);
    throw known ? new HttpError(known.status, `${field}: ${known.message}`, undefined, { cause: err }) : err;
  }
}

/** A body serialised once and sent many times (a cached listing): a handler may return it instead of an object. */
export class JsonBody {
  readonly bytes: Buffer;
  constructor(value: object) {
    this.bytes = Buffer.from(JSON.stringify(value));
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = body instanceof JsonBody ? body.bytes : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': typeof text === 'string' ? Buffer.byteLength(text) : text.length,
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, message: string, headers?: Record<string, string>): void {
  sendJson(res, status, { ok: false, error: message }, headers);
}
