import type { Generated } from 'kysely';

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

export interface PaymentSettingsTable {
  account_id: number;
  xpub_evm: string | null;
  next_index_evm: number;
  /** 0019: the UTXO family's account key (zpub/vpub, ypub/upub, xpub/tpub) and its counter. */
  xpub_utxo: string | null;
  next_index_utxo: number;
  /** 0019: the Tron account key (m/44'/195'/0') and its counter. */
  xpub_tron: string | null;
  next_index_tron: number;
  aml_fail_at: string;
  underpaid_tolerance_bps: number;
  accept_late: number;
  /** 0024: the merchant's name on the checkout page, and where it sends a paid customer (null: none). */
  display_name: string | null;
  redirect_url: string | null;
  updated_at: string;
}

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
