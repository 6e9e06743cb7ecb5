import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, secretsFromFiles } from '../src/config/index.js';

const dir = mkdtempSync(join(tmpdir(), 'rpcctl-config-env-'));
let n = 0;
function file(text: string, ext = 'yaml'): string {
  const p = join(dir, `f${++n}.${ext}`);
  writeFileSync(p, text);
  return p;
}
function refusal(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('not refused');
}

describe('config: ${VAR} references', () => {
  it('replaces ${VAR} and ${VAR:-default} inside strings; a whole reference where the schema wants a number or a boolean reads as one', () => {
    const cfg = loadConfig(file([
      'api:',
      '  port: ${API_PORT}',
      '  host: ${API_HOST:-127.0.0.1}',
      'metrics:',
      '  enabled: ${METRICS_ON}',
      'networks:',
      '  - slug: eth',
      '    name: Ethereum',
      '    environments:',
      '      - slug: mainnet',
      '        upstreams: ["https://node.example/v3/${NODE_KEY}", "https://b.example/${EMPTY:-x}"]',
      'redis:',
      '  key_prefix: "$${literal}"',
    ].join('\n')), { API_PORT: '9001', METRICS_ON: 'false', NODE_KEY: 'k3y', EMPTY: '' });
    expect(cfg.api.port).toBe(9001);
    expect(cfg.api.host).toBe('127.0.0.1');
    expect(cfg.metrics.enabled).toBe(false);
    expect(cfg.networks[0]!.environments[0]!.upstreams).toEqual(['https://node.example/v3/k3y', 'https://b.example/x']);
    expect(cfg.redis.key_prefix).toBe('${literal}');
  });

  it('a digits-only secret stays text where the schema wants text', () => {
    const cfg = loadConfig(file('{"metrics":{"token":"${TOKEN}"}}', 'json'), { TOKEN: '1234567890123456789' });
    expect(cfg.metrics.token).toBe('1234567890123456789');
  });

  it('a variable that is not set stops the start, naming it and where; its neighbours\' values are not in the message', () => {
    const err = refusal(() => loadConfig(file('store:\n  url: postgres://u:${DB_PASSWORD}@db/x\n'), { OTHER: 'hunter2' }));
    expect(err.message).toContain('store.url names the environment variable DB_PASSWORD, which is not set');
    expect(err.message).not.toContain('hunter2');
  });

  it('a file that does not parse is refused with where, never the text around it (it may hold a secret)', () => {
    const yaml = refusal(() => loadConfig(file('store:\n  url: "postgres://u:hunter2pw@db/x\n  x: [\n'), {}));
    expect(yaml.message).toMatch(/is not valid YAML: .*at line \d+, column \d+$/);
    expect(yaml.message).not.toContain('hunter2pw');
    const json = refusal(() => loadConfig(file('{"metrics": {"token": hunter2pw}}', 'json'), {}));
    expect(json.message).toContain('is not valid JSON');
    expect(json.message).not.toContain('hunter2pw');
  });

  it('no parser message quotes the file: a JSON excerpt holding a newline, a YAML alias, tag or directive', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['{"store": {"url": postgres://u:hunter2pw@db/x\n}}', 'json', /is not valid JSON: Unexpected token 'p'$/],
      ['store:\n  url: *hunter2pw\n', 'yaml', /is not valid YAML: Unresolved alias \(the anchor must be set before the alias\)/],
      ['store:\n  url: !hunter2pw postgres://u:pw@db/x\n', 'yaml', /is not valid YAML: Unresolved tag at line 2, column 8$/],
      ['%hunter2pw\n---\nstore: {}\n', 'yaml', /is not valid YAML: BAD_DIRECTIVE at line 1, column 1$/],
      ['token: |x hunter2pw\n  a\n', 'yaml', /is not valid YAML: .*at line 1, column \d+$/],
    ];
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      for (const [text, ext, message] of cases) {
        const err = refusal(() => loadConfig(file(text, ext), {}));
        expect(err.message).toMatch(message);
        expect(err.message).not.toContain('hunter2pw');
      }
    } finally {
      process.off('warning', onWarning);
    }
    // A YAML warning is Node's process warning by default, printed with its code frame.
    expect(warnings).toEqual([]);
  });

  it('a message naming a place under upstream_methods shows the upstream URL key as its origin only (its path holds the provider key)', () => {
    const config = (deny: string) => [
      'networks:',
      '  - slug: eth',
      '    name: Ethereum',
      '    environments: [{ slug: mainnet, upstreams: ["https://mainnet.example/v3/k3yhunter2"] }]',
      '    upstream_methods:',
      `      "https://mainnet.example/v3/k3yhunter2": { deny: [${deny}] }`,
    ].join('\n');
    const unset = refusal(() => loadConfig(file(config('"${DENY}"')), {}));
    expect(unset.message).toContain('networks[0].upstream_methods.<https://mainnet.example>.deny[0] names the environment variable DENY');
    const invalid = refusal(() => loadConfig(file(config('42')), {}));
    expect(invalid.message).toContain('networks[0].upstream_methods.<https://mainnet.example>.deny');
    for (const err of [unset, invalid]) expect(err.message).not.toContain('k3yhunter2');
  });

  it('a value the schema refuses does not show what the variable held', () => {
    const err = refusal(() => loadConfig(file('store:\n  url: ${DB}\n'), { DB: 'mysql://root:s3cretpass@db/x' }));
    expect(err.message).toContain('store.url');
    expect(err.message).not.toContain('s3cretpass');
  });
});

