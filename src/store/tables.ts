import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { WebhookAttempt } from '../wire/webhooks.js';
import type { PaymentOrdersTable, PaymentFundingTable, PaymentSightingsTable, PaymentSettingsTable, AmlJobsTable, AmlSanctionsTable, PaymentRatesTable } from './payment-tables.js';
import type { PayoutsTable, PayoutLinesTable, RefundLinksTable } from './payout-tables.js';

/** Row types of the store. JSON columns hold text; booleans are 0/1 (SQLite has neither). */
export interface Database {
  plans: PlansTable;
  networks: NetworksTable;
  network_environments: NetworkEnvironmentsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  endpoints: EndpointsTable;
  usage_daily: UsageDailyTable;
  usage_account_daily: UsageAccountDailyTable;
  store_changes: StoreChangesTable;
  watched_addresses: WatchedAddressesTable;
  watch_webhooks: WatchWebhooksTable;
  watch_events: WatchEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  scanner_cursors: ScannerCursorsTable;
  scanner_blocks: ScannerBlocksTable;
  cabinet_members: CabinetMembersTable;
  cabinet_sessions: CabinetSessionsTable;
  cabinet_login_links: CabinetLoginLinksTable;
  cabinet_recovery_codes: CabinetRecoveryCodesTable;
  cabinet_sign_in_challenges: CabinetSignInChallengesTable;
  cabinet_policies: CabinetPoliciesTable;
  audit_log: AuditLogTable;
  payment_orders: PaymentOrdersTable;
  payment_funding: PaymentFundingTable;
  payment_sightings: PaymentSightingsTable;
  payment_settings: PaymentSettingsTable;
  payment_rates: PaymentRatesTable;
  aml_jobs: AmlJobsTable;
  aml_sanctions: AmlSanctionsTable;
  payouts: PayoutsTable;
  payout_lines: PayoutLinesTable;
  refund_links: RefundLinksTable;
  scanner_leases: ScannerLeasesTable;
  store_meta: StoreMetaTable;
  instance_heartbeats: InstanceHeartbeatsTable;
}

/** An instance's last sign of life (Unix ms, its own clock): live instances share limits while Redis is away. */
export interface InstanceHeartbeatsTable {
  instance_id: string;
  seen_at: number;
}

export interface StoreMetaTable {
  key: string;
  value: string;
}

/** Which instance scans an environment; `generation` fences the writes of one that lost it. */
export interface ScannerLeasesTable {
  network_environment_id: number;
  owner: string;
  generation: number;
  /** Unix ms. */
  expires_at: number;
}

export interface PlansTable {
  id: number;
  slug: string;
  name: string;
  included_credits: number;
  rps_limit: number;
  endpoints_limit: number;
  webhook_address_slots: number;
  network_limit: number | null;
  allowed_network_slugs: string;
}

export interface NetworksTable {
  id: number;
  uuid: string;
  slug: string;
  name: string;
  family: string;
  sort: number;
  credits: string;
  active: number;
}

export interface NetworkEnvironmentsTable {
  id: number;
  network_id: number;
  slug: string;
  upstreams: string;
  confirmations: number;
  position: number;
  active: number;
  /** JSON of the UTXO family's address prefixes (0017); null for other families. */
  address_format: string | null;
  /** 0022: blocks after which a transaction is final (null: the family's default). */
  finality_depth: number | null;
}

export interface AccountsTable {
  id: Generated<number>;
  name: string | null;
  plan_id: number;
  webhook_secret: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: number;
  prefix: string;
  secret: string;
  name: string | null;
  allowed_ips: string;
  created_at: string;
  revoked_at: string | null;
  /** Coalesced: written in batches by the API, not per request. */
  last_used_at: string | null;
  /** The cabinet member who made it: the key acts with that member's role; null (older keys, `rpcctl admin`) acts as an owner. */
  created_by_member: Generated<number | null>;
}

export interface EndpointsTable {
  id: Generated<number>;
  uuid: string;
  account_id: number;
  name: string;
  status: string;
  network_environment_id: number;
  allowed_ips: string;
  created_at: string;
  updated_at: string;
  version: string | null;
  block_height: number | null;
}

/** endpoint_id 0 holds account-level charges that belong to no endpoint (webhook deliveries). */
export interface UsageDailyTable {
  account_id: number;
  endpoint_id: number;
  day: string;
  method: string;
  requests: number;
  credits: number;
}

/** The account x day x method roll-up of usage_daily, kept in the flush's transaction (0018). */
export interface UsageAccountDailyTable {
  day: string;
  account_id: number;
  method: string;
  requests: number;
  credits: number;
}

/** Change counters other processes poll (`auth`: API keys and accounts' plans). */
export interface StoreChangesTable {
  name: string;
  version: number;
}

export interface WatchedAddressesTable {
  id: Generated<number>;
  watch_id: string;
  account_id: number;
  network_environment_id: number;
  /** The identifier the merchant used (`eth` or `eth-sepolia`); events carry it. */
  network_slug: string;
  /** Display form (EIP-55 for EVM). */
  address: string;
  /** Match form (lowercase for EVM). */
  address_key: string;
  created_at: string;
  /**
   * The first block whose payments the watch reports: the environment's next unrecorded block
   * when it was added (0: before the first block the environment's scanner records). No scanner
   * records a block at or past it without the watch (watch/record.ts).
   */
  start_height: Generated<number>;
  /**
   * Whose watch it is (written only by watch/, payments ask through its calls): `merchant` (the
   * API's: the merchant's webhooks, their slot, theirs to remove) or `order` (a payment order
   * made it: no Address Watch webhooks; removed once no order uses it) or `payout` (0034: a
   * refund or payout line tracks a transfer to it: no webhooks, no slot; removed at final).
   */
  holder: Generated<'merchant' | 'order' | 'payout'>;
  /** 1 while an open payment order listens through it (the API refuses to remove it). */
  order_open: Generated<number>;
  /** 1 while a closed order keeps it until its funding is final (a finality hold). */
  order_held: Generated<number>;
}

