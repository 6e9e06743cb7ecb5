import type { ServerResponse } from 'node:http';

/** A failure the client should see: status plus the `error` text of the envelope. */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, message: string, headers?: Record<string, string>) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.headers = headers;
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = (message = 'Not found') => new HttpError(404, message);

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