describe('config: *_file secrets', () => {
  it('reads store.url, redis.url, metrics.token and payments.aml.http.api_key from files, one trailing newline dropped', () => {
    const db = file('postgres://rpcctl:pw@db:5432/rpcctl\n', 'txt');
    const redis = file('redis://:pw@redis:6379\r\n', 'txt');
    const token = file('abcdefghijklmnopqrstuvwxyz', 'txt');
    const aml = file('aml-key\n', 'txt');
    const cfg = loadConfig(file(JSON.stringify({
      store: { url_file: db }, redis: { url_file: redis }, metrics: { token_file: '${TOKEN_PATH}' },
      payments: { aml: { provider: 'http', http: { preset: 'trm', api_key_file: aml } } },
    }), 'json'), { TOKEN_PATH: token });
    expect(cfg.store.url).toBe('postgres://rpcctl:pw@db:5432/rpcctl');
    expect(cfg.redis.url).toBe('redis://:pw@redis:6379');
    expect(cfg.metrics.token).toBe('abcdefghijklmnopqrstuvwxyz');
    expect(cfg.payments.aml.http?.api_key).toBe('aml-key');
  });

  it('both forms at once are refused naming both', () => {
    const err = refusal(() => loadConfig(file(JSON.stringify({ store: { url: 'postgres://a@b/c', url_file: '/nowhere' } }), 'json'), {}));
    expect(err.message).toContain('store.url and store.url_file are both set: give one');
  });

  it('a file that cannot be read or is empty is named with the reason', () => {
    expect(refusal(() => loadConfig(file('metrics:\n  token_file: /nonexistent/rpcctl-token\n'), {})).message)
      .toContain('metrics.token_file: cannot read /nonexistent/rpcctl-token: ENOENT');
    expect(refusal(() => loadConfig(file(`metrics:\n  token_file: ${file('\n', 'txt')}\n`), {})).message).toMatch(/metrics\.token_file: .* is empty/);
  });

  it('a directory, a FIFO no one writes, /dev/zero or a file too large to be a secret is refused at once, never waited on or read whole', () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const big = file('x'.repeat(64 * 1024 + 1), 'txt');
    for (const [path, reason] of [[dir, 'not a regular file'], [fifo, 'not a regular file'], ['/dev/zero', 'not a regular file'], [big, 'larger than 64 KiB']]) {
      expect(refusal(() => loadConfig(file(`store:\n  url_file: ${path}\n`), {})).message).toBe(`${dir}/f${n}.yaml: store.url_file: cannot read ${path}: ${reason}`);
      expect(() => secretsFromFiles({ RPCCTL_MASTER_KEY_FILE: path })).toThrow(`RPCCTL_MASTER_KEY_FILE: cannot read ${path}: ${reason}`);
    }
    expect(loadConfig(file(`metrics:\n  token_file: ${file('t'.repeat(64 * 1024), 'txt')}\n`), {}).metrics.token).toHaveLength(64 * 1024);
  });

  it('RPCCTL_DATABASE_URL_FILE, RPCCTL_REDIS_URL_FILE and RPCCTL_MASTER_KEY_FILE fill their variables; both forms are refused', () => {
    const db = file('postgres://u:pw@h/d\n', 'txt');
    const env = { RPCCTL_DATABASE_URL_FILE: db, RPCCTL_MASTER_KEY_FILE: file(`${'ab'.repeat(32)}\n`, 'txt'), KEEP: '1' };
    const out = secretsFromFiles(env);
    expect(out).toMatchObject({ RPCCTL_DATABASE_URL: 'postgres://u:pw@h/d', RPCCTL_MASTER_KEY: 'ab'.repeat(32), KEEP: '1' });
    expect(env).not.toHaveProperty('RPCCTL_DATABASE_URL');
    expect(() => secretsFromFiles({ RPCCTL_REDIS_URL: 'redis://x', RPCCTL_REDIS_URL_FILE: db })).toThrow('RPCCTL_REDIS_URL and RPCCTL_REDIS_URL_FILE are both set: give one');
  });
});
