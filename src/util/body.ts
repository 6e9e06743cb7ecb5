import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  readonly code = 'E_BODY_TOO_LARGE';
  readonly limit: number;
  constructor(limit: number) {
    super(`request body too large (limit ${limit} bytes)`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

const EMPTY = Buffer.alloc(0);

/** Reads a whole request body, refusing more than `limit` bytes without buffering them. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const length = req.headers['content-length'];
  // Most GETs have no body: skip the stream machinery for them.
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
    return Promise.resolve(EMPTY);
  }
  if (length !== undefined && Number(length) > limit) {
    req.resume();
    return Promise.reject(new BodyTooLargeError(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        req.resume();
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
  });
}
