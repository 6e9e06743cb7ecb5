// The one shape every chain family implements (chains/<family>/index.ts), and the small
// structural types it speaks in. chains/ sits below the store, config and the watch: what an
// adapter needs from them is named here and their types satisfy it (a catalog `Environment`
// is a `ChainEnvironment`, the watch registry is a `WatchLookup`).

import type { ParsedAddress } from './address.js';
import type { UtxoAddressFormat } from './utxo/address.js';
import type { CachePlan, HeadProbe, MethodClasses, NodeErrorRule, WsProtocol } from './gateway.js';

export type NetworkFamily = 'evm' | 'stellar' | 'utxo' | 'tron' | 'solana';

/** The fields of a catalog environment the families read. */
export interface ChainEnvironment {
  slug: string;
  network: { slug: string; family: NetworkFamily };
  upstreams: string[];
  /** UTXO family: the address prefixes; undefined for other families. */
  addressFormat?: UtxoAddressFormat;
}

/** One watch of an address, as a block's hits name it. */
export interface WatchRef {
  watchId: string;
  accountId: number;
  /** The identifier the watch was created with; its events carry it. */
  network: string;
  address: string;
}

/** What matching needs of the watch registry: one hash lookup per address seen. */
export interface WatchLookup {
  /** Watches of `key` on the environment; undefined (the common case) when none. */
  lookup(envId: number, key: string): WatchRef[] | undefined;
  /** How many addresses are watched on the environment (0: skip the per-address calls). */
  size(envId: number): number;
}

export interface Hit {
  watch: WatchRef;
  type: 'payment' | 'payout' | 'other';
  direction: 'in' | 'out';
  txHash: string;
  from: string | null;
  to: string | null;
  /** ERC-20 contract (checksummed); null for the native coin. */
  token: string | null;
  /** Raw integer amount in the smallest unit, as a decimal string. */
  amount: string;
  logIndex: number | null;
}

/** One block (ledger, slot) as a chain family delivers it, with the watched addresses' hits. */
export interface FetchedBlock {
  hash: string;
  parentHash: string;
  /**
   * The height of the block `parentHash` names: the last height before this one that has a
   * block (Solana's `parentSlot`, below skipped slots). Omitted: `height - 1`, on chains where
   * every height has a block.
   */
  parentHeight?: number;
  txHashes: string[];
  hits: Hit[];
}

/**
 * A height the chain passed without a block (a skipped Solana slot): the scanner moves past it,
 * unlike a block the node does not have yet. Which heights are skipped may still change until
 * they are final (a dropped fork), as a block's hash may.
 */
export const SKIPPED: unique symbol = Symbol('skipped');
export type Skipped = typeof SKIPPED;

/** A transaction naming an order's reference, as the reference lookup (`ChainAdapter.referenced`) finds it. */
export interface ReferencedTx {
  /** The slot (height) of its block. */
  height: number;
  /** Its block's hash; undefined where the node no longer serves the block (it still serves the transaction). */
  hash: string | undefined;
  txHash: string;
  /** The reference watch's hits, as the block matcher reports them. */
  hits: Hit[];
}

/** What an environment's config tells its adapter besides the upstreams. */
export interface AdapterOptions {
  /**
   * The environment's listed tokens, as the family's `contractToken` match keys: families whose
   * blocks name a token holder's wallet only for the tokens asked about (Solana's mints) match
   * these; others report every token transfer they see.
   */
  tokens?: readonly string[];
}

/**
 * What a scanner needs from a chain family: its head, and a block with its hits.
 *
 * Commitment: `head()` is the highest height the family counts as seen (EVM: the latest block;
 * Solana: the `confirmed` slot), `finalized()` the highest that can no longer change (Solana:
 * the `finalized` slot). Events are written from `head() - confirmations + 1` down, and taken
 * off again by the reorg rules until they are final.
 */
