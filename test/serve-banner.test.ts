import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { firstSteps, withoutPassword } from '../src/cli/serve/run.js';
import { testConfig } from './helpers/service.js';
import { freshSchema, testDatabaseUrl } from './helpers/shared-stores.js';
import { itUnless } from './helpers/skips.js';

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

  it('PostgreSQL: a password given as a query parameter (as pg-connection-string accepts it) is masked too', () => {
    const url = 'postgres://rpcctl@db.internal:5432/rpcctl?password=s3cret&sslmode=require&sslpassword=k3ypass&sslkey=/etc/rpcctl/client.key';
    const text = firstSteps(service('postgres', ['starter']), {}, url).join('\n');
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain('k3ypass');
    expect(text).toContain("--database 'postgres://rpcctl@db.internal:5432/rpcctl?password=****&sslmode=require&sslpassword=****&sslkey=/etc/rpcctl/client.key'");
    expect(text).toContain('put the database password in place of ****');
  });

  it('withoutPassword: every spelling of a password is masked, and a URL without one is printed as given', () => {
    const cases: Array<[string, string]> = [
      ['postgres://u:pw@h/db?options=-c%20a', 'postgres://u:****@h/db?options=-c%20a'],
      ['postgres://u@h/db?pass%77ord=pw', 'postgres://u@h/db?pass%77ord=****'],
      ['postgres://u@h/db?a=1&password', 'postgres://u@h/db?a=1&password=****'],
      // pg-connection-string reads `@/` with a host parameter (a Unix socket): WHATWG URL refuses it.
      ['postgres://u:pw@/db?host=/var/run/postgresql', 'postgres://u:****@/db?host=/var/run/postgresql'],
      ['postgres://u@h/db?sslmode=require', 'postgres://u@h/db?sslmode=require'],
      ['/var/run/postgresql rpcctl', '/var/run/postgresql rpcctl'],
    ];
    for (const [url, printed] of cases) expect(withoutPassword(url)).toBe(printed);
    expect(withoutPassword('postgres://u:p w%zz@h:bad/db')).not.toContain('p w');
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

  itUnless(!testDatabaseUrl && 'set RPCCTL_TEST_DATABASE_URL', `a real serve on PostgreSQL prints admin commands that reach its database${testDatabaseUrl ? '' : ' (skipped: set RPCCTL_TEST_DATABASE_URL)'}`, async () => {
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
