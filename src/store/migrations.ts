import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

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
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
