import { sql, type Kysely, type Migration, type MigrationProvider, type RawBuilder } from 'kysely';
import { storeKindOf } from './dialect.js';
import { paymentsFiatMigration, paymentsFinalityMigration, paymentsMigration } from './payments-migration.js';

/**
 * Versioned migrations, applied in name order at start. Never edit one that has shipped:
 * add the next number instead.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('plans')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('included_credits', 'integer', (c) => c.notNull())
        .addColumn('rps_limit', 'integer', (c) => c.notNull())
        .addColumn('endpoints_limit', 'integer', (c) => c.notNull())
        .addColumn('webhook_address_slots', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('network_limit', 'integer')
        .addColumn('allowed_network_slugs', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
      await db.schema.createTable('networks')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('uuid', 'text', (c) => c.notNull().unique())
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('family', 'text', (c) => c.notNull())
        .addColumn('sort', 'integer', (c) => c.notNull())
        .addColumn('credits', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema.createTable('network_environments')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('network_id', 'integer', (c) => c.notNull().references('networks.id'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('upstreams', 'text', (c) => c.notNull())
        .addColumn('confirmations', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addUniqueConstraint('network_environments_network_slug', ['network_id', 'slug'])
        .execute();
      await db.schema.createTable('accounts')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('name', 'text')
        .addColumn('plan_id', 'integer', (c) => c.notNull().references('plans.id'))
        .addColumn('webhook_secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('allowed_ips', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();
      await db.schema.createTable('endpoints')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('uuid', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('network_environment_id', 'integer', (c) => c.notNull().references('network_environments.id'))
        .addColumn('allowed_ips', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('version', 'text')
        .addColumn('block_height', 'integer')
        .execute();
      await db.schema.createIndex('endpoints_account').on('endpoints').column('account_id').execute();
      await db.schema.createTable('usage_daily')
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('endpoint_id', 'integer', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('credits', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('usage_daily_pk', ['account_id', 'endpoint_id', 'day', 'method'])
        .execute();
      await sql`CREATE INDEX usage_daily_account_day ON usage_daily (account_id, day)`.execute(db);
    },
  },
  '0002_address_watch': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('watched_addresses')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('watch_id', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('network_environment_id', 'integer', (c) => c.notNull())
        .addColumn('network_slug', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('address_key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('watched_addresses_unique', ['account_id', 'network_environment_id', 'address_key'])
        .execute();
      await sql`CREATE INDEX watched_addresses_env ON watched_addresses (network_environment_id)`.execute(db);
      await db.schema.createTable('watch_webhooks')
        .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('filters', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createTable('watch_events')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('watch_id', 'text')
        .addColumn('network_environment_id', 'integer', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('block_height', 'integer', (c) => c.notNull())
        .addColumn('block_hash', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('removed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await sql`CREATE INDEX watch_events_account ON watch_events (account_id, id)`.execute(db);
      await sql`CREATE INDEX watch_events_block ON watch_events (network_environment_id, block_height)`.execute(db);
      await db.schema.createTable('webhook_deliveries')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('event_id', 'integer')
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('credits', 'integer', (c) => c.notNull())
        .addColumn('bill_method', 'text', (c) => c.notNull())
        .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'integer', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', 'integer')
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('delivered_at', 'text')
        .execute();
      await sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at)`.execute(db);
      await sql`CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, id)`.execute(db);
      await db.schema.createTable('webhook_attempts')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('delivery_id', 'integer', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('next_retry_at', 'text')
        .execute();
      await sql`CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt)`.execute(db);
      await db.schema.createTable('scanner_cursors')
        .addColumn('network_environment_id', 'integer', (c) => c.primaryKey())
        .addColumn('next_height', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // Recent processed blocks: the parent-hash check that detects a reorg needs them.
      await db.schema.createTable('scanner_blocks')
        .addColumn('network_environment_id', 'integer', (c) => c.notNull())
        .addColumn('height', 'integer', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('scanner_blocks_pk', ['network_environment_id', 'height'])
        .execute();
    },
  },
  '0003_deliveries_by_event': {
    async up(db: Kysely<any>) {
      // A reorg rewind cancels deliveries by event, and `deliveries?event_id=` filters on it:
      // without an index both scan the whole outbox.
      await sql`CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)`.execute(db);
    },
  },
  '0012_payments': { up: (db: Kysely<any>) => paymentsMigration(db) },
  '0013_cabinet': {
    async up(db: Kysely<any>) {
      // Sign-in for the web cabinet: one login per account, the password as a scrypt hash.
      await db.schema.createTable('cabinet_logins')
        .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id'))
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // Only the SHA-256 of a session id is stored: a copy of the store cannot sign anybody in.
      await db.schema.createTable('cabinet_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
        .addColumn('user_agent', 'text')
        .execute();
      await db.schema.createIndex('cabinet_sessions_account').on('cabinet_sessions').column('account_id').execute();
      await db.schema.createTable('cabinet_login_links')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.alterTable('api_keys').addColumn('last_used_at', 'text').execute();
      await db.schema.alterTable('webhook_attempts').addColumn('response_excerpt', 'text').execute();
    },
  },
  '0017_utxo_address_format': {
    async up(db: Kysely<any>) {
      // A UTXO environment's address prefixes (Bitcoin, Litecoin, Dogecoin... differ only there).
      await db.schema.alterTable('network_environments').addColumn('address_format', 'text').execute();
    },
  },
  '0019_payments_utxo_tron': {
    async up(db: Kysely<any>) {
      // Orders on Bitcoin-style chains and Tron derive their addresses from keys of their own.
      await db.schema.alterTable('payment_settings').addColumn('xpub_utxo', 'text').execute();
      await db.schema.alterTable('payment_settings').addColumn('next_index_utxo', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('payment_settings').addColumn('xpub_tron', 'text').execute();
      await db.schema.alterTable('payment_settings').addColumn('next_index_tron', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  },
};

/**
 * Usage reads cost what they return. `usage_daily` (endpoint x day x method) is
 * rebuilt with the day first in its key: a new UTC day's rows then append at the end of the
 * index instead of landing on a page of every endpoint's range, which made the first flush of
 * each day rewrite most of the index. `usage_account_daily` (account x day x method) is kept at
 * flush time, so an account's report reads days x methods rows however many endpoints it has.
 * `store_changes` counts changes other processes must notice (API keys, accounts' plans).
 */
