import { connect } from 'node:net';

export interface RawAnswer { status: number; head: string; body: string }

/**
 * Sends bytes exactly as given (no client-side normalisation of paths or headers) and reads
 * one answer until the server closes or the body is complete.
 */
export function rawHttp(baseUrl: string, request: string | Buffer, timeoutMs = 10_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('no answer in time')); }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split === -1 ? text : text.slice(0, split);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(m[1]), head, body: split === -1 ? '' : text.slice(split + 4) });
    };
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(text.slice(0, split));
      if (split !== -1 && len && Buffer.byteLength(text.slice(split + 4), 'latin1') >= Number(len[1])) { socket.destroy(); finish(); }
    });
    socket.on('end', finish);
    socket.on('close', () => { if (chunks.length === 0) { clearTimeout(timer); reject(new Error('closed without an answer')); } });
    socket.on('error', () => {});
    socket.write(request);
  });
}