export interface ChainAdapter {
  head(): Promise<number>;
  /**
   * undefined when the node does not have the block (yet); `SKIPPED` when the chain has no block
   * at this height (a skipped slot) and the scanner should move on.
   */
  block(height: number, registry: WatchLookup, envId: number): Promise<FetchedBlock | Skipped | undefined>;
  /**
   * The hash of the chain's block at `height`, as cheaply as the node tells it; undefined when it
   * cannot say, `SKIPPED` when the chain now has no block there. The scanner asks it for its last
   * recorded block on every idle tick: a block replaced (or dropped) at the same height is
   * otherwise seen only when a block above it arrives.
   */
  blockHash(height: number): Promise<string | Skipped | undefined>;
  /**
   * The heights in `from..to` (both included, `to` at most the head) that have a block, in one
   * call (Solana's `getBlocks`): the scanner skips the others without asking each, and fetches
   * several of these at once to keep up with a fast chain. Omitted where every height has a block.
   */
  produced?(from: number, to: number): Promise<number[]>;
  close(): Promise<void>;
  /**
   * The node's last finalized block, where the family has one (EVM's `finalized` tag); undefined
   * when the node reports none, so the environment's `finality_depth` decides instead.
   */
  finalized?(): Promise<number | undefined>;
  /**
   * Solana Pay's `findReference`: the transactions naming `reference` (watched as `watch`) that
   * are final (`getSignaturesForAddress(reference)` at `finalized`, then each transaction), in
   * blocks below `before`, except those in `known`, each with `watch`'s hits as the block
   * matcher reports them (recipient, mint, amount: what `validateTransfer` checks). The payments
   * engine asks it for open orders whose payment the scanner may have passed (payments/references.ts).
   * Undefined on families without references (`payments.reference`).
   */
  referenced?(reference: string, watch: WatchRef, before: number, known: ReadonlySet<string>): Promise<ReferencedTx[]>;
  /** The chain id the node reports, where the family has one (EVM's `eth_chainId`): payment URIs name it. */
  chainId?(): Promise<number>;
  /**
   * Relays a signed transaction (its raw form: `VerifiedTransaction.raw`) and returns its hash; one
   * the node already has counts as relayed. Throws `PayoutTxError` `E_TX_REJECTED` when the node
   * refuses it, `E_TX_UPSTREAM` when no upstream answers. Undefined: the family cannot.
   */
  broadcast?(raw: string): Promise<string>;
  /** The node's fee estimate for the next blocks in sat/vB (UTXO `estimatesmartfee`), a whole number >= 1. */
  feeRate?(): Promise<number>;
}

/**
 * One call as a person would type it: JSON-RPC families a method and its params (sent to the
 * endpoint's URL), REST families a verb and a path under it (`query` as sent, `body` JSON).
 */
export type ExampleCall =
  | { transport: 'rpc'; method: string; params: unknown[] }
  | { transport: 'rest'; verb: 'GET' | 'POST'; path: string; query?: string; body?: string };

/** A network's credit table: per method (or `VERB /route`), and the price of anything else. */
export interface CreditTable {
  default: number;
  methods: Record<string, number>;
}

/** A REST family's built-in prices per route; `{x}` matches one path segment. */
export type RouteCredits = Array<[method: 'GET' | 'POST' | '*', template: string, credits: number]>;

/** A token entry of config (`networks[].tokens[]`): a contract address or a Stellar asset. */
export interface TokenEntry {
  address?: string;
  asset?: string;
}

/** How a family writes its tokens in config. */
export interface TokenForm {
  /** Names the form in messages: `asset (CODE:ISSUER)`, `a 0x address`. */
  description: string;
  /** Whether a token entry is written in this form. */
  claims(token: TokenEntry): boolean;
  /** Checks the entry's address further; throws with the reason. */
  check?(token: TokenEntry): void;
}

/** An order's address derived from the merchant's extended public key (child `0/index`). */
export interface OrderDerivation {
  /** Checks a key for this family; throws an `XpubError` saying what is wrong. */
  checkKey(xpub: string): void;
  /**
   * The key without what only describes it (a UTXO key origin `[fingerprint/path]`): two settings
   * with the same identity derive the same addresses, so the order counter must not restart.
   */
  keyIdentity(xpub: string): string;
  /**
   * Child index -> address on `env`. Throws a `KeyMisfitError` when the key cannot derive
   * addresses there (a mainnet key on a test network).
   */
  deriver(xpub: string, env: ChainEnvironment): (index: number) => string;
  /**
   * The key's first address, so the merchant can check it is the wallet they think; `envs`
   * are the catalog's environments of this family, `identify` names one as the API does.
   */
  firstAddress<E extends ChainEnvironment>(xpub: string, envs: readonly E[], identify: (env: E) => string): { first_address: string; network?: string };
}

/** What a payment URI asks for: `amountRaw` of `asset` (`native` or the order's token id) to `address`. */
export interface PaymentRequest {
  env: ChainEnvironment;
  address: string;
  asset: string;
  amountRaw: bigint;
  decimals: number;
  /** The order's reference key, on families whose orders share the merchant's wallet (`payments.reference`). */
  reference?: string;
  /** Who asks (the merchant's display name) and what for (the order), where the URI carries them. */
  label?: string;
  message?: string;
}

/**
 * Orders paid to the merchant's one wallet and told apart by a reference key the customer's
 * transaction names (Solana Pay): a fresh public key per order that nobody holds the private
 * key of. The scanner reports a transaction that names a watched reference as hits of the
 * reference's watch, one per account it paid (`to`), so payments check the recipient, asset and
 * amount as Solana Pay's `validateTransfer` does.
 */