export const migrations18: Record<string, Migration> = {
  '0018_scale_usage_rollups': {
    async up(db: Kysely<any>) {
      const cols = ['day', 'account_id', 'endpoint_id', 'method', 'requests', 'credits'] as const;
      // On SQLite the rows live in their key's B-tree (WITHOUT ROWID): a flush and a report
      // touch one tree instead of the key's and then the table's. PostgreSQL's heap has no such choice.
      const clustered = <T extends { modifyEnd(s: RawBuilder<unknown>): T }>(b: T): T => (storeKindOf(db) === 'sqlite' ? b.modifyEnd(sql`without rowid`) : b);
      await db.schema.createTable('usage_daily_next')
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('endpoint_id', 'integer', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('credits', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('usage_daily_day_pk', ['day', 'account_id', 'endpoint_id', 'method'])
        .$call(clustered)
        .execute();
      await db.insertInto('usage_daily_next').columns([...cols])
        .expression(db.selectFrom('usage_daily').select([...cols]).orderBy('day').orderBy('account_id').orderBy('endpoint_id').orderBy('method'))
        .execute();
      await db.schema.dropTable('usage_daily').execute();
      await db.schema.alterTable('usage_daily_next').renameTo('usage_daily').execute();

      await db.schema.createTable('usage_account_daily')
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('credits', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('usage_account_daily_pk', ['day', 'account_id', 'method'])
        .$call(clustered)
        .execute();
      await db.insertInto('usage_account_daily').columns(['day', 'account_id', 'method', 'requests', 'credits'])
        .expression(db.selectFrom('usage_daily')
          .select(['day', 'account_id', 'method', sql<number>`sum(requests)`.as('requests'), sql<number>`sum(credits)`.as('credits')])
          .groupBy(['day', 'account_id', 'method']))
        .execute();

      await db.schema.createTable('store_changes')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('version', 'integer', (c) => c.notNull())
        .execute();
      await db.insertInto('store_changes').values({ name: 'auth', version: 0 }).execute();
    },
  },
  '0018_scale_feed_indexes': {
    async up(db: Kysely<any>) {
      // Every filter of the events feed and the deliveries list is an equality prefix followed
      // by the id its keyset pages on, so a page reads the rows it returns and no others. With
      // only (account_id, id) a rare type read the whole account's feed to fill one page, and a
      // watch's 3 events too: the planner prefers that index (it serves the order) to
      // (watch_id, id), so each filter gets an index that starts with the account.
      await db.schema.createIndex('watch_events_account_type').on('watch_events').columns(['account_id', 'type', 'id']).execute();
      await db.schema.createIndex('watch_events_account_env').on('watch_events').columns(['account_id', 'network_environment_id', 'id']).execute();
      await db.schema.createIndex('watch_events_account_env_type').on('watch_events')
        .columns(['account_id', 'network_environment_id', 'type', 'id']).execute();
      await db.schema.createIndex('watch_events_account_watch').on('watch_events').columns(['account_id', 'watch_id', 'id']).execute();
      await db.schema.createIndex('watch_events_account_watch_type').on('watch_events').columns(['account_id', 'watch_id', 'type', 'id']).execute();
      // Retention deletes the oldest events and finished deliveries by time.
      await db.schema.createIndex('watch_events_created').on('watch_events').columns(['created_at', 'id']).execute();
      await db.schema.createIndex('webhook_deliveries_created').on('webhook_deliveries').columns(['created_at', 'id']).execute();
      await db.schema.createIndex('webhook_deliveries_account_status').on('webhook_deliveries').columns(['account_id', 'status', 'id']).execute();
      // A payment order's webhooks by account and order: with the account's index alone its
      // timeline read every delivery of the account.
      await db.schema.createIndex('webhook_deliveries_account_sequence').on('webhook_deliveries').columns(['account_id', 'sequence_key']).execute();
      // The delivery claim visits accounts with pending work one by one and takes each one's
      // due rows in order: a seek per account instead of a walk over the whole backlog.
      await db.schema.createIndex('webhook_deliveries_claim').on('webhook_deliveries')
        .columns(['status', 'account_id', 'next_attempt_at', 'id']).execute();
    },
  },
  '0018_scale_endpoints_updated': {
    async up(db: Kysely<any>) {
      // The gateway's version check reads only the endpoints changed since its last look.
      await db.schema.createIndex('endpoints_updated').on('endpoints').column('updated_at').execute();
    },
  },
  '0018_scale_payment_ingest': {
    async up(db: Kysely<any>) {
      // The payments engine's tick reads open orders (few; orders are kept forever), each one's
      // watch's payment events since it was created (a long-lived watch may have many before),
      // and events removed by a reorg (rare): each gets an index holding just those rows.
      await db.schema.createIndex('payment_orders_open').on('payment_orders').columns(['status', 'monitor_until_ms'])
        .where(sql.ref('open'), '=', 1).execute();
      await db.schema.createIndex('watch_events_watch_payments').on('watch_events').columns(['watch_id', 'type', 'created_at']).execute();
      await db.schema.createIndex('watch_events_removed').on('watch_events').column('id').where(sql.ref('removed'), '=', 1).execute();
    },
  },
};

export const migrations11: Record<string, Migration> = {
  '0011_multi_instance': {
    async up(db: Kysely<any>) {
      // Multi-instance mode: one instance scans an environment at a time.
      await db.schema.createTable('scanner_leases')
        .addColumn('network_environment_id', 'integer', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('generation', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'integer', (c) => c.notNull())
        .execute();
      // Facts about the store itself, such as a value sealed with the master key, so an
      // instance started with a different key refuses to start instead of failing per secret.
      await db.schema.createTable('store_meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
};
/**
 * One row per running instance, refreshed every second: how many instances are alive, so each
 * enforces its share of a limit while Redis cannot count for the fleet (src/limits/instances.ts).
 */
export const migrationsOps: Record<string, Migration> = {
  '0021_ops_instance_heartbeats': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('instance_heartbeats')
        .addColumn('instance_id', 'text', (c) => c.primaryKey())
        .addColumn('seen_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};
/** Payment orders right through any reorg: the finality hold and one `seen` per sighting. */
export const migrationsFinality: Record<string, Migration> = {
  '0022_payments_finality': { up: (db: Kysely<any>) => paymentsFinalityMigration(db) },
};

/** A watch starts at its own block, which no scanner passes without it. */
export const migrationsWatchStart: Record<string, Migration> = {
  '0023_watch_start_height': {
    async up(db: Kysely<any>) {
      // Existing watches start before any block: they are in every registry already.
      await db.schema.alterTable('watched_addresses').addColumn('start_height', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      // The scanner's per-block question "which watches of this environment were added since I
      // last looked" is a seek on this index, whatever the number of watches.
      await db.schema.createIndex('watched_addresses_env_id').on('watched_addresses').columns(['network_environment_id', 'id']).execute();
    },
  },
};
/**
 * Two-factor sign-in for the cabinet. The TOTP secret sits on the login row (the one holding the
 * e-mail and password), and the other tables name a login by that row's key, the account id
 * while an account has one login: when logins become members, the second factor moves with them.
 */
export const migrationsCabinetTotp: Record<string, Migration> = {
  '0026_cabinet_totp': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('cabinet_logins').addColumn('totp_secret', 'text').execute();
      await db.schema.alterTable('cabinet_logins').addColumn('totp_pending', 'text').execute();
      await db.schema.alterTable('cabinet_logins').addColumn('totp_enabled_at', 'text').execute();
      await db.schema.alterTable('cabinet_logins').addColumn('totp_last_step', 'bigint').execute();
      // Only SHA-256 hashes: each code holds 50 random bits, so no slow hash is needed.
      await db.schema.createTable('cabinet_recovery_codes')
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addPrimaryKeyConstraint('cabinet_recovery_codes_pk', ['account_id', 'code_hash'])
        .execute();
      // A password (or link) accepted, the second step not yet: no session until it is.
      await db.schema.createTable('cabinet_sign_in_challenges')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('next', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createTable('cabinet_policies')
        .addColumn('account_id', 'integer', (c) => c.primaryKey())
        .addColumn('require_two_factor', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
};
/** The checkout page: the name customers see and where they go once paid. */
export const migrationsCheckout: Record<string, Migration> = {
  '0024_payments_checkout': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('payment_settings').addColumn('display_name', 'text').execute();
      await db.schema.alterTable('payment_settings').addColumn('redirect_url', 'text').execute();
    },
  },
};
/** Orders priced in a fiat currency (their locked rate) and the operator's rate table. */
export const migrationsFiat: Record<string, Migration> = {
  '0025_payments_fiat': { up: (db: Kysely<any>) => paymentsFiatMigration(db) },
};
/**
 * Members: an account's logins become rows of their own (id, role), the account's existing login
 * its first member and owner. What named a login by its account (sessions, links, recovery codes,
 * sign-in challenges) names the member now; API keys record the member who made them (none for
 * older keys, which act as the owner).
 */
export const migrationsCabinetMembers: Record<string, Migration> = {
  '0027_cabinet_members': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('cabinet_members')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text')
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        // Null while an invitation is not yet accepted.
        .addColumn('joined_at', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('totp_secret', 'text')
        .addColumn('totp_pending', 'text')
        .addColumn('totp_enabled_at', 'text')
        .addColumn('totp_last_step', 'bigint')
        .execute();
      await db.schema.createIndex('cabinet_members_account').on('cabinet_members').column('account_id').execute();
      // The TOTP keys are sealed with their row's name as AAD (`cabinet_logins:<account>:…`): they
      // are copied as they are and read with the old name until enrolled again (two-factor.ts).
      await sql`INSERT INTO cabinet_members (account_id, email, password_hash, role, created_at, joined_at, updated_at,
          totp_secret, totp_pending, totp_enabled_at, totp_last_step)
        SELECT account_id, email, password_hash, 'owner', updated_at, updated_at, updated_at,
          totp_secret, totp_pending, totp_enabled_at, totp_last_step
        FROM cabinet_logins ORDER BY account_id`.execute(db);
      for (const table of ['cabinet_sessions', 'cabinet_login_links', 'cabinet_recovery_codes', 'cabinet_sign_in_challenges']) {
        await db.schema.alterTable(table).addColumn('member_id', 'integer').execute();
        await sql`UPDATE ${sql.table(table)} SET member_id = (SELECT m.id FROM cabinet_members m WHERE m.account_id = ${sql.ref(`${table}.account_id`)})`.execute(db);
        // A session or link of an account without a login (a link made before it had an e-mail) has no member to be.
        await sql`DELETE FROM ${sql.table(table)} WHERE member_id IS NULL`.execute(db);
      }
      await db.schema.createIndex('cabinet_sessions_member').on('cabinet_sessions').column('member_id').execute();
      // A link that sets a password (an invitation, a reset) rather than signing in.
      await db.schema.alterTable('cabinet_login_links').addColumn('purpose', 'text', (c) => c.notNull().defaultTo('sign-in')).execute();
      await db.schema.dropTable('cabinet_logins').execute();
      await db.schema.alterTable('api_keys').addColumn('created_by_member', 'integer').execute();
    },
  },
};
/** Who changed what in an account, from the cabinet, the API or `rpcctl admin` (store/audit.ts writes it). */
export const migrationsAudit: Record<string, Migration> = {
  '0028_audit_log': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('audit_log')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('actor_kind', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('actor_label', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text')
        .addColumn('changes', 'text')
        .addColumn('ip', 'text')
        .execute();
      // The list pages back from the newest (account, id); retention deletes by age.
      await db.schema.createIndex('audit_log_account_id').on('audit_log').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('audit_log_created_at').on('audit_log').column('created_at').execute();
    },
  },
};
/**
 * Who holds a watch lives on the watch row, written only by watch/ (payments tell it through
 * calls). `payment_orders.owns_watch` stays for one release, kept in step by payments when the
 * merchant takes or gives back a watch (payments/holds.ts ownsWatch) and read only to know a
 * watch such an instance added for an order (it leaves `holder` at its default), so an instance
 * of the previous release running beside this one for a moment (a rolling upgrade) still finds
 * it true; the next release drops it.
 */
export const migrationsWatchHolder: Record<string, Migration> = {
  '0029_watch_holder': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('watched_addresses').addColumn('holder', 'text', (c) => c.notNull().defaultTo('merchant')).execute();
      await db.schema.alterTable('watched_addresses').addColumn('order_open', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('watched_addresses').addColumn('order_held', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      // What the orders said until now: an order that owns the watch makes it the orders'; open
      // and held (closed, funding not final) orders using it are its two uses.
      await sql`UPDATE watched_addresses SET holder = 'order' WHERE EXISTS (SELECT 1 FROM payment_orders o WHERE o.watch_id = watched_addresses.watch_id AND o.owns_watch = 1)`.execute(db);
      await sql`UPDATE watched_addresses SET order_open = 1 WHERE EXISTS (SELECT 1 FROM payment_orders o WHERE o.watch_id = watched_addresses.watch_id AND o.open = 1)`.execute(db);
      await sql`UPDATE watched_addresses SET order_held = 1 WHERE EXISTS (SELECT 1 FROM payment_orders o WHERE o.watch_id = watched_addresses.watch_id AND o.held = 1 AND o.open = 0)`.execute(db);
    },
  },
};
Object.assign(migrations, migrations11, migrations18, migrationsOps, migrationsFinality, migrationsWatchStart, migrationsCheckout, migrationsFiat, migrationsCabinetTotp, migrationsCabinetMembers, migrationsAudit, migrationsWatchHolder);

/**
 * Endpoint names unique within an account (the API answers 409 since). Duplicates made before
 * it are renamed, not refused: the oldest endpoint keeps the name, each later one becomes
 * `NAME-2`, `NAME-3`, ... (the first such name free in its account), and the account's audit
 * log says so (`endpoint.rename` by `migration 0030`), so the owner sees why a name changed.
 */
export const migrationsEndpointNames: Record<string, Migration> = {
  '0030_endpoint_names_unique': {
    async up(db: Kysely<any>) {
      const rows = await db.selectFrom('endpoints').select(['id', 'account_id', 'name']).orderBy('account_id').orderBy('id').execute() as Array<{ id: number; account_id: number; name: string }>;
      const taken = new Map<number, Set<string>>();
      for (const r of rows) {
        if (!taken.has(r.account_id)) taken.set(r.account_id, new Set());
        taken.get(r.account_id)!.add(r.name);
      }
      const seen = new Map<number, Set<string>>();
      const now = new Date().toISOString();
      for (const r of rows) {
        const mine = seen.get(r.account_id) ?? new Set<string>();
        seen.set(r.account_id, mine);
        if (!mine.has(r.name)) {
          mine.add(r.name);
          continue;
        }
        const names = taken.get(r.account_id)!;
        let n = 2;
        while (names.has(`${r.name}-${n}`)) n++;
        const name = `${r.name}-${n}`;
        names.add(name);
        mine.add(name);
        await db.updateTable('endpoints').set({ name, updated_at: now }).where('id', '=', r.id).execute();
        await db.insertInto('audit_log').values({
          account_id: r.account_id, created_at: now, actor_kind: 'admin', actor_id: 'migration', actor_label: 'migration 0030',
          action: 'endpoint.rename', target_type: 'endpoint', target_id: String(r.id),
          changes: JSON.stringify({ name, was: r.name, why: 'endpoint names are unique within an account' }), ip: null,
        }).execute();
      }
      await db.schema.createIndex('endpoints_account_name').on('endpoints').columns(['account_id', 'name']).unique().execute();
    },
  },
};
Object.assign(migrations, migrationsEndpointNames);

/**
 * An invitation no longer reserves its e-mail service-wide: one e-mail is one login among the
 * members who have joined (a partial unique index), and at most one row per account. So an
 * invitation of an e-mail that signs in elsewhere is stored and listed like any other, and the
 * difference shows only to the invitee, when they try to join (cabinet/join.ts).
 */
export const migrationsInvitationEmails: Record<string, Migration> = {
  '0031_member_email_joined_unique': {
    async up(db: Kysely<any>) {
      if (storeKindOf(db) === 'postgres') {
        await db.schema.alterTable('cabinet_members').dropConstraint('cabinet_members_email_key').execute();
      } else {
        // SQLite cannot drop a column's UNIQUE: the table is made again without it (nothing
        // references cabinet_members by a foreign key, so the copy keeps every id as it was).
        await db.schema.createTable('cabinet_members_0031')
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
          .addColumn('email', 'text', (c) => c.notNull())
          .addColumn('password_hash', 'text')
          .addColumn('role', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('joined_at', 'text')
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addColumn('totp_secret', 'text')
          .addColumn('totp_pending', 'text')
          .addColumn('totp_enabled_at', 'text')
          .addColumn('totp_last_step', 'bigint')
          .execute();
        const cols = 'id, account_id, email, password_hash, role, created_at, joined_at, updated_at, totp_secret, totp_pending, totp_enabled_at, totp_last_step';
        await sql`INSERT INTO cabinet_members_0031 (${sql.raw(cols)}) SELECT ${sql.raw(cols)} FROM cabinet_members`.execute(db);
        await db.schema.dropTable('cabinet_members').execute();
        await db.schema.alterTable('cabinet_members_0031').renameTo('cabinet_members').execute();
        await db.schema.createIndex('cabinet_members_account').on('cabinet_members').column('account_id').execute();
      }
      await db.schema.createIndex('cabinet_members_joined_email').on('cabinet_members').column('email').unique()
        .where(sql.ref('joined_at'), 'is not', null).execute();
      await db.schema.createIndex('cabinet_members_account_email').on('cabinet_members').columns(['account_id', 'email']).unique().execute();
    },
  },
};
Object.assign(migrations, migrationsInvitationEmails);

/**
 * A hit's fields in columns of their own: what payments (and later refunds and payouts, by
 * watch, address or direction) query through watch/events.ts `hitEvents`, never parsing the
 * webhook body. Existing events are filled from their body here. An instance of the previous
 * release, running beside this one during a rolling upgrade, still records events with the body
 * alone: an insert trigger fills their columns from it (the next release drops the trigger).
 */
const HIT_FIELDS = [
  ['tx_hash', 'tx_hash', 'text'], ['direction', 'direction', 'text'], ['address', 'address', 'text'], ['from', 'from_address', 'text'],
  ['to', 'to_address', 'text'], ['token', 'token', 'text'], ['amount', 'amount', 'text'], ['log_index', 'log_index', 'integer'],
] as const;

/** `column = <the body's field>, ...`: SQLite's json_extract of `body`, or PostgreSQL's ->> of the jsonb `b`. */
function hitColumnsFromBody(kind: 'sqlite' | 'postgres', body: string): string {
  return HIT_FIELDS.map(([field, column, type]) => {
    if (kind === 'sqlite') return `${column} = json_extract(${body}, '$.${field}')`;
    return `${column} = (${body} ->> '${field}')${type === 'integer' ? '::integer' : ''}`;
  }).join(', ');
}

export const migrationsHitColumns: Record<string, Migration> = {
  '0032_watch_event_hit_columns': {
    async up(db: Kysely<any>) {
      for (const [, column, type] of HIT_FIELDS) await db.schema.alterTable('watch_events').addColumn(column, type).execute();
      if (storeKindOf(db) === 'postgres') {
        await sql.raw(`UPDATE watch_events AS w SET ${hitColumnsFromBody('postgres', 's.b')}
          FROM (SELECT id, body::jsonb AS b FROM watch_events WHERE type <> 'block') AS s WHERE w.id = s.id`).execute(db);
        const assign = HIT_FIELDS.map(([field, column, type]) => `NEW.${column} := (b ->> '${field}')${type === 'integer' ? '::integer' : ''};`).join(' ');
        await sql.raw(`CREATE FUNCTION watch_events_hit_columns() RETURNS trigger LANGUAGE plpgsql AS $$
          DECLARE b jsonb := NEW.body::jsonb; BEGIN ${assign} RETURN NEW; END $$`).execute(db);
        await sql.raw(`CREATE TRIGGER watch_events_hit_columns BEFORE INSERT ON watch_events FOR EACH ROW
          WHEN (NEW.tx_hash IS NULL AND NEW.type <> 'block') EXECUTE FUNCTION watch_events_hit_columns()`).execute(db);
      } else {
        await sql.raw(`UPDATE watch_events SET ${hitColumnsFromBody('sqlite', 'body')} WHERE type <> 'block'`).execute(db);
        await sql.raw(`CREATE TRIGGER watch_events_hit_columns AFTER INSERT ON watch_events FOR EACH ROW
          WHEN NEW.tx_hash IS NULL AND NEW.type <> 'block'
          BEGIN UPDATE watch_events SET ${hitColumnsFromBody('sqlite', 'NEW.body')} WHERE id = NEW.id; END`).execute(db);
      }
    },
  },
};
Object.assign(migrations, migrationsHitColumns);

/**
 * Solana Pay orders (issue 33): paid to the merchant's one wallet (`payment_settings.wallet_solana`,
 * or the order's `address`) and told apart by `payment_orders.reference`, the fresh key the
 * customer's transaction names; null on orders at an address of their own.
 */
export const migrationsSolanaPay: Record<string, Migration> = {
  '0033_payment_references': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('payment_orders').addColumn('reference', 'text').execute();
      await db.schema.alterTable('payment_settings').addColumn('wallet_solana', 'text').execute();
    },
  },
};
Object.assign(migrations, migrationsSolanaPay);

/**
 * 0034: refunds and payouts (payouts/): a payout is a batch approved and cancelled as one, its
 * lines are the transfers, each with its own state machine; a refund is a payout of one line
 * with the order it refunds; a refund link lets the customer give the address once. The
 * approval threshold is a payment setting. One line per matched transfer event (the partial
 * unique index), so one transfer never completes two lines.
 */
export const migrationsPayouts: Record<string, Migration> = {
  '0034_payouts': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('payouts')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('payout_id', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('order_pk', 'integer', (c) => c.references('payment_orders.id'))
        .addColumn('refund_amount', 'text')
        .addColumn('webhook_url', 'text')
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_by_label', 'text', (c) => c.notNull())
        .addColumn('created_role', 'text', (c) => c.notNull())
        .addColumn('approval', 'text', (c) => c.notNull())
        .addColumn('approval_reason', 'text')
        .addColumn('approved_by', 'text')
        .addColumn('approved_by_label', 'text')
        .addColumn('approved_at', 'text')
        .addColumn('fiat_total', 'text')
        .addColumn('fiat_currency', 'text')
        .addColumn('canceled_at', 'text')
        .addColumn('psbt_coins', 'text')
        .addColumn('psbt_change_indexes', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('payouts_account').on('payouts').columns(['account_id', 'kind', 'id']).execute();
      await db.schema.createIndex('payouts_order').on('payouts').columns(['order_pk', 'id']).execute();
      await db.schema.createTable('payout_lines')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('payout_pk', 'integer', (c) => c.notNull().references('payouts.id'))
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('line_no', 'integer', (c) => c.notNull())
        .addColumn('network_environment_id', 'integer', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('asset', 'text', (c) => c.notNull())
        .addColumn('decimals', 'integer', (c) => c.notNull())
        .addColumn('address', 'text')
        .addColumn('address_key', 'text')
        .addColumn('amount_raw', 'text', (c) => c.notNull())
        .addColumn('price_amount', 'text')
        .addColumn('price_currency', 'text')
        .addColumn('rate', 'text')
        .addColumn('rate_source', 'text')
        .addColumn('rate_at', 'text')
        .addColumn('reference', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('lifecycle', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('watch_id', 'text')
        .addColumn('expected_tx', 'text')
        .addColumn('tx_hash', 'text')
        .addColumn('event_id', 'bigint')
        .addColumn('block_height', 'bigint')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('payout_lines_line', ['payout_pk', 'line_no'])
        .execute();
      // The engine's passes look at the lines of a few statuses (awaiting_payment, sent).
      await db.schema.createIndex('payout_lines_status').on('payout_lines').columns(['status', 'id']).execute();
      await db.schema.createIndex('payout_lines_event').on('payout_lines').column('event_id').unique()
        .where(sql.ref('event_id'), 'is not', null).execute();
      await db.schema.createIndex('payout_lines_watch').on('payout_lines').column('watch_id').execute();
      await db.schema.createTable('refund_links')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('payout_pk', 'integer', (c) => c.notNull().unique().references('payouts.id'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('claimed_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('payment_settings').addColumn('payouts_approval_over', 'text').execute();
      await db.schema.alterTable('payment_settings').addColumn('payouts_approval_currency', 'text').execute();
    },
  },
};
Object.assign(migrations, migrationsPayouts);

/**
 * 0035: every signed transaction recorded for a payout line (a replacement keeps the one it
 * replaces: either may confirm), with what each spends, so a second transaction is taken only
 * when it conflicts with every one recorded (payouts/submit.ts).
 */
export const migrationsPayoutReplacements: Record<string, Migration> = {
  '0035_payout_recorded_txs': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('payout_lines').addColumn('recorded_txs', 'text').execute();
    },
  },
};
Object.assign(migrations, migrationsPayoutReplacements);

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
