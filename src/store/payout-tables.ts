import type { Generated } from 'kysely';

/**
 * Row types of refunds and payouts (registered in store/tables.ts; owner: payouts/). A payout is
 * a batch the merchant approves and cancels as one; each of its lines is one transfer, with its
 * own state machine (payouts/transition.ts). A refund is a payout of one line with `order_pk`.
 * Amounts are integer strings in base units.
 */
export interface PayoutsTable {
  id: Generated<number>;
  /** `po_…` for a payout, `rf_…` for a refund. */
  payout_id: string;
  account_id: number;
  kind: 'payout' | 'refund';
  /** The refunded order (payment_orders.id); null for a payout. */
  order_pk: number | null;
  /** A refund's amount as asked: `full`, `overpaid`, `asset`, `fiat_locked`, `fiat_current`. */
  refund_amount: string | null;
  /** Where its webhooks go (a refund: its order's `webhook_url`); null: the account's webhook. */
  webhook_url: string | null;
  /** Who made it: `member:<id>` or `key:<id>` (a key made by no member), and a label for people. */
  created_by: string;
  created_by_label: string;
  created_role: string;
  /** `not_needed`, `awaiting` (an owner other than the maker must approve), `approved`. */
  approval: string;
  /** Why approval is needed: `role` (a developer prepared it) or `amount` (above payouts_approval_over). */
  approval_reason: string | null;
  approved_by: string | null;
  approved_by_label: string | null;
  approved_at: string | null;
  /** The batch's worth in the threshold's currency at creation (decimal string); null: not priced. */
  fiat_total: string | null;
  fiat_currency: string | null;
  canceled_at: string | null;
  /**
   * UTXO: the coins (`[{txid, vout}]`, JSON) of every PSBT built for it, and the change indexes
   * reserved: a signed transaction may spend only those and change only to these.
   */
  psbt_coins: Generated<string | null>;
  psbt_change_indexes: Generated<string | null>;
  created_at: string;
  updated_at: string;
}

export interface PayoutLinesTable {
  id: Generated<number>;
  payout_pk: number;
  account_id: number;
  /** 1-based position in the batch. */
  line_no: number;
  network_environment_id: number;
  network: string;
  asset: string;
  decimals: number;
  /** Null while a refund waits for its customer's address (the refund link). */
  address: string | null;
  address_key: string | null;
  amount_raw: string;
  /** A fiat amount and its rate, locked at creation; null for an amount in the asset. */
  price_amount: string | null;
  price_currency: string | null;
  rate: string | null;
  rate_source: string | null;
  rate_at: string | null;
  /** The merchant's reference for the line. */
  reference: string | null;
  status: string;
  /** Statuses taken, joined by `>`. */
  lifecycle: string;
  /** Transitions so far: the next webhook's sequence number; the compare-and-set of every move. */
  seq: number;
  /** The watch it tracks its transfer through, while it has one (from an address to final). */
  watch_id: string | null;
  /** The last signed transaction's hash recorded for it (POST …/transaction). */
  expected_tx: string | null;
  /**
   * 0035: every signed transaction recorded for it, oldest first, JSON `[{hash, spends}]`
   * (`spends`: chains VerifiedTransaction.spends); any of them matches. Null: none recorded, or
   * only `expected_tx`, recorded before 0035.
   */
  recorded_txs: Generated<string | null>;
  /** The matching transfer: its transaction, event (watch_events.id) and block. */
  tx_hash: string | null;
  event_id: number | null;
  block_height: number | null;
  created_at: string;
  updated_at: string;
}

/** A refund's link for its customer to give an address: the token's sha256 only, one claim. */
export interface RefundLinksTable {
  id: Generated<number>;
  payout_pk: number;
  token_hash: string;
  expires_at: string;
  claimed_at: string | null;
  created_at: string;
}
