import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

export interface WsProxy {
  url: string;
  /** Drops every connection and stops listening, as a crashed node would. */
  kill(): Promise<void>;
}

/** A loopback WebSocket relay in front of `target`: a WS upstream the test can kill mid-stream. */
export async function startWsProxy(target: string): Promise<WsProxy> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const pairs = new Set<[WebSocket, WebSocket]>();
  wss.on('connection', (client) => {
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
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    async kill() {
      for (const [a, b] of pairs) { a.terminate(); b.terminate(); }
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
