import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/index.js';
import { startTracing, tracingSetup } from '../src/telemetry/index.js';
import { traceAttempt, traced, tracedMessage, traceOf } from '../src/gateway/trace.js';
import type { EndpointState } from '../src/gateway/registry.js';
import type { Environment } from '../src/store/index.js';

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

  it('leaves async hooks off in a thread that traces calls, sampled or not (on Node 20 and 22 they make every promise of the thread costlier)', async () => {
    // With async hooks on, every new promise carries its async ids.
    const hooked = () => Object.getOwnPropertySymbols(new Promise(() => {})).length > 0;
    expect(hooked()).toBe(false);
    const env = { slug: 'local', network: { slug: 'fake' } } as unknown as Environment;
    const ep = { id: 1, env } as unknown as EndpointState;
    const sent: Record<string, string>[] = [];
    for (const samplingRatio of [1, 0]) {
      // Nothing listens there: exports fail quietly (the log is the sink), spans are still made.
      const tracing = await startTracing({ url: 'http://127.0.0.1:9/v1/traces', headers: {}, serviceName: 't', samplingRatio, timeoutMs: 1000 }, () => {}, 'test');
      const res = new EventEmitter() as unknown as ServerResponse;
      const req = { method: 'POST', headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } } as unknown as IncomingMessage;
      await traced(tracing, req, res, async () => {
        const headers: Record<string, string> = {};
        traceAttempt(traceOf(res)!, 'http://127.0.0.1:1', 'eth_chainId', headers)?.(200);
        sent.push(headers);
        await Promise.resolve();
      });
      res.emit('close');
      await tracedMessage(tracing, undefined, ep, env, async (t) => {
        traceAttempt(t, 'http://127.0.0.1:1', 'eth_chainId', {})?.(200);
        await Promise.resolve();
      });
      await tracing.shutdown();
    }
    expect(hooked()).toBe(false);
    // Both calls' attempts sent the client's trace on, sampled and then not.
    expect(sent.map((h) => h.traceparent)).toEqual([
      expect.stringMatching(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/), expect.stringMatching(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/),
    ]);
  });
});
