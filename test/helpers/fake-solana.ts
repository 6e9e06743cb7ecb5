/**
 * A Solana test node for the suites (no validator can run here).
 *
 * Real: every transaction is executed by litesvm, the Solana VM with the real System, SPL Token,
 * Token-2022, Associated Token Account and Memo programs, in process: signatures are verified,
 * fees taken, balances and token accounts moved by the programs themselves; a failing
 * instruction lands with `meta.err` and its fee; what a leader would drop (bad signature,
 * unknown blockhash, fee unpaid, duplicate) is refused as agave's preflight refuses it.
 *
 * Synthesised around it, to agave's JSON-RPC and PubSub shapes (rpc.rs, custom_error.rs):
 * - slots on a clock the test drives (`chain.produceSlot()`, `advance(n)`, or `startAuto(ms)`);
 *   the open slot is the `processed` bank (sent transactions run in it at once), `produceSlot`
 *   freezes it into a block with a blockhash and opens the next; `{ skip: k }` leaves k slots
 *   without a block (getBlock: -32004 until finalized, then -32007; `parentSlot` and
 *   `previousBlockhash` of the next block name the last produced one);
 * - commitment: `confirmed` is the newest block `confirmedDepth` slots (default 1) below the open
 *   slot, `finalized` `finalizedDepth` (default 32) below, never moving back; state at a
 *   commitment is the VM's with the newer transactions undone (each keeps its accounts' pre-images);
 * - forks: `chain.dropSlots(s)` takes every block from `s` (above finalized) off the ledger, with
 *   its transactions (getSignaturesForAddress, getTransaction, getBlock, statuses) — litesvm has
 *   no rollback, so the VM is rebuilt by replaying the surviving history (setup steps and
 *   transactions, in their order) on a fresh LiteSVM;
 * - setup steps (`fundSol`, `createMint`, `createAssociatedTokenAccount`, `mintTo`) write accounts
 *   directly, out of band, visible at every commitment at once, like genesis accounts;
 *   `airdrop`/requestAirdrop is a real signed transfer from a faucet;
 * - per node: lag, unhealthy (-32005), down/up, ledger start (-32001) and long-term storage (-32009),
 *   blocks lost from it (`view.missingBlocks`: getBlock -32009, their transactions still served);
 * - PubSub notifies at `processed` as a transaction runs, at `confirmed`/`finalized` as its block
 *   reaches them (accounts read as of that block); it follows the cluster, not a node's lag, and
 *   setup steps (being out of band) notify nobody.
 */
import { FakeSolanaChain, type FakeSolanaChainOptions } from './fake-solana/chain.js';
import { FakeSolanaNode, type FakeSolanaNodeOptions } from './fake-solana/node.js';

export { FakeSolanaChain, type FakeSolanaChainOptions, type FakeBlock, type ExecutedTx, type Commitment, type ChainListener } from './fake-solana/chain.js';
export { FakeSolanaNode, GENESIS_HASHES, type FakeSolanaNodeOptions, type SeenCall } from './fake-solana/node.js';
export { TOKEN_PROGRAM, TOKEN_2022_PROGRAM, ATA_PROGRAM, MEMO_PROGRAM, SYSTEM_PROGRAM } from './fake-solana/wire.js';

/** Mainnet-beta's USDC and USDT mints (6 decimals each); `createMint(USDC_MINT)` puts one on the fake chain. */
export const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDT_MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';

/** A fresh chain and one started node over it (`node.chain`); more nodes: `startFakeSolanaNode(node.chain)`. */
export async function startFakeSolana(opts: FakeSolanaChainOptions & FakeSolanaNodeOptions = {}): Promise<FakeSolanaNode> {
  return new FakeSolanaNode(new FakeSolanaChain(opts), opts).start();
}

/** Another node serving the same chain (e.g. a lagging or failing upstream beside a healthy one). */
export function startFakeSolanaNode(chain: FakeSolanaChain, opts: FakeSolanaNodeOptions = {}): Promise<FakeSolanaNode> {
  return new FakeSolanaNode(chain, opts).start();
}