export interface OrderReference {
  /** A fresh reference: 32 random bytes written as an address of the family. */
  create(): string;
  /**
   * The match key a reference is watched under: not an address's key, so a wallet watched at
   * the same string is not taken for a reference (its transfers are matched by its own key).
   */
  watchKey(reference: string): string;
}

/**
 * What a wallet scans from the checkout page's QR code: BIP21 (`bitcoin:ADDR?amount=`),
 * EIP-681, or the plain address where wallets agree on no URI. `chain` is the environment's
 * adapter, for what the URI names of the node (EVM: the chain id).
 */
export type PaymentUri = (request: PaymentRequest, chain: () => ChainAdapter) => Promise<string>;

// ---- Payouts: money going back out (issue 34). rpcctl never signs: it builds an unsigned
// transaction where it knows the merchant's coins, checks what the merchant's wallet signed,
// and broadcasts it. chains/payouts.ts is the family-neutral entry.

/** One line a transaction must pay: `amountRaw` (smallest unit) of the native coin or of `token` to `address`. */
export interface ExpectedLine {
  address: string;
  amountRaw: bigint;
  /** An EVM ERC-20 contract address; undefined for the native coin. */
  token?: string;
}

/** UTXO: what makes coins and change the merchant's own. */
export interface UtxoOwnership {
  /** The settings' `xpubs.utxo` (with or without key origin). */
  xpub: string;
  /**
   * The coins the transaction may spend (`txid:vout`): the inputs of the unsigned transaction
   * rpcctl built for this payout (`UnsignedTransaction.inputs`, kept with it). Any other input is
   * another wallet's money, or coins this payout was not meant to spend.
   */
  coins: ReadonlyArray<{ txid: string; vout: number }>;
  /** Child indexes reserved as change for this payout (`BuiltPsbt.change.index`): `0/i` of the key. */
  changeIndexes: readonly number[];
}

export interface ExpectedTransfer {
  env: ChainEnvironment;
  /** UTXO: all lines of the batch, each paid by one output. EVM: exactly one line (a transaction makes one transfer). */
  lines: readonly ExpectedLine[];
  /** UTXO only: required there. */
  utxo?: UtxoOwnership;
  /** EVM only: the network's chain id (the adapter's `chainId()`); required there. */
  chainId?: number;
}

export interface VerifiedTransaction {
  /** As explorers and the scanners' hits write it (UTXO txid; EVM 0x-keccak of the raw bytes). */
  txHash: string;
  /** The network's raw form, what `broadcast` takes: hex (a PSBT is extracted), EVM with 0x. */
  raw: string;
  /** EVM: the recovered sender (checksummed); undefined for UTXO. */
  from?: string;
  /** UTXO: the outputs beyond the lines, to the merchant's change addresses. */
  change?: Array<{ address: string; amountRaw: bigint }>;
  /**
   * What the transaction uses up that no other transaction can use too (UTXO: its inputs'
   * outpoints `txid:vout`; EVM: `sender:nonce`): two transactions that share one cannot both
   * confirm, so the later replaces the earlier (BIP125, an EVM fee bump).
   */
  spends: string[];
}


/** A UTXO coin source: a paid order's derived address, its child index and the transactions that funded it. */
export interface CoinSource {
  address: string;
  index: number;
  txHashes: readonly string[];
}

/** What the unsigned transaction of a payout batch is built from (UTXO: a PSBT). */
export interface UnsignedRequest {
  env: ChainEnvironment;
  /** The settings' `xpubs.<family>` (UTXO: ideally `[fingerprint/path]vpub…`). */
  xpub: string;
  /** The paid orders whose coins may be spent. */
  sources: readonly CoinSource[];
  lines: ReadonlyArray<{ address: string; amountRaw: bigint }>;
  /** sat/vB; undefined: the adapter's `feeRate()`. */
  feeRate?: number;
  /** A child index no order uses, reserved by the caller: the change goes there. */
  changeIndex: number;
}

export interface UnsignedTransaction {
  /** `psbt`: BIP174 base64 in `data`. */
  format: 'psbt';
  data: string;
  inputs: Array<{ txid: string; vout: number; amountRaw: bigint }>;
  feeRaw: bigint;
  feeRate: number;
  change: { address: string; index: number; amountRaw: bigint } | undefined;
}

/** A family's payout transactions; each undefined where the family cannot (chains/payouts.ts says so with `E_TX_UNSUPPORTED`). */
export interface PayoutSupport {
  /** Checks a signed transaction against the lines (throws `PayoutTxError`), without the network. */
  verify: ((raw: string, expected: ExpectedTransfer) => VerifiedTransaction) | undefined;
  /** Finds the merchant's unspent coins through the adapter and builds the unsigned transaction. */
  unsigned: ((adapter: ChainAdapter, request: UnsignedRequest) => Promise<UnsignedTransaction>) | undefined;
}

