import type { Generated } from 'kysely';
import type { DerivingFamily, ReferenceFamily } from '../chains/traits.js';

/** Row types of the payments part (registered in store/tables.ts). Amounts are integer strings in base units. */
export interface PaymentOrdersTable {
  id: Generated<number>;
  payment_id: string;
  account_id: number;
  order_id: string;
  /** sha256 of the normalised create body: the same `order_id` with another body is a conflict. */
  request_hash: string;
  network_environment_id: number;
  /** The identifier the merchant used (`eth`, `eth-sepolia`). */
  network: string;
  /** `native`, an EVM token contract (EIP-55) or a Stellar `CODE:ISSUER`. */
  asset: string;
  decimals: number;
  address: string;
  address_key: string;
  /** BIP32 child index when the address was derived from the account's xpub. */
  derivation_index: number | null;
  watch_id: string;
  /** 1 when the order created the watch (and removes it when done). */
  owns_watch: number;
  amount_raw: string;
  received_raw: string;
  status: string;
  reason: string | null;
  late: number;
  overpaid: number;
  lifecycle: string;
  /** JSON of the aml object, or null. */
  aml: string | null;
  /** Transitions written so far: the next webhook's sequence number. */
  seq: number;
  expires_at: string;
  expires_ms: number;
  /** Until then the address stays watched (expiry + 24 h). */
  monitor_until_ms: number;
  /** 1 while the order holds its address and watch. */
  open: number;
  /**
   * 0022: 1 while a closed order (`paid`, `failed`, `expired` past its late window) keeps its
   * watch until its funding is final; it holds no slot and no address.
   */
  held: Generated<number>;
  webhook_url: string | null;
  metadata: string | null;
  created_at: string;
  updated_at: string;
  /** 0025: the fiat price (decimal string) and ISO 4217 code; null on orders priced in the asset. */
  price_amount: Generated<string | null>;
  price_currency: Generated<string | null>;
  /** 0025: the rate locked at creation (currency per asset unit, decimal string), its source and time. */
  rate: Generated<string | null>;
  rate_source: Generated<string | null>;
  rate_at: Generated<string | null>;
  /**
   * 0033: the Solana Pay reference its payments name, on orders paid to the merchant's one wallet
   * (`address`, then, is that wallet and `address_key` the reference's watch key); null otherwise.
   */
  reference: Generated<string | null>;
}

/** 0025: the operator's rate table (`rpcctl admin rates set`); extends and overrides `payments.rates.static`. */
export interface PaymentRatesTable {
  /** The asset's symbol, upper case (ETH, USDT). */
  asset: string;
  /** ISO 4217 code. */
  currency: string;
  rate: string;
  updated_at: string;
}

/** One funding transfer (an Address Watch event) applied to an order. */
export interface PaymentFundingTable {
  id: Generated<number>;
  order_pk: number;
  event_id: number;
  tx_hash: string;
  from_address: string | null;
  amount_raw: string;
  block_height: number;
  /** 0 when the transfer was not of the order's asset (kept so it is not looked at again). */
  counted: number;
  late: number;
  /** 1 once its block left the chain. */
  removed: number;
  created_at: string;
}

/** A transfer to an order seen in a block below the network's confirmations. */
export interface PaymentSightingsTable {
  id: Generated<number>;
  order_pk: number;
  tx_hash: string;
  seen_ms: number;
  /** 0022: 1 once the transaction left the chain; (order_pk, tx_hash) is unique among the others. */
  removed: Generated<number>;
}

/**
 * Each deriving family's account key and its child counter (evm from the start, utxo and tron
 * from 0019): the columns follow the families whose traits derive; a new one needs its migration.
 */
export type DerivationColumns =
  { [F in DerivingFamily as `xpub_${F}`]: string | null } & { [F in DerivingFamily as `next_index_${F}`]: number };

/** 0033: the merchant's wallet per family whose orders are told apart by a reference (`wallet_solana`). */
export type WalletColumns = { [F in ReferenceFamily as `wallet_${F}`]: string | null };

export type PaymentSettingsTable = DerivationColumns & WalletColumns & {
  account_id: number;
  aml_fail_at: string;
  underpaid_tolerance_bps: number;
  accept_late: number;
  /** 0024: the merchant's name on the checkout page, and where it sends a paid customer (null: none). */
  display_name: string | null;
  redirect_url: string | null;
  updated_at: string;
  /** 0034: above this fiat amount (decimal string, in its currency) a refund or payout needs a second owner's approval; null: never. */
  payouts_approval_over: Generated<string | null>;
  payouts_approval_currency: Generated<string | null>;
};

/** The durable screening queue: one job per order that reached `aml_check`. */
export interface AmlJobsTable {
  id: Generated<number>;
  order_pk: number;
  /** pending | done | cancelled */
  status: string;
  attempts: number;
  next_attempt_ms: number;
  lease_until: number | null;
  last_error: string | null;
  created_at: string;
}

export interface AmlSanctionsTable {
  /** Lower case for EVM (0x...), as given otherwise. */
  address_key: string;
  address: string;
  /** The list's currency tag, e.g. ETH, XBT, USDT. */
  currency: string;
  source: string;
  loaded_at: string;
}
