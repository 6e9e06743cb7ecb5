import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/index.js';
import { tracingSetup } from '../src/telemetry/index.js';

const telemetry = (t: Record<string, unknown>) => parseConfig({ telemetry: t }, 'test').telemetry;

describe('telemetry config and exporter setup', () => {
  it('is off by default: no endpoint, no setup', () => {
    const t = parseConfig({}, 'test').telemetry;
    expect(t).toEqual({ service_name: 'rpcctl', sampling_ratio: 0.01, otlp: { headers: {}, headers_env: {}, timeout_ms: 10_000 } });
    expect(tracingSetup(t, {})).toBeUndefined();
  });

  it('adds /v1/traces to a collector base URL and keeps a full traces URL', () => {
    expect(tracingSetup(telemetry({ otlp: { endpoint: 'http://collector:4318' } }), {})!.url).toBe('http://collector:4318/v1/traces');
    expect(tracingSetup(telemetry({ otlp: { endpoint: 'http://collector:4318/' } }), {})!.url).toBe('http://collector:4318/v1/traces');
    expect(tracingSetup(telemetry({ otlp: { endpoint: 'https://otlp.example.com/v1/traces' } }), {})!.url).toBe('https://otlp.example.com/v1/traces');
  });

  it('reads header values from the environment, over the literal ones', () => {
    const t = telemetry({ service_name: 'edge', sampling_ratio: 0.5, otlp: { endpoint: 'http://c:4318', headers: { 'x-a': '1', authorization: 'literal' }, headers_env: { authorization: 'OTLP_AUTH' } } });
    expect(tracingSetup(t, { OTLP_AUTH: 'Bearer s3cret' })).toEqual({
      url: 'http://c:4318/v1/traces', headers: { 'x-a': '1', authorization: 'Bearer s3cret' }, serviceName: 'edge', samplingRatio: 0.5, timeoutMs: 10_000,
    });
  });

  it('refuses a missing header variable by its name', () => {
    const t = telemetry({ otlp: { endpoint: 'http://c:4318', headers_env: { authorization: 'OTLP_AUTH' } } });
    expect(() => tracingSetup(t, {})).toThrow(ConfigError);
    expect(() => tracingSetup(t, { OTLP_AUTH: '' })).toThrow(/OTLP_AUTH is not set/);
  });

  it('refuses a bad endpoint, ratio, header name or multi-line value without echoing the value', () => {
    expect(() => telemetry({ otlp: { endpoint: 'ftp://c' } })).toThrow(/telemetry\.otlp\.endpoint/);
    expect(() => telemetry({ sampling_ratio: 2 })).toThrow(/telemetry\.sampling_ratio/);
    expect(() => telemetry({ otlp: { headers: { 'bad header': 'x' } } })).toThrow(/telemetry\.otlp\.headers\.bad header: Invalid key/);
    let message = '';
    try {
      telemetry({ otlp: { headers: { authorization: 'Bearer hunter2\r\nx-evil: 1' } } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/one line/);
    expect(message).not.toContain('hunter2');
  });
});
