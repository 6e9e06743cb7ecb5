import { resolve } from 'node:path';
import { defaultDataDir, findConfigFile, loadConfig } from '../../config/index.js';
import { storeUrl } from '../../store/index.js';
import { isPostgresUrl } from '../../store/dialect.js';
import { backupSqlite, migrationStatus, StoreMaintenanceError } from '../../store/maintenance.js';
import { CliError, usageError, type CliIO } from '../io.js';
import { Output } from '../output.js';
import { withStore, type AdminOptions } from './run.js';

type Opts = AdminOptions & { json?: boolean; color?: boolean; check?: boolean; file?: string } & Record<string, unknown>;

/** Which store the service uses, without opening it (opening migrates). */
function where(io: CliIO, opts: Opts): { dataDir: string; url: string | undefined } {
  const dataDir = opts.dataDir ?? defaultDataDir(io.env);
  const config = loadConfig(findConfigFile(dataDir, opts.config));
  return { dataDir, url: storeUrl(opts.database, config, io.env) };
}

function maintenanceErrors<T>(fn: () => Promise<T>): Promise<T> {
  return fn().catch((err: unknown) => {
    if (err instanceof StoreMaintenanceError) throw err.code === 'E_TARGET_EXISTS' ? usageError(err.message) : new CliError(err.message);
    throw err;
  });
}

/** `rpcctl admin backup FILE`: a consistent copy of the live SQLite store. */
export async function backup(io: CliIO, opts: Opts): Promise<void> {
  const out = new Output(io, opts);
  const { dataDir, url } = where(io, opts);
  if (isPostgresUrl(url)) {
    // A usage error: this command copies the embedded store; PostgreSQL has its own tool.
    throw usageError('the store is PostgreSQL: back it up with pg_dump, e.g. pg_dump --format=custom --file rpcctl.dump "$RPCCTL_DATABASE_URL" (rpcctl admin backup copies the SQLite store only)');
  }
  const target = resolve(String(opts.file));
  const { bytes } = await maintenanceErrors(async () => backupSqlite(dataDir, target));
  if (out.json) return out.printJson({ file: target, bytes });
  out.print(target);
  // The copy is useless without the key its secrets are sealed with.
  out.note(`Copied the store (${bytes} bytes). Keep master.key from ${dataDir} (or RPCCTL_MASTER_KEY) with it: the secrets in the copy are sealed with that key.`);
}

/**
 * `rpcctl admin migrate`: apply pending migrations (as `serve` does at start), so a rolling
 * upgrade can migrate once before instances restart; `--check` lists them and applies nothing,
 * exiting 1 when there are any.
 */
export async function migrate(io: CliIO, opts: Opts): Promise<void> {
  const out = new Output(io, opts);
  const store = where(io, opts);
  const before = await maintenanceErrors(() => migrationStatus(store));
  if (before.unknown.length) {
    out.note(`warning: the store has migrations this version does not know (a newer version ran them): ${before.unknown.join(', ')}`);
  }
  if (opts.check) {
    if (out.json) out.printJson(before);
    else if (before.pending.length) for (const name of before.pending) out.print(name);
    if (!before.pending.length) {
      if (!out.json) out.note('No pending migrations: the store is up to date for this version.');
      return;
    }
    if (!out.json) out.note(`${before.pending.length} pending migration(s); nothing was applied. Apply: rpcctl admin migrate (or start this version's serve).`);
    throw new CliError('', 1);
  }
  // Store.open migrates under the same lock serve takes.
  await withStore(io, opts, async () => {});
  const after = await migrationStatus(store);
  const applied = before.pending.filter((n) => !after.pending.includes(n));
  if (out.json) return out.printJson({ applied, pending: after.pending });
  for (const name of applied) out.print(name);
  out.note(applied.length ? `Applied ${applied.length} migration(s).` : 'No pending migrations: the store is up to date for this version.');
}