/**
 * What a family is, without the code that talks to its nodes or derives its keys: read by the
 * gateway, config, the catalog and pricing, which every process and gateway worker loads. Kept
 * apart from `ChainFamily` so that loading them pulls in no scanner, HTTP client or BIP32
 * code (chains/traits.ts is their registry).
 */
export interface ChainTraits<Derives extends boolean = boolean, References extends boolean = boolean> {
  readonly name: NetworkFamily;
  /**
   * A cheap call written for people, which chooses nothing: the cabinet's "Try it" and its
   * request log's method placeholder, the CLI's help. The family's head read.
   */
  readonly example: ExampleCall;
  readonly gateway: {
    /** `rpc`: JSON-RPC POSTs to the endpoint root; `rest`: any path forwarded (Horizon, the Tron HTTP API). */
    transport: 'rpc' | 'rest';
    /** Nodes answer JSON-RPC errors with HTTP 500 (Bitcoin Core): not an upstream failure. */
    rpcErrorsAre500: boolean;
    /** Which calls read the head, may be sent twice or tried elsewhere; the family's ranged query. */
    methods: MethodClasses;
    /** Which answers are final and may be cached; undefined: the family caches nothing. */
    cache: CachePlan | undefined;
    /** How each upstream's version and head are read (the per-upstream head lag-aware choice uses). */
    probe: HeadProbe;
    /** The family's own JSON-RPC error classes, before the built-in table (docs/gateway.md, "Errors the nodes answer"). */
    errorRules: readonly NodeErrorRule[];
    /** WebSocket subscriptions on the endpoint's URL; undefined: none. */
    websocket: WsProtocol | undefined;
  };
  readonly credits: {
    /** A network's credit table when its config gives none (a fresh copy). */
    defaults(): CreditTable;
    /** REST families: the built-in route prices. */
    routes: RouteCredits | undefined;
    /** The call that fetches one block: what a block webhook costs. */
    block: { method: string; path?: string };
    /**
     * Typical seconds between blocks of a network of this family (by its slug, for well-known
     * chains that differ from the family's reference chain): only for estimates, such as what
     * block webhooks cost a day. Nothing is timed or billed by it.
     */
    blockSeconds(networkSlug: string): number;
  };
  readonly config: {
    /** How config writes this family's tokens; undefined: the family has no tokens. */
    tokens: TokenForm | undefined;
    /**
     * Families whose environments carry address prefixes (`address_format`): the built-in
     * prefixes for an environment slug, undefined when there are none for it.
     */
    addressFormat: ((envSlug: string) => UtxoAddressFormat | undefined) | undefined;
  };
  readonly payments: {
    /** The native coin: symbol (well-known networks may name their own) and decimals. */
    native: { symbol: string; decimals: number };
    /** The chain name AML providers (TRM) use when config names none. */
    amlChain: string;
    /**
     * Confirmations after which a transaction is final when the node reports no finalized block
     * (`environments[].finality_depth` overrides it): a closed order keeps watching its address
     * until then, so a reorg is still seen. 0: final once in a block.
     */
    finalityDepth: number;
    /**
     * Orders derive their addresses from the merchant's extended public key (the family's
     * `payments.derivation`). The one source of which families do: the settings' `xpubs`, the
     * store's `xpub_<family>` and `next_index_<family>` columns and the forms follow it.
     */
    derives: Derives;
    /**
     * Orders are paid to the merchant's one wallet (the settings' `wallets.<family>`, or the
     * order's `address`) and told apart by a reference key (the family's `payments.reference`).
     */
    references: References;
  };
}

/**
 * One chain architecture (as erpc's architecture/<name>/ handlers): everything that differs
 * between families, so no code outside chains/ branches on a family's name. A new family is
 * a folder implementing this (its traits in `traits.ts`, the rest in `index.ts`) and a line
 * in each registry (chains/traits.ts, chains/index.ts).
 */
export interface ChainFamily extends ChainTraits {
  /** An address given for a watch or an order on `env`: display form and match key. */
  parseAddress(env: ChainEnvironment, input: string): ParsedAddress;
  /** The scanner's adapter for an environment's upstreams (also the payments' unconfirmed-block look). */
  scanner(upstreams: string[], timeoutMs?: number, options?: AdapterOptions): ChainAdapter;
  readonly payments: ChainTraits['payments'] & {
    /** A listed contract token: its asset id and what a scanned hit's `token` is for it. */
    contractToken(address: string): { id: string; matchKey: string };
    /** Deriving order addresses from an extended public key; undefined: orders need an address. */
    derivation: OrderDerivation | undefined;
    /** The checkout page's QR content for an amount still to pay. */
    paymentUri: PaymentUri;
    /** Orders told apart by a reference key (Solana Pay); undefined: by their own address. */
    reference: OrderReference | undefined;
  };
  readonly payouts: PayoutSupport;
}
