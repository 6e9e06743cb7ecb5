import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createPublicClient, createTestClient, createWalletClient, http, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';

const bin = new URL('../../node_modules/.bin/anvil', import.meta.url).pathname;

export interface Anvil {
  url: string;
  accounts: Address[];
  public: ReturnType<typeof createPublicClient>;
  wallet: ReturnType<typeof createWalletClient>;
  test: ReturnType<typeof createTestClient>;
  stop(): Promise<void>;
}

/**
 * anvil from npm on a free loopback port (`host`: another local address, such as a container
 * network's gateway); `blockTime` in seconds, else a block per transaction.
 */
export async function startAnvil(opts: { blockTime?: number; port?: number; host?: string } = {}): Promise<Anvil> {
  const args = ['--host', opts.host ?? '127.0.0.1', '--port', String(opts.port ?? 0), '--accounts', '5'];
  if (opts.blockTime) args.push('--block-time', String(opts.blockTime));
  // Its own process group: the npm bin is a wrapper around the real binary, and both must go.
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`anvil did not start:\n${out}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`anvil exited with ${code}:\n${out}`)); });
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const transport = http(url);
  const chain = { ...foundry, rpcUrls: { default: { http: [url] } } };
  const pub = createPublicClient({ chain, transport, cacheTime: 0 });
  const accounts = await pub.request({ method: 'eth_accounts' } as never) as Address[];
  return {
    url, accounts, public: pub,
    wallet: createWalletClient({ chain, transport }),
    test: createTestClient({ chain, mode: 'anvil', transport }),
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      process.kill(-child.pid!, 'SIGKILL');
    }),
  };
}

const require = createRequire(import.meta.url);
const artifact = require('@openzeppelin/contracts/build/contracts/ERC20PresetFixedSupply.json') as { abi: unknown[]; bytecode: Hex };
export const erc20Abi = artifact.abi as readonly unknown[];

/** Deploys OpenZeppelin's ERC20PresetFixedSupply with the whole supply at `owner`. */
export async function deployToken(anvil: Anvil, owner: Address, supply: bigint): Promise<Address> {
  const hash = await anvil.wallet.deployContract({
    abi: artifact.abi, bytecode: artifact.bytecode, args: ['Test Token', 'TST', supply, owner], account: owner, chain: null,
  } as never);
  const receipt = await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  return receipt.contractAddress!;
}

/** anvil's first two default accounts' keys (well-known test keys; they hold test ETH only). */
export const ANVIL_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
] as const;
