import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Two `Host` headers: Node keeps the first, a proxy in front may have routed on the second.
 * Such a request means different things to different hops, so both listeners refuse it.
 */
export function hasDuplicateHost(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

/**
 * Answers a request Node's parser refused before any handler saw it: 431 for headers over
 * the size limit, 400 for anything else malformed, in the listener's own body format.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, body: (status: number) => string): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  const text = body(status);
  socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
}
