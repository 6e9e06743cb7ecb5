import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { BUFFERED_BYTES, type UpstreamResponse } from './upstreams/index.js';

const HEADERS_WITH_TYPE = (contentType: string): OutgoingHttpHeaders => ({ 'content-type': contentType, 'access-control-allow-origin': '*' });
const HEADERS_NO_TYPE: Readonly<OutgoingHttpHeaders> = { 'access-control-allow-origin': '*' };

type Body = UpstreamResponse['body'];

/**
 * Passes an upstream answer on unchanged (status, content type, every byte of the body), without
 * stream machinery for the usual small answer: upstreams/call-handler.ts gathers it whole and it goes out in
 * one `res.end(buf)` with a Content-Length; a large one is streamed with backpressure. Either
 * way a client that goes away cancels the upstream's answer, and an upstream failing mid-body
 * closes the client's connection (the answer cannot be completed, and a truncated one must not
 * pass for whole).
 */
export function relay(res: ServerResponse, upstream: UpstreamResponse): void {
  const headers = upstream.contentType ? HEADERS_WITH_TYPE(upstream.contentType) : { ...HEADERS_NO_TYPE };
  if (upstream.contentLength !== undefined && upstream.contentLength > BUFFERED_BYTES) {
    stream(res, upstream.status, headers, upstream.body);
    return;
  }
  let done = false;
  const onClose = (): void => {
    if (!done) upstream.cancel();
  };
  const whole = upstream.whole((err, buf) => {
    done = true;
    res.off('close', onClose);
    if (err) return void res.destroy();
    // Larger than declared (or undeclared): streamed, what came so far first.
    if (buf === undefined) return stream(res, upstream.status, headers, upstream.body);
    // An empty answer goes as before (no Content-Length): a HEAD, a 204 or 304 must not carry one.
    if (buf.length > 0) headers['content-length'] = buf.length;
    if (!writeHead(res, upstream.status, headers)) return;
    res.end(buf.length > 0 ? buf : undefined);
  });
  if (!whole) stream(res, upstream.status, headers, upstream.body);
  else if (!done) res.on('close', onClose);
}

/** Streams the body with backpressure; headers as for a whole answer, chunked. */
function stream(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: Body): void {
  let ended = false;
  body.on('error', () => {
    ended = true;
    res.destroy();
  });
  if (!writeHead(res, status, headers)) return void body.destroy();
  body.on('data', (chunk: Buffer) => {
    if (!res.write(chunk)) body.pause();
  });
  res.on('drain', () => body.resume());
  body.on('end', () => {
    ended = true;
    res.end();
  });
  res.on('close', () => {
    if (!ended) body.destroy();
  });
}

/**
 * The head is written from the body's events, where a throw would end the process; undici
 * hands over only header values Node accepts, so this is a guard: the connection is closed.
 */
function writeHead(res: ServerResponse, status: number, headers: OutgoingHttpHeaders): boolean {
  try {
    res.writeHead(status, headers);
    return true;
  } catch {
    res.destroy();
    return false;
  }
}
