import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, scriptedPrompter, tempConfigDir, type CliRunOptions } from './helpers/cli.js';
import { signedCall, startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let m: Merchant;
let env: Record<string, string>;
const as = (args: string[], opts: CliRunOptions = {}) => cli(args, { ...opts, env: { ...env, ...opts.env } });
const admin = (args: string[], opts: CliRunOptions = {}) => cli(['admin', ...args, '--data-dir', t.dataDir], opts);

beforeAll(async () => {
  t = await startTestService();
  m = await t.merchant({ plan: 'pro' });
  env = { PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir(), NO_COLOR: '1' };
});
afterAll(() => t.stop());

describe('endpoint names', () => {
  it('a name in use is refused by the service (409) in one round trip, the rename named; rename to a name in use is refused too (PATCH /v1/endpoints/{id})', async () => {
    const made = await as(['endpoints', 'create', '--name', 'dup', '--network', 'eth', '--env', 'mainnet', '--json']);
    expect(made.code, made.stderr).toBe(0);
    const first = JSON.parse(made.stdout) as { id: number };
    const again = await as(['endpoints', 'create', '--name', 'dup', '--network', 'eth', '--env', 'mainnet']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`error: name: an endpoint named "dup" exists already (id ${first.id}); names are unique within an account: choose another, or rename that one (rpcctl endpoints rename ${first.id} NEW_NAME)\n`);
    // The API and the cabinet refuse it too: the rule is the service's, not the CLI's.
    const direct = await signedCall(t.baseUrl, m.apiKey, m.secret, 'POST', '/v1/endpoints', JSON.stringify({ network_slug: 'eth', env_slug: 'mainnet', name: 'dup' }));
    expect(direct.status).toBe(409);
    const second = JSON.parse((await as(['endpoints', 'create', '--name', 'dup-x', '--network', 'eth', '--env', 'mainnet', '--json'])).stdout) as { id: number };
    const clash = await as(['endpoints', 'rename', String(second.id), 'dup']);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/an endpoint named "dup" exists already/);

    const renamed = await as(['endpoints', 'rename', String(second.id), 'dup-2', '--json']);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(JSON.parse(renamed.stdout)).toMatchObject({ id: second.id, name: 'dup-2' });
    expect((await as(['endpoints', 'get', 'dup'])).code).toBe(0); // the name picks one endpoint again

    const api = await signedCall(t.baseUrl, m.apiKey, m.secret, 'PATCH', `/v1/endpoints/${second.id}`, JSON.stringify({ name: '  ' }));
    expect(api.status).toBe(400);
    expect(JSON.stringify(api.body)).toContain('name');
    const unknown = await signedCall(t.baseUrl, m.apiKey, m.secret, 'PATCH', `/v1/endpoints/${second.id}`, JSON.stringify({ name: 'x', status: 'paused' }));
    expect(unknown.status).toBe(400);
    expect((await signedCall(t.baseUrl, m.apiKey, m.secret, 'PATCH', '/v1/endpoints/999999', JSON.stringify({ name: 'x' }))).status).toBe(404);
  });
});

describe('asking before what opens or breaks things', () => {
  it('removing the last allowed IP asks (it opens the endpoint to every IP); --yes in scripts', async () => {
    const { stdout } = await as(['endpoints', 'create', '--name', 'guarded', '--network', 'eth', '--env', 'mainnet', '--json']);
    const id = String((JSON.parse(stdout) as { id: number }).id);
    expect((await as(['endpoints', 'allowlist', 'set', id, '10.0.0.1', '10.0.0.2'])).code).toBe(0);
    expect((await as(['endpoints', 'allowlist', 'remove', id, '10.0.0.2'])).code).toBe(0); // one left: no question

    const scripted = await as(['endpoints', 'allowlist', 'remove', id, '10.0.0.1']);
    expect(scripted.code).toBe(2);
    expect(scripted.stderr).toContain('add --yes to confirm');
    const declined = scriptedPrompter([{ match: /removes the last allowed IP: endpoint \d+ \(guarded\) will accept calls from any IP/, answer: false }]);
    expect((await as(['endpoints', 'allowlist', 'remove', id, '10.0.0.1'], { tty: true, prompter: declined })).code).toBe(1);
    expect((await as(['endpoints', 'allowlist', id])).stdout).toBe('10.0.0.1\n');
    expect((await as(['endpoints', 'allowlist', 'rm', id, '10.0.0.1', '--yes'])).code).toBe(0);
    expect((await as(['endpoints', 'allowlist', id])).stdout).toBe('');
  });

  it('admin keys revoke and webhook-secret --rotate confirm on a terminal and take --yes', async () => {
    const other = await t.merchant({ plan: 'free' });
    const prefix = other.apiKey.slice(0, 8);
    const scripted = await admin(['keys', 'revoke', prefix]);
    expect(scripted.code).toBe(2);
    expect(scripted.stderr).toContain('add --yes to confirm');
    const no = scriptedPrompter([{ match: new RegExp(`Revoke key ${prefix} of account ${other.userId}\\?`), answer: false }]);
    expect((await admin(['keys', 'revoke', prefix], { tty: true, prompter: no })).code).toBe(1);
    expect((await signedCall(t.baseUrl, other.apiKey, other.secret, 'GET', '/v1/account')).status).toBe(200);
    expect((await admin(['keys', 'revoke', prefix, '--yes'])).code).toBe(0);

    const before = JSON.parse((await admin(['webhook-secret', '--account', String(other.userId), '--json'])).stdout).secret as string;
    expect((await admin(['webhook-secret', '--account', String(other.userId), '--rotate'])).code).toBe(2);
    const yes = scriptedPrompter([{ match: /Replace the webhook signing secret of account \d+\?/, answer: true }]);
    const rotated = await admin(['webhook-secret', '--account', String(other.userId), '--rotate'], { tty: true, prompter: yes });
    expect(rotated.code).toBe(0);
    expect(rotated.stdout.trim()).not.toBe(before);
    expect((await admin(['webhook-secret', '--account', String(other.userId), '--rotate', '--yes'])).code).toBe(0);
  });
});
