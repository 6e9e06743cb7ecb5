import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUsage, utcDay } from '../src/store/index.js';
import { cli, tempConfigDir, type CliRunOptions } from './helpers/cli.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let m: Merchant;
let env: Record<string, string>;
const today = utcDay(Date.now());
const daysAgo = (n: number) => utcDay(Date.now() - n * 86_400_000);
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

/** As the merchant, through environment credentials (the script way). */
const as = (args: string[], opts: CliRunOptions = {}) => cli(args, { ...opts, env: { ...env, ...opts.env } });

beforeAll(async () => {
  t = await startTestService();
  m = await t.merchant({ plan: 'pro' });
  env = { PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir() };
});
afterAll(() => t.stop());

describe('account, networks', () => {
  it('account: fields on a TTY, tab-separated when piped, the API object with --json', async () => {
    const tty = await as(['account'], { tty: true });
    expect(tty.code).toBe(0);
    expect(plain(tty.stdout)).toMatch(/plan\s+Pro \(pro\)/);
    expect(plain(tty.stdout)).toMatch(/credits used\s+0 of \d+ \(0 %\)/);
    expect(tty.stdout).toContain('\x1b['); // bold labels on a terminal

    const piped = await as(['account']);
    expect(piped.stdout).toContain(`account\t${m.userId}\n`);
    expect(piped.stdout).not.toContain('\x1b[');

    const json = await as(['account', '--json']);
    const body = JSON.parse(json.stdout);
    expect(body).toMatchObject({ user_id: m.userId, plan: { slug: 'pro' }, usage: { requests: 0 } });
    expect(body.ok).toBeUndefined();
  });

  it('NO_COLOR and --no-color turn colour off on a TTY', async () => {
    expect((await as(['account'], { tty: true, env: { NO_COLOR: '1' } })).stdout).not.toContain('\x1b[');
    expect((await as(['account', '--no-color'], { tty: true })).stdout).not.toContain('\x1b[');
  });

  it('networks lists what the plan allows', async () => {
    const r = await as(['networks']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(lines.find((l) => l[0] === 'eth')).toEqual(['eth', 'Ethereum', '1', expect.stringContaining('mainnet')]);
    const json = JSON.parse((await as(['networks', '--json'])).stdout);
    expect(json.networks.map((n: { slug: string }) => n.slug)).toContain('eth');
    expect(json).toHaveProperty('network_limit');
  });
});

describe('endpoints', () => {
  let id: number;

  it('create by slugs prints the URL; by environment id; bad forms are usage errors', async () => {
    const r = await as(['endpoints', 'create', '--name', 'main', '--network', 'eth', '--env', 'mainnet']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^http:\/\/rpc-eth-mainnet\.[^/]+\/[0-9a-f-]{36}$/);
    const json = JSON.parse((await as(['endpoints', 'create', '--name', 'second', '--environment-id', '1', '--json'])).stdout);
    expect(json).toMatchObject({ name: 'second', network_environment_id: 1, status: 'active' });
    id = json.id;

    const both = await as(['endpoints', 'create', '--name', 'x', '--network', 'eth', '--env', 'mainnet', '--environment-id', '1']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('either --network and --env, or --environment-id');
    const unknown = await as(['endpoints', 'create', '--name', 'x', '--network', 'nope', '--env', 'mainnet']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/network "nope" is not available on your plan \(available: .*eth/);
    const badEnv = await as(['endpoints', 'create', '--name', 'x', '--network', 'eth', '--env', 'moon']);
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('env_slug: "moon" is not an environment of eth (one of: mainnet');
  });

  it('list: table on a TTY (bold, not red, headers), rows when piped, array with --json', async () => {
    const tty = await as(['endpoints', 'list'], { tty: true });
    expect(tty.stdout).toMatch(/ID.*NAME.*NETWORK.*STATUS.*URL/);
    expect(tty.stdout).toContain('\x1b[1mID\x1b[22m');
    expect(tty.stdout).not.toContain('\x1b[31m');
    const piped = await as(['endpoints', 'ls']);
    const rows = piped.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows).toHaveLength(2);
    expect(rows[1]).toEqual([String(id), 'second', 'eth-mainnet', 'active', 'any', expect.stringMatching(/^http:\/\/rpc-eth-mainnet\./)]);
    const json = JSON.parse((await as(['endpoints', 'list', '--json'])).stdout);
    expect(json.map((e: { name: string }) => e.name)).toEqual(['main', 'second']);
  });

  it('get by id, uuid or name; unknown is an error', async () => {
    const byId = JSON.parse((await as(['endpoints', 'get', String(id), '--json'])).stdout);
    const byUuid = JSON.parse((await as(['endpoints', 'get', byId.uuid, '--json'])).stdout);
    const byName = JSON.parse((await as(['endpoints', 'get', 'second', '--json'])).stdout);
    expect(byUuid.id).toBe(id);
    expect(byName.id).toBe(id);
    const piped = await as(['endpoints', 'get', 'second']);
    expect(piped.stdout).toContain(`uuid\t${byId.uuid}\n`);
    const missing = await as(['endpoints', 'get', '99999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('endpoint 99999 not found');
    expect((await as(['endpoints', 'get', 'nobody'])).stderr).toContain('no endpoint with id, uuid or name "nobody"');
  });

  it('pause and resume', async () => {
    expect(JSON.parse((await as(['endpoints', 'pause', 'second', '--json'])).stdout).status).toBe('paused');
    const tty = await as(['ep', 'resume', String(id)], { tty: true, env: { NO_COLOR: '1' } });
    expect(tty.stderr).toContain(`Endpoint ${id} (second) is active.`);
    expect(JSON.parse((await as(['endpoints', 'get', String(id), '--json'])).stdout).status).toBe('active');
  });

  it('allowlist: set, add and remove read-modify-write the whole list; clear needs --yes in scripts', async () => {
    expect((await as(['endpoints', 'allowlist', 'set', String(id), '10.0.0.1', '10.0.0.2'])).stdout).toBe('10.0.0.1\n10.0.0.2\n');
    const added = await as(['endpoints', 'allowlist', 'add', String(id), '10.0.0.3', '10.0.0.1']);
    expect(added.stdout).toBe('10.0.0.1\n10.0.0.2\n10.0.0.3\n');
    // The test service is this machine's: its own calls are now refused, and the CLI says so.
    expect(added.stderr).toContain(`Warning: this machine (127.0.0.1) is not on the list: its own calls to endpoint ${id} (second) are now refused (HTTP 403). Add it with: rpcctl endpoints allowlist add ${id} 127.0.0.1`);
    const withLoopback = await as(['endpoints', 'allowlist', 'add', String(id), '127.0.0.1']);
    expect(withLoopback.stderr).not.toContain('Warning');
    expect((await as(['endpoints', 'allowlist', 'remove', String(id), '127.0.0.1'])).stderr).toContain('Warning: this machine');
    expect((await as(['endpoints', 'allowlist', 'remove', 'second', '10.0.0.2'])).stdout).toBe('10.0.0.1\n10.0.0.3\n');
    expect(JSON.parse((await as(['endpoints', 'allowlist', String(id), '--json'])).stdout)).toMatchObject({ id, name: 'second', allowed_ips: ['10.0.0.1', '10.0.0.3'] });
    const absent = await as(['endpoints', 'allowlist', 'remove', String(id), '10.9.9.9']);
    expect(absent.stderr).toContain(`Not on the list of endpoint ${id}: 10.9.9.9`);
    expect(absent.stdout).toBe('10.0.0.1\n10.0.0.3\n');

    const bad = await as(['endpoints', 'allowlist', 'add', String(id), '10.0.0.0/8']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not an IPv4 or IPv6 address: 10.0.0.0/8');

    const unconfirmed = await as(['endpoints', 'allowlist', 'clear', String(id)]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('add --yes to confirm');
    expect(JSON.parse((await as(['endpoints', 'get', String(id), '--json'])).stdout).allowed_ips).toHaveLength(2);

    const cleared = await as(['endpoints', 'allowlist', 'clear', String(id), '--yes']);
    expect(cleared.code).toBe(0);
    expect(cleared.stderr).toContain('accepts calls from any IP');
    expect(JSON.parse((await as(['endpoints', 'get', String(id), '--json'])).stdout).allowed_ips).toEqual([]);
  });

  it('the API error text reaches stderr (exit 1), e.g. the plan limit', async () => {
    const free = await t.merchant({ plan: 'free' });
    const freeEnv = { PUBLIC_API_KEY: free.apiKey, PUBLIC_API_SECRET: free.secret };
    expect((await as(['endpoints', 'create', '--name', 'a', '--environment-id', '1'], { env: freeEnv })).code).toBe(0);
    const r = await as(['endpoints', 'create', '--name', 'b', '--environment-id', '1'], { env: freeEnv });
    expect(r.code).toBe(1);
    const api = await free.call('POST', '/v1/endpoints', '{"name":"c","network_environment_id":1}');
    expect(r.stderr).toBe(`error: ${api.body.error}\n`);
  });
});

describe('usage', () => {
  let epId: number;
  beforeAll(async () => {
    const u = await t.merchant({ plan: 'pro' });
    env = { ...env, PUBLIC_API_KEY: u.apiKey, PUBLIC_API_SECRET: u.secret };
    epId = JSON.parse((await as(['endpoints', 'create', '--name', 'busy', '--environment-id', '1', '--json'])).stdout).id;
    await addUsage(t.store, [
      { account_id: u.userId, endpoint_id: epId, day: today, method: 'eth_call', requests: 3, credits: 78 },
      { account_id: u.userId, endpoint_id: epId, day: daysAgo(3), method: 'eth_blockNumber', requests: 50, credits: 500 },
      { account_id: u.userId, endpoint_id: 0, day: today, method: 'webhook:payment', requests: 1, credits: 30 },
    ]);
  });

  it('totals and the per-method table; account usage includes webhook credits, endpoint usage does not', async () => {
    const all = await as(['usage', '--days', '7']);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('requests\t54\ncredits\t608\n');
    expect(all.stdout).toContain('eth_blockNumber\t50\t500\n');
    expect(all.stdout).toContain(`from\t${daysAgo(6)}\nto\t${today}\n`);
    const one = await as(['usage', '--endpoint', 'busy']);
    expect(one.stdout).toContain('requests\t53\ncredits\t578\n');
    const viaEndpoints = JSON.parse((await as(['endpoints', 'usage', String(epId), '--days', '90', '--json'])).stdout);
    expect(viaEndpoints).toMatchObject({ days: 90, total_requests: 53, total_credits: 578 });
    expect(viaEndpoints.series).toHaveLength(90);
  });

  it('--days accepts only 7, 30 or 90 (usage error)', async () => {
    const r = await as(['usage', '--days', '14']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Allowed choices are 7, 30, 90');
  });

  it('--chart draws requests and credits with date labels, fitted to the terminal width', async () => {
    const r = await as(['usage', '--days', '90', '--chart'], { tty: true, columns: 60, env: { NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/requests per 2 days/);
    expect(r.stdout).toMatch(/credits per 2 days/);
    const lines = r.stdout.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    // The x axis names the first bucket's and the last bucket's start day.
    const axis = lines.filter((l) => /^\s+\d\d-\d\d/.test(l));
    expect(axis).toHaveLength(2);
    expect(axis[0]).toContain(daysAgo(89).slice(5));
    // Fixed height: 8 rows of plot per chart plus the top label row.
    const chartRows = lines.filter((l) => /[┤┼]/.test(l));
    expect(chartRows).toHaveLength(18);

    const week = await as(['endpoints', 'usage', 'busy', '--days', '7', '--chart'], { tty: true, columns: 100, env: { NO_COLOR: '1' } });
    expect(week.stdout).toContain('requests per day');
    expect(week.stdout).toContain(daysAgo(6).slice(5));
    expect(week.stdout).toContain(today.slice(5));
  });
});
