import { execa } from 'execa';
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

  it('leaves async hooks off in a thread that traces calls, sampled or not, and still sends the node the trace', async () => {
    // Async hooks (what AsyncLocalStorage runs on in Node 22, and in Node 24 under
    // --no-async-context-frame) once on stay on, and every promise of the thread pays: checked in
    // a Node that has them, on the build, by whether a new promise carries async ids.
    const script = `
      const hooked = () => Object.getOwnPropertySymbols(new Promise(() => {})).length > 0;
      const hooksBefore = hooked();
      const { startTracing } = await import(${JSON.stringify(new URL('../dist/telemetry/index.js', import.meta.url).href)});
      const { traced, tracedMessage, traceOf, traceAttempt } = await import(${JSON.stringify(new URL('../dist/gateway/trace.js', import.meta.url).href)});
      const { EventEmitter } = await import('node:events');
      const env = { slug: 'local', network: { slug: 'fake' } };
      const sent = [];
      for (const samplingRatio of [1, 0]) {
        // Nothing listens there: exports fail quietly (the log is the sink), spans are still made.
        const tracing = await startTracing({ url: 'http://127.0.0.1:9/v1/traces', headers: {}, serviceName: 't', samplingRatio, timeoutMs: 1000 }, () => {}, 'test');
        const res = new EventEmitter();
        const req = { method: 'POST', headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } };
        await traced(tracing, req, res, async () => {
          const headers = {};
          traceAttempt(traceOf(res), 'http://127.0.0.1:1', 'eth_chainId', headers)?.(200);
          sent.push(headers.traceparent);
          await Promise.resolve();
        });
        res.emit('close');
        await tracedMessage(tracing, undefined, { id: 1, env }, env, async (t) => {
          traceAttempt(t, 'http://127.0.0.1:1', 'eth_chainId', {})?.(200);
          await Promise.resolve();
        });
        await tracing.shutdown();
      }
      console.log(JSON.stringify({ hooksBefore, hooksAfter: hooked(), sent }));
    `;
    const r = await execa(process.execPath, ['--no-async-context-frame', '--input-type=module', '-e', script], { reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { hooksBefore: boolean; hooksAfter: boolean; sent: string[] };
    expect([out.hooksBefore, out.hooksAfter]).toEqual([false, false]);
    // Both calls' attempts sent the client's trace on, sampled and then not.
    expect(out.sent).toEqual([
      expect.stringMatching(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/), expect.stringMatching(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/),
    ]);
  }, 30_000);
});
