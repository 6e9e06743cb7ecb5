import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { paymentsMigration } from '../payments/migration.js';

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
Object.assign(migrations, migrations11);

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
