// The one shape every chain family implements (chains/<family>/index.ts), and the small
// structural types it speaks in. chains/ sits below the store, config and the watch: what an
// adapter needs from them is named here and their types satisfy it (a catalog `Environment`
// is a `ChainEnvironment`, the watch registry is a `WatchLookup`).

import type { ParsedAddress } from './address.js';
import type { UtxoAddressFormat } from './utxo/address.js';

export type NetworkFamily = 'evm' | 'stellar' | 'utxo' | 'tron';

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

/** One block (ledger) as a chain family delivers it, with the watched addresses' hits. */
export interface FetchedBlock {
  hash: string;
  parentHash: string;
  txHashes: string[];
  hits: Hit[];
}

/** What a scanner needs from a chain family: its head, and a block with its hits. */
export interface ChainAdapter {
  head(): Promise<number>;
  /** undefined when the node does not have the block (yet). */
  block(height: number, registry: WatchLookup, envId: number): Promise<FetchedBlock | undefined>;
  close(): Promise<void>;
  /**
   * The node's last finalized block, where the family has one (EVM's `finalized` tag); undefined
   * when the node reports none, so the environment's `finality_depth` decides instead.
   */
  finalized?(): Promise<number | undefined>;
  /** The chain id the node reports, where the family has one (EVM's `eth_chainId`): payment URIs name it. */
  chainId?(): Promise<number>;
}

/** A network's credit table: per method (or `VERB /route`), and the price of anything else. */
export interface CreditTable {
  default: number;
  methods: Record<string, number>;
}

/** A REST family's built-in prices per route; `{x}` matches one path segment. */
export type RouteCredits = Array<[method: 'GET' | 'POST' | '*', template: string, credits: number]>;

/** The gateway's one request that tells an upstream's version and height (all but per-upstream probing). */
export interface HealthCheck {
  method: 'GET' | 'POST';
  path: string;
  body: string | undefined;
  contentType: string | undefined;
  /** Reads the answer; throws when it cannot. */
  read(text: string): { version: string | null; blockHeight: number | null };
}

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
}

/**
 * What a wallet scans from the checkout page's QR code: BIP21 (`bitcoin:ADDR?amount=`),
 * EIP-681, or the plain address where wallets agree on no URI. `chain` is the environment's
 * adapter, for what the URI names of the node (EVM: the chain id).
 */
export type PaymentUri = (request: PaymentRequest, chain: () => ChainAdapter) => Promise<string>;

/**
 * What a family is, without the code that talks to its nodes or derives its keys: read by the
 * gateway, config, the catalog and pricing, which every process and gateway worker loads. Kept
 * apart from `ChainFamily` so that loading them pulls in no scanner, HTTP client or BIP32
 * code (chains/traits.ts is their registry).
 */
export interface ChainTraits {
  readonly name: NetworkFamily;
  readonly gateway: {
    /** `rpc`: JSON-RPC POSTs to the endpoint root; `rest`: any path forwarded (Horizon, the Tron HTTP API). */
    transport: 'rpc' | 'rest';
    /** Nodes answer JSON-RPC errors with HTTP 500 (Bitcoin Core): not an upstream failure. */
    rpcErrorsAre500: boolean;
    /** Whether endpoints take WebSocket subscriptions. */
    websocket: boolean;
    /** One request for the health probe; undefined: every upstream is probed with a JSON-RPC batch (EVM). */
    health: HealthCheck | undefined;
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
  scanner(upstreams: string[], timeoutMs?: number): ChainAdapter;
  readonly payments: ChainTraits['payments'] & {
    /** A listed contract token: its asset id and what a scanned hit's `token` is for it. */
    contractToken(address: string): { id: string; matchKey: string };
    /** Deriving order addresses from an extended public key; undefined: orders need an address. */
    derivation: OrderDerivation | undefined;
    /** The checkout page's QR content for an amount still to pay. */
    paymentUri: PaymentUri;
  };
}
