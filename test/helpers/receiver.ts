import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A loopback webhook receiver that records every request; `respond` picks the status. */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  respond: (r: Received) => number | Promise<number>;
  /** Resolves once `predicate` holds for the received list (polling), or rejects after `ms`. */
  waitFor(predicate: (all: Received[]) => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** `host`: another local address than loopback (a container network's gateway). */
export async function startReceiver(port = 0, host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = [];
  const r: Partial<Receiver> = { received, respond: () => 200 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(rec);
      Promise.resolve(r.respond!(rec)).then((status) => {
        if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      }, () => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const actual = (server.address() as AddressInfo).port;
  return Object.assign(r, {
    url: `http://${host}:${actual}/hooks`,
    port: actual,
    async waitFor(predicate: (all: Received[]) => boolean, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${ms} ms (${received.length} received)`);
        await new Promise((res) => setTimeout(res, 50));
      }
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  }) as Receiver;
}

/** An implementation of the signature check independent of src/: node:crypto only. */
export function signatureValid(secret: string, rec: Received): boolean {
  const ts = String(rec.headers['x-timestamp']);
  const sig = String(rec.headers['x-signature']);
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(`${ts}.${rec.body}`, 'utf8')).digest();
  const given = Buffer.from(sig, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
