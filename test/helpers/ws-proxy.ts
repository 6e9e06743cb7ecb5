import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

export interface WsProxy {
  url: string;
  /** Connections accepted so far. */
  connections: number;
  /** Drops every connection and stops listening, as a crashed node would. */
  kill(): Promise<void>;
  /** Listens again on the same port, as the node coming back. */
  restart(): Promise<WsProxy>;
}

/** A loopback WebSocket relay in front of `target`: a WS upstream the test can kill mid-stream. */
export async function startWsProxy(target: string, port = 0): Promise<WsProxy> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const pairs = new Set<[WebSocket, WebSocket]>();
  let connections = 0;
  wss.on('connection', (client) => {
    connections++;
    const upstream = new WebSocket(target);
    const pair: [WebSocket, WebSocket] = [client, upstream];
    pairs.add(pair);
    const queue: Array<Buffer | string> = [];
    client.on('message', (d, binary) => {
      const data = binary ? (d as Buffer) : d.toString();
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data);
      else queue.push(data);
    });
    upstream.on('open', () => { for (const d of queue.splice(0)) upstream.send(d); });
    upstream.on('message', (d, binary) => client.send(binary ? (d as Buffer) : d.toString()));
    const end = () => { pairs.delete(pair); client.terminate(); upstream.terminate(); };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  const actual = (wss.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${actual}`,
    get connections() { return connections; },
    restart: () => startWsProxy(target, actual),
    async kill() {
      for (const [a, b] of pairs) { a.terminate(); b.terminate(); }
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
