import { ConfigError, type Config } from '../config/index.js';
import type { Tracing, TracingSetup } from './types.js';

export type { Attributes, Span, SpanKindName, Tracing, TracingSetup } from './types.js';

/**
 * The exporter's setup from config, or undefined when tracing is off (no endpoint). Header
 * values from `headers_env` are read from `env` here; a missing one is refused by name (its
 * value is never put in a message).
 */
export function tracingSetup(t: Config['telemetry'], env: NodeJS.ProcessEnv): TracingSetup | undefined {
  const endpoint = t.otlp.endpoint;
  if (!endpoint) return undefined;
  const headers: Record<string, string> = { ...t.otlp.headers };
  for (const [name, variable] of Object.entries(t.otlp.headers_env)) {
    const value = env[variable];
    if (value === undefined || value === '') throw new ConfigError(`telemetry.otlp.headers_env.${name}: the environment variable ${variable} is not set`);
    headers[name] = value;
  }
  // An endpoint given as the collector's base URL gets the traces path, as OTEL_EXPORTER_OTLP_ENDPOINT does.
  const url = /\/v1\/traces\/?$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/$/, '')}/v1/traces`;
  return { url, headers, serviceName: t.service_name, samplingRatio: t.sampling_ratio, timeoutMs: t.otlp.timeout_ms };
}

/**
 * Opens this thread's tracer provider and exporter. `log` hears export failures (at most one
 * line a minute; never the headers); `thread` names the thread in the spans' resource.
 */
export async function startTracing(setup: TracingSetup, log: (line: string) => void, thread: string): Promise<Tracing> {
  const { openTracing } = await import('./otel.js');
  return openTracing(setup, log, thread);
}
