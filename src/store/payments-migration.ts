import { sql, type Kysely } from 'kysely';

/** `0012_payments`: payment orders, their funding, settings, the AML queue and the sanctions list. */
export async function paymentsMigration(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('payment_orders')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('payment_id', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('network_environment_id', 'integer', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('asset', 'text', (c) => c.notNull())
    .addColumn('decimals', 'integer', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('address_key', 'text', (c) => c.notNull())
    .addColumn('derivation_index', 'integer')
    .addColumn('watch_id', 'text', (c) => c.notNull())
    .addColumn('owns_watch', 'integer', (c) => c.notNull())
    .addColumn('amount_raw', 'text', (c) => c.notNull())
    .addColumn('received_raw', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('late', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('overpaid', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lifecycle', 'text', (c) => c.notNull())
    .addColumn('aml', 'text')
    .addColumn('seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('expires_ms', 'bigint', (c) => c.notNull())
    .addColumn('monitor_until_ms', 'bigint', (c) => c.notNull())
    .addColumn('open', 'integer', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('metadata', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('payment_orders_order_id', ['account_id', 'order_id'])
    .execute();
  // One open order per address and network: a payment to it must belong to exactly one order.
  await db.schema.createIndex('payment_orders_open_address').on('payment_orders')
    .columns(['network_environment_id', 'address_key']).unique().where(sql.ref('open'), '=', 1).execute();
  await db.schema.createIndex('payment_orders_account').on('payment_orders').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('payment_orders_watch').on('payment_orders').columns(['watch_id', 'open']).execute();
  await db.schema.createIndex('payment_orders_status').on('payment_orders').columns(['status', 'expires_ms']).execute();

  await db.schema.createTable('payment_funding')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('order_pk', 'integer', (c) => c.notNull())
    .addColumn('event_id', 'integer', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text')
    .addColumn('amount_raw', 'text', (c) => c.notNull())
    .addColumn('block_height', 'integer', (c) => c.notNull())
    .addColumn('counted', 'integer', (c) => c.notNull())
    .addColumn('late', 'integer', (c) => c.notNull())
    .addColumn('removed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('payment_funding_event', ['order_pk', 'event_id'])
    .execute();
  await db.schema.createIndex('payment_funding_event_id').on('payment_funding').column('event_id').execute();

  // Transfers seen in blocks not yet confirmed: their `seen` went out before the scanner records them.
  await db.schema.createTable('payment_sightings')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('order_pk', 'integer', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('seen_ms', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('payment_sightings_tx', ['order_pk', 'tx_hash'])
    .execute();

  await db.schema.createTable('payment_settings')
    .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('xpub_evm', 'text')
    .addColumn('next_index_evm', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('aml_fail_at', 'text', (c) => c.notNull())
    .addColumn('underpaid_tolerance_bps', 'integer', (c) => c.notNull())
    .addColumn('accept_late', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema.createTable('aml_jobs')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('order_pk', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_ms', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('aml_jobs_due').on('aml_jobs').columns(['status', 'next_attempt_ms']).execute();

  await db.schema.createTable('aml_sanctions')
    .addColumn('address_key', 'text', (c) => c.primaryKey())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('loaded_at', 'text', (c) => c.notNull())
    .execute();

  // Payment orders feed on Address Watch events by watch; their deliveries go out in order.
  await db.schema.createIndex('watch_events_watch').on('watch_events').columns(['watch_id', 'id']).execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('sequence_key', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('target_url', 'text').execute();
  await db.schema.createIndex('webhook_deliveries_sequence').on('webhook_deliveries').columns(['sequence_key', 'status', 'id']).execute();
}

/**
 * `0022_payments_finality`: an order keeps its watch after it closes until its
 * funding is final (`held`); an environment may set its own finality depth; and a sighting
 * (one `seen` per funding transaction) can be taken off by a reorg, which frees its key for the
 * same transaction in a new block.
 */
export async function paymentsFinalityMigration(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('payment_orders').addColumn('held', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // The engine reads the held orders every tick: only those are in the index.
  await db.schema.createIndex('payment_orders_held').on('payment_orders').column('id').where(sql.ref('held'), '=', 1).execute();
  await db.schema.alterTable('network_environments').addColumn('finality_depth', 'integer').execute();
  // The old table's unique (order_pk, tx_hash) cannot be dropped on SQLite (an autoindex): the
  // table is made again with the key as a partial unique index over the sightings still on the chain.
  await db.schema.createTable('payment_sightings_0022')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('order_pk', 'integer', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('seen_ms', 'bigint', (c) => c.notNull())
    .addColumn('removed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`INSERT INTO payment_sightings_0022 (order_pk, tx_hash, seen_ms, removed) SELECT order_pk, tx_hash, seen_ms, 0 FROM payment_sightings ORDER BY id`.execute(db);
  await db.schema.dropTable('payment_sightings').execute();
  await db.schema.alterTable('payment_sightings_0022').renameTo('payment_sightings').execute();
  await db.schema.createIndex('payment_sightings_live').on('payment_sightings')
    .columns(['order_pk', 'tx_hash']).unique().where(sql.ref('removed'), '=', 0).execute();
}

/** `0025_payments_fiat`: an order's fiat price and the rate locked at creation; the operator's rate table. */
export async function paymentsFiatMigration(db: Kysely<any>): Promise<void> {
  // All null on orders priced in the asset (every order before this migration).
  for (const column of ['price_amount', 'price_currency', 'rate', 'rate_source', 'rate_at']) {
    await db.schema.alterTable('payment_orders').addColumn(column, 'text').execute();
  }
  await db.schema.createTable('payment_rates')
    .addColumn('asset', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('rate', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('payment_rates_pair', ['asset', 'currency'])
    .execute();
}
