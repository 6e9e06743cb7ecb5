import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOnTerminal, scriptedPrompter, tempConfigDir } from './helpers/cli.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let m: Merchant;

beforeAll(async () => {
  t = await startTestService();
  m = await t.merchant({ plan: 'basic' });
});
afterAll(() => t.stop());

describe('rpcctl init', () => {
  it('asks, verifies with GET /v1/account, saves the profile 0600 and creates a first endpoint', async () => {
    const dir = tempConfigDir();
    const prompter = scriptedPrompter([
      { match: /base URL/, answer: t.baseUrl },
      { match: /API key/, answer: m.apiKey },
      { match: /API secret/, answer: m.secret },
      { match: /Save as profile/, answer: '' }, // the default: "default"
      { match: /Create your first endpoint/, answer: true },
      { match: /Network/, answer: '(eth)' },
      { match: /Environment/, answer: 'sepolia' },
      { match: /Endpoint name/, answer: '' }, // the default: eth-sepolia
    ]);
    const r = await cli(['init'], { tty: true, prompter, env: { RPCCTL_CONFIG_DIR: dir, NO_COLOR: '1' } });
    expect(r.stderr).toContain(`Signed in as account ${m.userId} on the Basic plan`);
    expect(r.code, r.stderr).toBe(0);
    expect(prompter.asked).toHaveLength(8);

    const file = join(dir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved).toEqual({ profiles: { default: { base_url: t.baseUrl, api_key: m.apiKey, secret: m.secret } }, current: 'default' });
    expect(r.stdout + r.stderr).not.toContain(m.secret);

    const { endpoints } = await m.client.listEndpoints();
    expect(endpoints).toMatchObject([{ name: 'eth-sepolia', network_slug: 'eth', env_slug: 'sepolia' }]);
    expect(r.stderr).toContain(endpoints[0]!.url);

    // The saved profile is what later commands use.
    const me = await cli(['account', '--json'], { env: { RPCCTL_CONFIG_DIR: dir } });
    expect(JSON.parse(me.stdout).user_id).toBe(m.userId);
  });

  it('--profile names the profile; declining the endpoint creates none; --json prints the objects', async () => {
    const dir = tempConfigDir();
    const before = (await m.client.listEndpoints()).endpoints.length;
    const prompter = scriptedPrompter([
      { match: /base URL/, answer: t.baseUrl },
      { match: /API key/, answer: m.apiKey },
      { match: /API secret/, answer: m.secret },
      { match: /Create (another|your first) endpoint/, answer: false },
    ]);
    const r = await cli(['init', '--profile', 'work', '--json'], { tty: true, prompter, env: { RPCCTL_CONFIG_DIR: dir } });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ profile: { name: 'work', api_key: m.apiKey, selected: true }, account: { user_id: m.userId }, endpoint: null });
    expect(out.profile.secret).not.toBe(m.secret);
    expect((await m.client.listEndpoints()).endpoints.length).toBe(before);
  });

  it('a key that does not verify is not saved (exit 4, the API error)', async () => {
    const dir = tempConfigDir();
    const prompter = scriptedPrompter([
      { match: /base URL/, answer: t.baseUrl },
      { match: /API key/, answer: m.apiKey },
      { match: /API secret/, answer: 'sk_wrong' },
    ]);
    const r = await cli(['init'], { tty: true, prompter, env: { RPCCTL_CONFIG_DIR: dir } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('Invalid signature.');
    const list = await cli(['profile', 'list', '--json'], { env: { RPCCTL_CONFIG_DIR: dir } });
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it('the prompts validate answers (a base URL must be a URL)', async () => {
    const prompter = scriptedPrompter([{ match: /base URL/, answer: 'not a url' }]);
    await expect(cli(['init'], { tty: true, prompter, env: { RPCCTL_CONFIG_DIR: tempConfigDir() } })).resolves.toMatchObject({ code: 1 });
    expect(prompter.asked).toEqual(['Public API base URL']);
  });

  it('drives the real prompts on a terminal: the secret is masked, Enter takes defaults', async () => {
    const dir = tempConfigDir();
    const r = await cliOnTerminal(['init'], [
      { when: /base URL/, keys: `${t.baseUrl}\r` },
      { when: /API key/, keys: `${m.apiKey}\r` },
      { when: /API secret/, keys: `${m.secret}\r` },
      { when: /Save as profile/, keys: 'ci\r' },
      { when: /endpoint/, keys: 'y\r' },
      { when: /Network/, keys: '\x1b[B\r' }, // arrow down: the second network
      { when: /Environment/, keys: '\r' },
      { when: /Endpoint name/, keys: '\r' },
    ], { RPCCTL_CONFIG_DIR: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.screen).toContain(`API secret ${'*'.repeat(m.secret.length)}`);
    // Each answer ends its line before the next note ("Save as profile ciSaved profile..." was a bug).
    const lines = r.screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').split('\n');
    expect(lines.some((l) => l.startsWith('Saved profile "ci"')), lines.join('\n')).toBe(true);
    expect(r.screen + r.stderr).not.toContain(m.secret);
    const saved = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(saved.profiles.ci).toEqual({ base_url: t.baseUrl, api_key: m.apiKey, secret: m.secret });
    expect(saved.current).toBe('ci');
    const { networks } = await m.client.availableNetworks();
    const second = networks[1]!;
    const { endpoints } = await m.client.listEndpoints();
    expect(endpoints.at(-1)).toMatchObject({ network_slug: second.slug, env_slug: second.environment_kinds[0], name: `${second.slug}-${second.environment_kinds[0]}` });
  });

  it('Ctrl-C in a prompt cancels (exit 1) and saves nothing', async () => {
    const dir = tempConfigDir();
    const r = await cliOnTerminal(['init'], [
      { when: /base URL/, keys: '\r' },
      { when: /API key/, keys: '\x03' },
    ], { RPCCTL_CONFIG_DIR: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: cancelled\n');
    expect(JSON.parse((await cli(['profile', 'list', '--json'], { env: { RPCCTL_CONFIG_DIR: dir } })).stdout)).toEqual([]);
  });

  it('without a terminal it fails at once and points to `profile add`', async () => {
    const r = await cli(['init'], { env: { RPCCTL_CONFIG_DIR: tempConfigDir() } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('needs an interactive terminal');
    expect(r.stderr).toContain('rpcctl profile add NAME --base-url URL --api-key KEY');
  });
});
