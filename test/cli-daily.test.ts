import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, tempConfigDir } from './helpers/cli.js';

/** A Public API stand-in: each request takes the next step, the last one repeating. */
type Step = 'ok' | '429' | '401' | { slowMs: number };
let server: Server | undefined;
afterEach(() => { server?.closeAllConnections(); server?.close(); server = undefined; });

async function api(steps: Step[]): Promise<{ base: string; count: () => number }> {
  let n = 0;
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const step = steps[Math.min(n++, steps.length - 1)]!;
    req.resume();
    const answer = () => {
      if (step === '429') {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        return res.end('{"ok":false,"error":"Rate limit exceeded"}');
      }
      if (step === '401') {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end('{"ok":false,"error":"Invalid signature."}');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        ok: true, user_id: 7, plan: { id: 3, slug: 'pro', name: 'Pro', endpoints_limit: 25, rps_limit: 100, webhook_address_slots: 10 },
        usage: { period: '2026-01', requests: 3, credits_used: 30, credits_included: 100, credits_remaining: 70 },
        endpoints: [],
      }));
    };
    if (typeof step === 'object') setTimeout(answer, step.slowMs);
    else answer();
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, count: () => n };
}

const envFor = (base: string) => ({ PUBLIC_API_KEY: 'key_1234567890', PUBLIC_API_SECRET: 's', PUBLIC_API_BASE: base, RPCCTL_CONFIG_DIR: tempConfigDir() });

describe('slow calls are never silent', () => {
  it('a spinner on a terminal\'s stderr once a call takes longer than ~300 ms, cleared afterwards', async () => {
    const a = await api([{ slowMs: 1200 }]);
    const r = await cli(['account', '--json'], { env: envFor(a.base), tty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] GET \/v1\/account/);
    expect(r.stderr.endsWith('\r\x1b[K')).toBe(true);
    expect(r.stdout).not.toContain('⠋');
  });

  it('no spinner when stderr is not a terminal', async () => {
    const slow = await api([{ slowMs: 800 }]);
    expect((await cli(['account'], { env: envFor(slow.base) })).stderr).toBe('');
  });

  it('a note while waiting out Retry-After', async () => {
    const a = await api(['429', 'ok']);
    const r = await cli(['account', '--json'], { env: envFor(a.base) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('rate limited, retrying in 1 s\n');
  });

  it('--timeout ends a call that takes too long, naming the flag', async () => {
    const a = await api([{ slowMs: 5000 }]);
    const r = await cli(['account', '--timeout', '0.5'], { env: envFor(a.base) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: no answer from ${a.base} within 0.5 s (wait longer with --timeout SECONDS)\n`);
    expect((await cli(['account', '--timeout', 'soon'], { env: envFor(a.base) })).code).toBe(2);
  });

  it('--timeout bounds the Retry-After waits too: a wait past it is not started', async () => {
    const a = await api(['429']);
    const r = await cli(['account', '--timeout', '0.5'], { env: envFor(a.base) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: Rate limit exceeded\n');
    expect(a.count()).toBe(1);
  });

  it('"cannot reach" says why and asks whether the service runs', async () => {
    const a = await api(['ok']);
    server!.close();
    const r = await cli(['account'], { env: envFor(a.base) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`error: cannot reach ${a.base}: connection refused \\(is \`rpcctl serve\` running\\?\\)\\n$`));
  });
});

describe('--jq', () => {
  it('filters the JSON of any command, strings bare', async () => {
    const a = await api(['ok']);
    const r = await cli(['account', '--jq', '.plan.slug'], { env: envFor(a.base) });
    expect(r).toMatchObject({ code: 0, stdout: 'pro\n' });
    const many = await cli(['account', '--jq', '.usage | .requests, .credits_used'], { env: envFor(a.base) });
    expect(many.stdout).toBe('3\n30\n');
    const raw = await cli(['api', 'GET', '/v1/account', '-q', '.user_id'], { env: envFor(a.base) });
    expect(raw.stdout).toBe('7\n');
  });

  it('a bad expression is a usage error naming --jq', async () => {
    const a = await api(['ok']);
    const r = await cli(['account', '--jq', '.['], { env: envFor(a.base) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --jq: syntax error/);
    expect(r.stdout).toBe('');
  });
});

describe('auth status', () => {
  it('who, where, which key, and that it works', async () => {
    const a = await api(['ok']);
    const r = await cli(['auth', 'status'], { env: envFor(a.base) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`credentials\tenvironment (PUBLIC_API_KEY, PUBLIC_API_SECRET)\nbase url\t${a.base}\napi key\tkey_1234…\nstatus\tworking\naccount\t7\nplan\tPro (pro)\n`);
    const json = await cli(['auth', 'status', '--json'], { env: envFor(a.base) });
    expect(JSON.parse(json.stdout)).toEqual({ profile: null, base_url: a.base, api_key_prefix: 'key_1234', ok: true, user_id: 7, plan: 'pro', error: null });
  });

  it('a refused key: the status says so once, exit 4', async () => {
    const a = await api(['401']);
    const r = await cli(['auth', 'status'], { env: envFor(a.base) });
    expect(r.code).toBe(4);
    expect(r.stdout).toContain('status\tnot working: Invalid signature.');
    expect(r.stderr).toBe('');
  });
});

describe('profile set', () => {
  it('changes the base URL of the selected profile, keeping key and secret', async () => {
    const a = await api(['ok']);
    const env = { RPCCTL_CONFIG_DIR: tempConfigDir() };
    expect((await cli(['profile', 'add', 'dev', '--api-key', 'key_1', '--base-url', 'http://127.0.0.1:1', '--no-verify'], { env, stdin: 'sk_secret\n' })).code).toBe(0);
    const set = await cli(['profile', 'set', 'base_url', a.base], { env });
    expect(set).toMatchObject({ code: 0, stderr: `Profile "dev": base_url is now ${a.base}.\n` });
    const list = JSON.parse((await cli(['profile', 'list', '--json'], { env })).stdout);
    expect(list).toEqual([{ name: 'dev', base_url: a.base, api_key: 'key_1', secret: 'sk…', selected: true }]);
    expect((await cli(['account', '--json'], { env })).code).toBe(0);
    const bad = await cli(['profile', 'set', 'secret', 'x'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown setting "secret" (one of: base_url');
    expect((await cli(['profile', 'set', 'base_url', 'ftp://x'], { env })).code).toBe(2);
  });
});
