import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import type { Config } from '../config/index.js';
import { signWebhook } from '../client/webhook-signing.js';
import { addUsageIn, CHANNELS, getAccount, utcDay, webhookSecretOf, type Store, type WebhookDeliveryRow } from '../store/index.js';
import { getWebhook } from './config.js';
import { claimDue } from './claim.js';
import { REORG_CANCELLED } from './outbox.js';
import { RETRY_SCHEDULE_MS, retryDelayMs } from './schedule.js';
import { blockedReason, guardedLookup } from './ssrf.js';
import { Supervisor, type Backoff } from '../runtime/supervisor.js';
import type { Span, Tracing } from '../telemetry/index.js';
import type { WatchFacts } from './watch-facts.js';

/** The delivery worker's claim loop under the supervisor. */
export const DELIVERIES_TASK = 'deliveries';
/** Retries of a failing claim: at most every 5 s, so deliveries resume within 5 s of the store. */
const CLAIM_BACKOFF: Backoff = { minMs: 250, maxMs: 5000 };

export interface DeliveryWorkerOptions {
  /** Runs the claim loop: a failed claim is logged at error as `deliveries`, counted and retried with back-off. */
  supervisor?: Supervisor;
  store: Store;
  config: Config;
  log: (line: string) => void;
  /** Whether an event left the chain (watch/ answers; serve hands it in). */
  watch: WatchFacts;
  /** Deliveries in flight at once, all accounts together. */
  concurrency?: number;
  /** In flight per account: a slow receiver holds up only its own account's queue. */
  perAccount?: number;
  /** How often the outbox is polled when nobody kicks the worker. */
  pollMs?: number;
  schedule?: readonly number[];
  /** Told the result of every attempt (metrics). */
  onAttempt?: (result: 'delivered' | 'retry' | 'failed' | 'gone') => void;
  /** Each attempt a span, its `traceparent` sent to the receiver (tracing on only). */
  tracing?: Tracing | undefined;
}

interface Target {
  url: string;
  enabled: boolean;
  secret: string;
  expires: number;
}

interface Outcome {
  status: number | null;
  error: string | null;
  durationMs: number;
  startedAt: string;
  /** The start of the receiver's answer, shown with the attempt. */
  excerpt?: string | null;
}

const EXCERPT_BYTES = 512;

/** Keeps the first bytes of a response for the attempt log and drains (at most 64 KiB of) the rest. */
async function readExcerpt(body: AsyncIterable<Buffer> & { dump(o: { limit: number }): Promise<void> }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= EXCERPT_BYTES) break;
    }
  } catch {
    // A receiver that hangs up mid-answer still answered with its status.
  }
  await body.dump({ limit: 64 * 1024 }).catch(() => {});
  if (size === 0) return null;
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8').replace(/\uFFFD+$/, '');
}

const TARGET_TTL_MS = 2000;

/** The receiver's answer on the delivery's span: its status, or the failure (never the response excerpt). */
function traceOutcome(tracing: Tracing, span: Span, o: Outcome): void {
  if (!span.isRecording()) return;
  if (o.status !== null) span.setAttribute('http.response.status_code', o.status);
  if (o.error !== null || o.status === null || o.status < 200 || o.status >= 300) tracing.fail(span, o.error ?? `receiver answered HTTP ${o.status}`);
}

/**
 * Sends the outbox. Deliveries are claimed with a lease (owner + expiry) in the store, so
 * if this process dies mid-delivery another worker (or this one after a restart) takes
 * them again once the lease runs out: delivery is at least once, and receivers dedupe on
 * X-Webhook-Id.
 */
export class DeliveryWorker {
  readonly id = randomUUID();
  readonly #o: Required<Omit<DeliveryWorkerOptions, 'schedule' | 'onAttempt' | 'supervisor' | 'tracing'>> & Pick<DeliveryWorkerOptions, 'onAttempt' | 'tracing'> & { schedule: readonly number[] };
  readonly #supervisor: Supervisor;
  readonly #agent: Agent;
  readonly #inflight = new Map<number, Promise<void>>();
  readonly #perAccount = new Map<number, number>();
  readonly #targets = new Map<number, Target>();
  readonly #leaseMs: number;
  /** Free slots that make a claim worth it while deliveries are in flight. */
  readonly #batch: number;
  /** The account the last claim looked at last: the next one starts after it (round robin). */
  #cursor = -1;
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #kicked = false;
  #stopping: Promise<void> | undefined;
  #unlisten: () => void = () => {};

