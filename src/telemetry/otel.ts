import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Span } from '@opentelemetry/api';
import { setGlobalErrorHandler, W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { SpanKindName, Tracing, TracingSetup } from './types.js';

const KINDS: Record<SpanKindName, SpanKind> = {
  server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL, consumer: SpanKind.CONSUMER,
};
/** How long a stop waits for the last spans to be exported: an unreachable collector must not hold it up (a gateway worker's usage counts wait behind it). */
const SHUTDOWN_MS = 2000;
/** Export failures are logged at most this often per thread. */
const ERROR_LOG_MS = 60_000;

/**
 * The SDK side of `Tracing`, loaded only when tracing is on. Spans are handed around
 * explicitly: no context manager is registered and no AsyncLocalStorage is used (on Node 20
 * and 22 either turns on async hooks for the whole thread, which every promise of every call
 * pays for, sampled or not; gateway/trace.ts).
 *
 * Sampling: a new trace is recorded with `samplingRatio`; so is one a client's `traceparent`
 * started, by its trace id, whatever its sampled flag says: a caller must not be able to make
 * every one of its calls exported. Our own child spans follow their parent.
 */
export function openTracing(setup: TracingSetup, log: (line: string) => void, thread: string): Tracing {
  const ratio = new TraceIdRatioBasedSampler(setup.samplingRatio);
  const exporter = new OTLPTraceExporter({ url: setup.url, headers: setup.headers, timeoutMillis: setup.timeoutMs });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': setup.serviceName, 'rpcctl.thread': thread }),
    sampler: new ParentBasedSampler({ root: ratio, remoteParentSampled: ratio, remoteParentNotSampled: ratio }),
    // Values come from clients (methods, routes): bounded.
    spanLimits: { attributeValueLengthLimit: 256, attributeCountLimit: 32, eventCountLimit: 16 },
    spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: 4096, scheduledDelayMillis: 1000, exportTimeoutMillis: setup.timeoutMs })],
  });
  const tracer = provider.getTracer('rpcctl');
  const propagator = new W3CTraceContextPropagator();
  // The SDK's own diagnostics (diag) stay off: some name a header's value. Failed exports
  // reach this handler; the message is cut and cleaned of header values before it is logged.
  let loggedAt = -Infinity;
  const secrets = Object.values(setup.headers).filter((v) => v.length >= 4);
  setGlobalErrorHandler((err) => {
    const now = Date.now();
    if (now - loggedAt < ERROR_LOG_MS) return;
    loggedAt = now;
    let message = (err instanceof Error ? err.message : String(err)).replace(/[^\x20-\x7e]+/g, ' ').slice(0, 200);
    for (const s of secrets) message = message.split(s).join('***');
    log(`telemetry: ${thread}: exporting spans to ${new URL(setup.url).origin} failed: ${message} (at most one line a minute)`);
  });
  return {
    start(name, kind, parent, attributes) {
      const ctx = parent === undefined ? ROOT_CONTEXT
        : isSpan(parent) ? trace.setSpan(ROOT_CONTEXT, parent)
          : parent.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, parent, defaultTextMapGetter);
      return tracer.startSpan(name, { kind: KINDS[kind], attributes }, ctx);
    },
    inject(span, headers) {
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
    },
    fail(span, message) {
      span.setStatus({ code: SpanStatusCode.ERROR, message });
    },
    flush: () => provider.forceFlush(),
    shutdown: () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => { timer = setTimeout(resolve, SHUTDOWN_MS); });
      return Promise.race([provider.shutdown().catch(() => {}), late]).finally(() => clearTimeout(timer));
    },
  };
}

function isSpan(p: Span | IncomingHttpHeaders): p is Span {
  return typeof (p as Span).spanContext === 'function';
}
