import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { verifyWebhook } from '../client/webhook-signing.js';
import { BodyTooLargeError, readBody } from '../util/body.js';

/** A verified delivery, as `rpcctl webhook listen` prints it. */
export interface ReceivedWebhook {
  event: Record<string, unknown>;
  /** The exact body bytes (as UTF-8) that were signed. */
  raw: string;
  webhookId: string | undefined;
  attempt: number | undefined;
  timestamp: number;
  receivedAt: Date;
}

export interface ForwardResult {
  webhookId: string | undefined;
  url: string;
  status?: number;
  error?: string;
  durationMs: number;
  /** Set when the target could not be reached and the delivery will be tried again. */
  retryInMs?: number;
}

export interface WebhookReceiverOptions {
  /** The account's webhook signing secret. */
  secret: string;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Reject deliveries whose X-Timestamp is further from now (seconds); 0 disables. Default 300. */
  toleranceSeconds?: number;
  /** POST each verified delivery on to this URL, with the original body and headers. */
  forwardTo?: string;
  forwardTimeoutMs?: number;
  /**
   * Waits between forwarding attempts while the target cannot be reached (a dev server
   * restarting); default 1, 2, 4, 8 and 16 s. Answers (any HTTP status) are not retried.
   */
  forwardRetryMs?: number[];
  maxBodyBytes?: number;
  onEvent(received: ReceivedWebhook): void;
  onRejected?(reason: string, headers: IncomingHttpHeaders): void;
  onForwarded?(result: ForwardResult): void;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  close(): Promise<void>;
}

const FORWARDED_HEADERS = ['content-type', 'x-timestamp', 'x-signature', 'x-webhook-id', 'x-webhook-attempt'];

/**
 * The core of `rpcctl webhook listen`, like `stripe listen`: an HTTP server that verifies
 * each delivery's X-Signature, hands the event to `onEvent`, answers 200 at once (the
 * sender's timeout is short) and then, if asked, forwards the delivery unchanged.
 */
export async function startWebhookReceiver(o: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const limit = o.maxBodyBytes ?? 1024 * 1024;
  const pending = new Set<Promise<void>>();
  // Ctrl-C ends the waits of forwards still retrying; attempts under way finish.
  const closing = new AbortController();
  const server: Server = createServer((req, res) => {
    const reply = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method !== 'POST') {
      req.resume();
      return reply(405, { ok: false, error: 'webhook deliveries are POSTs' });
    }
    readBody(req, limit).then((raw) => {
      const header = (name: string) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      const verdict = verifyWebhook({
        secret: o.secret, timestamp: header('x-timestamp'), signature: header('x-signature'), body: raw,
        toleranceSeconds: o.toleranceSeconds ?? 300,
      });
      if (!verdict.ok) {
        o.onRejected?.(verdict.reason, req.headers);
        return reply(401, { ok: false, error: verdict.reason });
      }
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        o.onRejected?.('body is not JSON', req.headers);
        return reply(400, { ok: false, error: 'body is not JSON' });
      }
      const attempt = Number(header('x-webhook-attempt'));
      const webhookId = header('x-webhook-id');
      o.onEvent({
        event, raw: raw.toString('utf8'), webhookId, attempt: Number.isInteger(attempt) ? attempt : undefined,
        timestamp: Number(header('x-timestamp')), receivedAt: new Date(),
      });
      reply(200, { ok: true });
      if (o.forwardTo) {
        const headers: Record<string, string> = {};
        for (const h of FORWARDED_HEADERS) {
          const v = header(h);
          if (v !== undefined) headers[h] = v;
        }
        const p = forwardWithRetries(o, headers, raw, webhookId, closing.signal);
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
    }, (err: unknown) => {
      if (err instanceof BodyTooLargeError) reply(413, { ok: false, error: 'body too large' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = o.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    port,
    async close() {
      closing.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await Promise.allSettled(pending);
    },
  };
}

async function forwardWithRetries(
  o: WebhookReceiverOptions, headers: Record<string, string>, body: Buffer, webhookId: string | undefined, closing: AbortSignal,
): Promise<void> {
  const waits = o.forwardRetryMs ?? [1000, 2000, 4000, 8000, 16_000];
  for (let attempt = 0; ; attempt++) {
    const result = await forward(o.forwardTo!, headers, body, webhookId, o.forwardTimeoutMs ?? 10_000);
    const wait = result.error !== undefined && !closing.aborted ? waits[attempt] : undefined;
    o.onForwarded?.(wait === undefined ? result : { ...result, retryInMs: wait });
    if (wait === undefined) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait);
      closing.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
    });
    if (closing.aborted) return;
  }
}

async function forward(url: string, headers: Record<string, string>, body: Buffer, webhookId: string | undefined, timeoutMs: number): Promise<ForwardResult> {
  const t0 = performance.now();
  try {
    const res = await request(url, { method: 'POST', headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return { webhookId, url, status: res.statusCode, durationMs: Math.round(performance.now() - t0) };
  } catch (err) {
    const e = err as Error & { cause?: Error };
    const code = (e as NodeJS.ErrnoException).code ?? (e.cause as NodeJS.ErrnoException | undefined)?.code;
    const error = code === 'ECONNREFUSED' ? 'connection refused' : e.cause?.message || e.message || code || 'unknown error';
    return { webhookId, url, error, durationMs: Math.round(performance.now() - t0) };
  }
}
