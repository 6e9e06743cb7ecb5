import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { firstSteps } from '../src/cli/serve-run.js';
import { testConfig } from './helpers/service.js';
import { freshSchema, testDatabaseUrl } from './helpers/shared-stores.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const service = (kind: string, plans: string[]) => ({ apiUrl: 'http://127.0.0.1:8080', store: { kind, catalog: { plans: plans.map((slug) => ({ slug })) } } });

/** The start banner's first steps must reach the store the service uses, with a plan it has. */
describe('rpcctl serve: first steps in the banner', () => {
  it('PostgreSQL: admin gets the service\'s --database (password masked), no local init, and a plan the config has', () => {
    const lines = firstSteps(service('postgres', ['starter', 'scale']), { config: 'rpcctl.yaml' }, 'postgres://rpcctl:s3cret@db.internal:5432/rpcctl?options=-c%20search_path%3Drpcctl');
    const text = lines.join('\n');
    expect(text).toContain("  rpcctl admin accounts create --plan starter --config rpcctl.yaml --database 'postgres://rpcctl:****@db.internal:5432/rpcctl?options=-c%20search_path%3Drpcctl'");
    expect(text).toContain("  rpcctl admin keys create --account 1 --config rpcctl.yaml --database 'postgres://rpcctl:****@db.internal:5432/rpcctl?options=-c%20search_path%3Drpcctl'");
    expect(text).toContain('put the database password in place of ****');
    expect(text).not.toContain('s3cret');
    // init --local writes a local SQLite store and profile: no use to a shared fleet.
    expect(text).not.toContain('init --local');
    expect(text).not.toContain('--plan free');
  });

  it('SQLite: the data dir, init --local, and `free` when the config has it', () => {
    const text = firstSteps(service('sqlite', ['pro', 'free']), { dataDir: '/srv/rpcctl' }, undefined).join('\n');
    expect(text).toContain('  rpcctl init --local --data-dir /srv/rpcctl');
    expect(text).toContain('  rpcctl admin accounts create --plan free --data-dir /srv/rpcctl');
    expect(text).not.toContain('--database');
  });

  it('no plans in the config: says so instead of naming one', () => {
    const text = firstSteps(service('postgres', []), {}, 'postgres://db/rpcctl').join('\n');
    expect(text).toContain('The config has no plans');
    expect(text).not.toContain('--plan');
  });

  it.skipIf(!testDatabaseUrl)(`a real serve on PostgreSQL prints admin commands that reach its database${testDatabaseUrl ? '' : ' (skipped: set RPCCTL_TEST_DATABASE_URL)'}`, async () => {
    const schema = await freshSchema();
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-banner-'));
    try {
      const configFile = join(dir, 'config.json');
      writeFileSync(configFile, JSON.stringify(testConfig({
        plans: [{ id: 1, slug: 'team', name: 'Team', included_credits: 1000, rps_limit: 10, endpoints_limit: 5 }],
      })));
      const env = { RPCCTL_MASTER_KEY: 'd4'.repeat(32), RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '', HOME: dir, RPCCTL_CONFIG_DIR: dir, RPCCTL_DATA_DIR: join(dir, 'admin-data') };
      const proc = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dir, '--database', schema.url], { reject: false, all: true, env });
      let out = '';
      await new Promise<void>((resolve, reject) => {
        proc.all!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('admin keys create')) resolve();
        });
        void proc.then(() => reject(new Error(`serve exited early:\n${out}`)));
      });
      proc.kill('SIGTERM');
      await proc;
      const create = out.split('\n').find((l) => l.includes('admin accounts create'))!;
      expect(create).toContain('--plan team');
      expect(create).toContain(`--database '${schema.url}'`);
      // What the banner says must work: it reaches the database the service uses.
      const args = create.trim().split(' ').slice(1).map((a) => a.replace(/^'(.*)'$/, '$1'));
      const made = await execa(process.execPath, [bin, ...args], { reject: false, env });
      expect(made.exitCode, `${made.stdout}${made.stderr}`).toBe(0);
      const listed = await execa(process.execPath, [bin, 'admin', '--database', schema.url, 'accounts', 'list'], { reject: false, env });
      expect(listed.stdout).toContain('team');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await schema.drop();
    }
  });
});
