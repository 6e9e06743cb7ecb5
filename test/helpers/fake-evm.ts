import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeTx {
  hash: string;
  from: string;
  to: string | null;
  value: string;
}

export interface FakeEvmChain {
  url: string;
  /** Mines a block with these native transfers (`value` in wei, decimal); returns its height. A `hash` re-mines that transaction. */
  mine(txs?: Array<{ from: string; to: string; wei: bigint; hash?: string }>): { height: number; hash: string; txs: FakeTx[] };
  /** Drops block `height` and everything above it (a reorg); mine again to build the new branch. */
  orphan(height: number): void;
  close(): Promise<void>;
}

const hex32 = () => `0x${randomBytes(32).toString('hex')}`;

/**
 * Just enough of an EVM node for the Address Watch scanner: eth_blockNumber,
 * eth_getBlockByNumber with full transactions, eth_getLogs (no token transfers) and
 * eth_getTransactionReceipt (all successful), eth_chainId (123456).
 * Lighter than anvil when a test only needs events to appear through the real scan path.
 */
export async function startFakeEvmChain(): Promise<FakeEvmChain> {
  const blocks: Array<{ number: string; hash: string; parentHash: string; transactions: FakeTx[] }> = [];
  const mine: FakeEvmChain['mine'] = (txs = []) => {
    const height = blocks.length;
    const block = {
      number: `0x${height.toString(16)}`, hash: hex32(), parentHash: blocks[height - 1]?.hash ?? `0x${'00'.repeat(32)}`,
      transactions: txs.map((t) => ({ hash: t.hash ?? hex32(), from: t.from, to: t.to, value: `0x${t.wei.toString(16)}` })),
    };
    blocks.push(block);
    return { height, hash: block.hash, txs: block.transactions };
  };
  for (let i = 0; i < 10; i++) mine();
  // Every transaction succeeded: the scanner asks about those with a native value hit.
  const receipt = (hash: string) => {
    const block = blocks.find((b) => b.transactions.some((t) => t.hash === hash));
    return block ? { transactionHash: hash, blockHash: block.hash, status: '0x1' } : null;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = JSON.parse(Buffer.concat(chunks).toString()) as { id: number; method: string; params: unknown[] };
      const result = call.method === 'eth_blockNumber' ? `0x${(blocks.length - 1).toString(16)}`
        : call.method === 'eth_getBlockByNumber' ? blocks[Number(call.params[0])] ?? null
          : call.method === 'eth_getLogs' ? []
            : call.method === 'eth_getTransactionReceipt' ? receipt(String(call.params[0]))
              // A chain id no public chain has (checkout pages name it in EIP-681 URIs).
              : call.method === 'eth_chainId' ? '0x1e240'
                : undefined;
      const body = result === undefined ? { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'method not found' } } : { jsonrpc: '2.0', id: call.id, result };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mine,
    orphan: (height) => { blocks.length = height; },
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
