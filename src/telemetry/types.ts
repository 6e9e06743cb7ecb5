import type { IncomingHttpHeaders } from 'node:http';
import type { Attributes, Span } from '@opentelemetry/api';

export type { Attributes, Span } from '@opentelemetry/api';

/**
 * OpenTelemetry traces over OTLP/HTTP (docs/operations.md, "Traces"). Off unless
 * `telemetry.otlp.endpoint` is set; then each thread that makes spans (the main thread and
 * every gateway worker) opens its own provider and exporter with `startTracing`, so nothing
 * about a span crosses a thread. This file loads no OpenTelemetry code: the SDK is imported by
 * `startTracing` only, so a service without tracing never loads it.
 */
export interface Tracing {
  /**
   * A new span. `parent`: a span of ours (a child), or a request's headers whose W3C
   * `traceparent` names the caller's span; absent, or headers without a valid one: a new trace.
   */
  start(name: string, kind: SpanKindName, parent?: Span | IncomingHttpHeaders, attributes?: Attributes): Span;
  /** Sets `traceparent` (and `tracestate`) naming `span` on an outgoing request's headers. */
  inject(span: Span, headers: Record<string, string>): void;
  /** Marks `span` failed (status ERROR with `message`). */
  fail(span: Span, message: string): void;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  /** Exports what is left (waiting at most 2 s) and stops; spans started after it are dropped. */
  shutdown(): Promise<void>;
}

export type SpanKindName = 'server' | 'client' | 'internal' | 'consumer';

/** What a thread needs to open its exporter: config resolved once (headers read from the environment) on the main thread. */
export interface TracingSetup {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  url: string;
  /** Sent with every export; may hold credentials: never logged. */
  headers: Record<string, string>;
  serviceName: string;
  /** Share of new traces recorded (0..1); see `otel.ts` for callers' traceparents. */
  samplingRatio: number;
  timeoutMs: number;
}