export interface WatchWebhooksTable {
  account_id: number;
  url: string;
  enabled: number;
  /** JSON of the flat filter object. */
  filters: string;
  updated_at: string;
}

export interface WatchEventsTable {
  id: Generated<number>;
  account_id: number;
  watch_id: string | null;
  network_environment_id: number;
  network: string;
  type: string;
  block_height: number;
  block_hash: string;
  /** The flat JSON body as the feed and the webhook show it. */
  body: string;
  /** 1 when the event's block left the chain in a reorg. */
  removed: number;
  created_at: string;
  // A hit's fields in columns of their own (migration 0032), what other modules query through
  // watch/events.ts hitEvents; null on `block` events.
  tx_hash: string | null;
  direction: string | null;
  /** The watched address, as the watch shows it. */
  address: string | null;
  from_address: string | null;
  to_address: string | null;
  /** The token contract (mint), null for the native coin. */
  token: string | null;
  /** In base units, as a decimal string. */
  amount: string | null;
  log_index: number | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: string;
  account_id: number;
  event_id: number | null;
  type: string;
  network: string;
  body: string;
  credits: number;
  bill_method: string;
  is_test: number;
  /** pending | delivered | failed | cancelled */
  status: string;
  attempts: number;
  /** Unix ms. */
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  /** Deliveries with one key (a payment order's) are sent one at a time, in id order. */
  sequence_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** Overrides the account's webhook URL (a payment order's own `webhook_url`). */
  target_url: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An attempt is stored as the API shows it, plus its keys. */
export interface WebhookAttemptsTable extends WebhookAttempt {
  id: Generated<number>;
  delivery_id: number;
}

export interface ScannerCursorsTable {
  network_environment_id: number;
  next_height: number;
  updated_at: string;
}

export interface ScannerBlocksTable {
  network_environment_id: number;
  height: number;
  hash: string;
}

/** A member of an account: its own e-mail, password, second factor and role. */
export interface CabinetMembersTable {
  id: Generated<number>;
  account_id: number;
  email: string;
  /** `scrypt$N$r$p$salt$hash`; null until a password is set (sign-in by link only, or an invitation not yet accepted). */
  password_hash: string | null;
  /** 'owner' | 'developer' | 'viewer' (members.ts). */
  role: string;
  created_at: string;
  /** Null while the invitation is not yet accepted. */
  joined_at: string | null;
  updated_at: string;
  /** The TOTP key, sealed with the master key (SecretBox); null while two-factor is off. */
  totp_secret: Generated<string | null>;
  /** A key shown for enrolment and not yet confirmed with a code, sealed the same way. */
  totp_pending: Generated<string | null>;
  totp_enabled_at: Generated<string | null>;
  /** The last TOTP step accepted: its code, and older ones, are refused after that. */
  totp_last_step: Generated<number | null>;
}

/** `member_id` names the login; `account_id` is its account's. */
export interface CabinetRecoveryCodesTable {
  account_id: number;
  member_id: number;
  code_hash: string;
  used_at: number | null;
}

export interface CabinetSignInChallengesTable {
  token_hash: string;
  account_id: number;
  member_id: number;
  next: string;
  expires_at: number;
  failures: Generated<number>;
}

export interface CabinetPoliciesTable {
  account_id: number;
  require_two_factor: Generated<number>;
  updated_at: string;
}

/** Times in Unix ms: expiry is arithmetic on them. */
export interface CabinetSessionsTable {
  id_hash: string;
  account_id: number;
  member_id: number;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  user_agent: string | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  account_id: number;
  created_at: string;
  /** login | key | admin */
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  action: string;
  target_type: string;
  target_id: string | null;
  /** A small JSON object of the changed fields (never a secret), or null. */
  changes: string | null;
  ip: string | null;
}

export interface CabinetLoginLinksTable {
  token_hash: string;
  account_id: number;
  member_id: number;
  /** 'sign-in', or 'set-password' (an invitation, a reset): the link leads to a new password first. */
  purpose: Generated<string>;
  expires_at: number;
  used_at: number | null;
}
// The payments tables live in their own file of the store (one Database interface, one owner).
export type { PaymentOrdersTable, PaymentFundingTable, PaymentSightingsTable, PaymentSettingsTable, AmlJobsTable, AmlSanctionsTable, PaymentRatesTable } from './payment-tables.js';

export type PlanRow = Selectable<PlansTable>;
export type NetworkRow = Selectable<NetworksTable>;
export type EnvironmentRow = Selectable<NetworkEnvironmentsTable>;
export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type EndpointRow = Selectable<EndpointsTable>;
export type NewEndpoint = Insertable<EndpointsTable>;
export type EndpointUpdate = Updateable<EndpointsTable>;
export type WatchedAddressRow = Selectable<WatchedAddressesTable>;
export type WatchEventRow = Selectable<WatchEventsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