  constructor(o: DeliveryWorkerOptions) {
    const { supervisor, ...rest } = o;
    this.#o = { concurrency: 64, perAccount: 4, pollMs: 500, schedule: RETRY_SCHEDULE_MS, ...rest };
    this.#supervisor = supervisor ?? new Supervisor({ log: o.log });
    const allowPrivate = o.config.webhooks.allow_private_urls;
    this.#agent = new Agent({
      connect: { lookup: guardedLookup(allowPrivate) as never },
      keepAliveTimeout: 10_000,
      connections: 16,
    });
    // Long enough for the slowest attempt to finish and be recorded.
    this.#leaseMs = o.config.webhooks.timeout_ms * 2 + 5000;
    this.#batch = Math.max(1, Math.floor(this.#o.concurrency / 8));
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    // A delivery written by any instance wakes every worker at once (the poll is the backstop,
    // and after a lost LISTEN connection everyone looks straight away).
    this.#unlisten = this.#o.store.notifications.on(CHANNELS.outbox, () => this.kick(), () => this.kick());
    this.#loop = this.#run();
  }

  /** New work is in the outbox: claim now instead of at the next poll. */
  kick(): void {
    this.#kicked = true;
    this.#wake?.();
  }

  /** Stops claiming and lets the deliveries in flight finish and be recorded. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#running = false;
      this.#unlisten();
      this.#wake?.();
      await this.#loop;
      await Promise.allSettled(this.#inflight.values());
      await this.#agent.close();
    })();
    return this.#stopping;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let more = false;
      const ok = await this.#supervisor.run(DELIVERIES_TASK, async () => { more = (await this.#claimAndStart()).more; });
      if (!this.#running) break;
      // Claimed what was due (or all slots are taken): wait for a finished batch, new work or the poll.
      if (!ok) await this.#sleep(this.#supervisor.delay(DELIVERIES_TASK, this.#o.pollMs, CLAIM_BACKOFF));
      else if (!more) await this.#sleep(this.#o.pollMs);
    }
  }

  async #claimAndStart(): Promise<{ claimed: number; more: boolean }> {
    const free = this.#o.concurrency - this.#inflight.size;
    if (free <= 0) return { claimed: 0, more: false };
    const { store } = this.#o;
    const options = {
      owner: this.id, leaseMs: this.#leaseMs, max: free, perAccount: this.#o.perAccount, inflight: this.#perAccount,
      after: this.#cursor, maxAccounts: Math.max(32, free * 4), skipLocked: store.kind === 'postgres',
    };
    // On PostgreSQL instances claim side by side: each locks the due rows it reads and skips
    // the ones another instance is claiming (Convoy's SKIP LOCKED), so none waits and no row
    // is claimed twice. On SQLite the transaction makes the claim the one writer.
    const { rows, cursor, complete } = await store.db.transaction().execute((trx) => claimDue(trx, options));
    this.#cursor = cursor;
    for (const row of rows) {
      this.#perAccount.set(row.account_id, (this.#perAccount.get(row.account_id) ?? 0) + 1);
      const p = this.#deliver(row)
        // Recording the attempt failed (the store away): the claim's lease runs out and it is tried again.
        .catch((err: unknown) => this.#supervisor.failed(DELIVERIES_TASK, new Error(`delivery ${row.webhook_id}: ${(err as Error).message}`)))
        .finally(() => {
          this.#inflight.delete(row.id);
          const n = (this.#perAccount.get(row.account_id) ?? 1) - 1;
          if (n > 0) this.#perAccount.set(row.account_id, n);
          else this.#perAccount.delete(row.account_id);
          // Claims go in batches: at full concurrency a finished delivery wakes the claim only
          // once a batch of slots is free, not one claim per delivery.
          if (this.#running && this.#o.concurrency - this.#inflight.size >= this.#batch) this.kick();
        });
      this.#inflight.set(row.id, p);
    }
    return { claimed: rows.length, more: !complete && this.#inflight.size < this.#o.concurrency };
  }

  async #deliver(row: WebhookDeliveryRow): Promise<void> {
    // Between the claim and now a reorg may have orphaned the event (and cancelled the row),
    // or an older rewind left it pending: an event that left the chain is never sent.
    const current = await this.#o.store.db.selectFrom('webhook_deliveries')
      .select(['status', 'lease_owner']).where('id', '=', row.id).executeTakeFirst();
    if (current?.status !== 'pending' || current.lease_owner !== this.id) return;
    if (row.event_id !== null && await this.#o.watch.eventRemoved(this.#o.store.db, row.event_id)) {
      await this.#finish(row, 'cancelled', null, REORG_CANCELLED);
      return;
    }
    const accountTarget = await this.#target(row.account_id);
    // A payment order with its own webhook_url: the account's secret, that URL, always on.
    const target = accountTarget && row.target_url ? { ...accountTarget, url: row.target_url, enabled: true }
      : row.target_url ? await this.#ownTarget(row.account_id, row.target_url) : accountTarget;
    if (!target || (!target.enabled && row.is_test === 0)) {
      await this.#finish(row, 'cancelled', null, target ? 'webhook disabled' : 'no webhook configured');
      return;
    }
    const attempt = row.attempts;
    const tracing = this.#o.tracing;
    const span = tracing?.start('webhook delivery', 'client', undefined, {
      'rpcctl.webhook.id': row.webhook_id, 'rpcctl.webhook.attempt': attempt, 'rpcctl.account.id': row.account_id,
    });
    try {
      const outcome = await this.#post(target, row, attempt, span);
      if (span) traceOutcome(tracing!, span, outcome);
      await this.#record(row, attempt, outcome);
    } finally {
      span?.end();
    }
  }

  async #post(target: Target, row: WebhookDeliveryRow, attempt: number, span?: Span): Promise<Outcome> {
    const startedAt = new Date().toISOString();
    const t0 = performance.now();
    const elapsed = () => Math.round(performance.now() - t0);
    const url = new URL(target.url);
    // A literal IP in the URL skips DNS, so the lookup guard never sees it: check it here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) {
      const reason = blockedReason(literal, this.#o.config.webhooks.allow_private_urls);
      if (reason) return { status: null, error: `refused: ${reason}`, durationMs: 0, startedAt };
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const timeout = this.#o.config.webhooks.timeout_ms;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'rpcctl-webhooks/1',
      'x-timestamp': String(timestamp),
      'x-signature': signWebhook(target.secret, timestamp, row.body),
      'x-webhook-id': row.webhook_id,
      'x-webhook-attempt': String(attempt),
    };
    if (span) {
      this.#o.tracing!.inject(span, headers);
      span.setAttribute('server.address', url.host);
    }
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher: this.#agent,
        headers,
        body: row.body,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: AbortSignal.timeout(timeout),
      });
      const excerpt = await readExcerpt(res.body);
      return { status: res.statusCode, error: null, durationMs: elapsed(), startedAt, excerpt };
    } catch (err) {
      const e = err as Error & { code?: string; cause?: Error & { code?: string } };
      const name = e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' ? `timed out after ${timeout} ms` : (e.cause?.message ?? e.message);
      return { status: null, error: name, durationMs: elapsed(), startedAt };
    }
  }

  async #record(row: WebhookDeliveryRow, attempt: number, o: Outcome): Promise<void> {
    const ok = o.status !== null && o.status >= 200 && o.status < 300;
    const gone = o.status === 410;
    const delay = ok || gone ? undefined : retryDelayMs(attempt, this.#o.schedule);
    const nextAt = delay === undefined ? null : Date.now() + delay;
    const error = ok ? null : gone ? 'receiver answered 410 Gone; not retried' : o.error ?? `receiver answered HTTP ${o.status}`;
    this.#o.onAttempt?.(ok ? 'delivered' : gone ? 'gone' : nextAt === null ? 'failed' : 'retry');
    const db = this.#o.store.db;
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('webhook_attempts').values({
        delivery_id: row.id, attempt, started_at: o.startedAt, status_code: o.status, duration_ms: o.durationMs,
        error, next_retry_at: nextAt === null ? null : new Date(nextAt).toISOString(), response_excerpt: o.excerpt ?? null,
      }).execute();
      // Orphaned while in flight: whatever the receiver answered, no retry and no bill.
      if (row.event_id !== null && await this.#o.watch.eventRemoved(trx, row.event_id)) {
        await trx.updateTable('webhook_deliveries')
          .set({ status: 'cancelled', attempts: attempt, last_status_code: o.status, last_error: REORG_CANCELLED, lease_owner: null, lease_until: null })
          .where('id', '=', row.id).where('status', '=', 'pending').execute();
        return;
      }
      if (ok) {
        // Whoever marks it delivered first bills it: a lease that ran out cannot bill twice.
        const res = await trx.updateTable('webhook_deliveries')
          .set({ status: 'delivered', attempts: attempt, last_status_code: o.status, last_error: null, lease_owner: null, lease_until: null, delivered_at: new Date().toISOString() })
          .where('id', '=', row.id).where('status', '=', 'pending').executeTakeFirst();
        if (Number(res.numUpdatedRows) === 1 && row.is_test === 0) {
          await addUsageIn(trx, [{ account_id: row.account_id, endpoint_id: 0, day: utcDay(Date.now()), method: row.bill_method, requests: 1, credits: row.credits }]);
        }
        return;
      }
      await trx.updateTable('webhook_deliveries')
        .set({
          status: nextAt === null ? 'failed' : 'pending', attempts: attempt, last_status_code: o.status, last_error: error,
          next_attempt_at: nextAt ?? row.next_attempt_at, lease_owner: null, lease_until: null,
        })
        .where('id', '=', row.id).where('status', '=', 'pending').where('lease_owner', '=', this.id).execute();
    });
  }

  async #finish(row: WebhookDeliveryRow, status: 'cancelled', code: number | null, error: string): Promise<void> {
    await this.#o.store.db.updateTable('webhook_deliveries')
      .set({ status, last_status_code: code, last_error: error, lease_owner: null, lease_until: null })
      .where('id', '=', row.id).where('status', '=', 'pending').execute();
  }

  /** URL, switch and signing secret of an account, cached briefly: decrypting per delivery is waste. */
  async #target(accountId: number): Promise<Target | undefined> {
    const hit = this.#targets.get(accountId);
    if (hit && hit.expires > Date.now()) return hit;
    const [webhook, account] = await Promise.all([getWebhook(this.#o.store, accountId), getAccount(this.#o.store, accountId)]);
    if (!webhook || !account) {
      this.#targets.delete(accountId);
      return undefined;
    }
    const target = { url: webhook.url, enabled: webhook.enabled, secret: webhookSecretOf(this.#o.store, account), expires: Date.now() + TARGET_TTL_MS };
    if (this.#targets.size > 10_000) this.#targets.clear();
    this.#targets.set(accountId, target);
    return target;
  }

  /** An order's own URL on an account that has no Address Watch webhook configured. */
  async #ownTarget(accountId: number, url: string): Promise<Target | undefined> {
    const account = await getAccount(this.#o.store, accountId);
    return account && { url, enabled: true, secret: webhookSecretOf(this.#o.store, account), expires: 0 };
  }

  /** Forget cached targets (after a PUT of the webhook in this process). */
  invalidate(accountId: number): void {
    this.#targets.delete(accountId);
  }

  #sleep(ms: number): Promise<void> {
    if (this.#kicked) {
      this.#kicked = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#wake = () => {
        clearTimeout(this.#timer);
        this.#kicked = false;
        resolve();
      };
      this.#timer = setTimeout(() => { this.#kicked = false; resolve(); }, ms);
    });
  }
}
