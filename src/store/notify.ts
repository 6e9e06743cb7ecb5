import pg from 'pg';
import { channelNameSql } from './dialect.js';

type Handler = (payload: string) => void;

/** How long a close waits for the server to answer the goodbye. */
const CLOSE_WAIT_MS = 1000;

/** Ends the connection politely; a frozen server (SIGSTOP, a paused VM) never answers, so after `ms` the socket is cut. */
async function endOrCut(client: pg.Client, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      client.connection.stream.destroy();
      resolve();
    }, ms);
  });
  try {
    await Promise.race([client.end().catch(() => {}), cut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * PostgreSQL LISTEN on one dedicated connection, reconnected after a failure. Notifications
 * only make other instances act sooner: every user also polls, so a notification lost while
 * the connection was down delays work by at most one poll and loses nothing. On SQLite (no
 * URL) there is one instance and subscribing does nothing. Channels are named by the schema
 * the URL's connections land in (dialect.ts channelNameSql): a deployment in another schema of
 * the database is not heard.
 */
export class Notifications {
  readonly #url: string | undefined;
  readonly #handlers = new Map<string, Set<Handler>>();
  /** The server's name of each channel listened on (schema-scoped) → the channel. */
  readonly #names = new Map<string, string>();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #subscribing: Promise<unknown> = Promise.resolve();
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  /** Called after a reconnect: notifications may have been missed, so users should look now. */
  #onReconnect = new Set<() => void>();

  constructor(url: string | undefined) {
    this.#url = url;
  }

  get enabled(): boolean {
    return this.#url !== undefined;
  }

  /** Subscribes to `channel`; returns the unsubscribe. `onReconnect` runs after a lost connection returns. */
  on(channel: string, handler: Handler, onReconnect?: () => void): () => void {
    if (!this.#url || this.#closed) return () => {};
    let set = this.#handlers.get(channel);
    const isNew = !set;
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
    }
    set.add(handler);
    if (onReconnect) this.#onReconnect.add(onReconnect);
    const client = this.#client;
    // One query at a time on the connection (pg queues them, but warns).
    if (isNew && client) this.#subscribing = this.#subscribing.then(() => this.#listen(client, channel)).catch(() => this.#drop());
    else void this.#connect();
    return () => {
      set.delete(handler);
      if (onReconnect) this.#onReconnect.delete(onReconnect);
    };
  }

  /**
   * Resolves once the subscriptions made so far listen (or their connection failed: the
   * `onReconnect` handlers run when it is back). Read the state a channel announces changes
   * of only after this, or a change committed in between is neither read nor heard.
   */
  async listening(): Promise<void> {
    await this.#connecting;
    await this.#subscribing;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#connecting?.catch(() => {});
    const c = this.#client;
    this.#client = undefined;
    if (c) await endOrCut(c, CLOSE_WAIT_MS);
  }

  #connect(): Promise<void> {
    if (this.#client || this.#closed) return Promise.resolve();
    this.#connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: 3000, keepAlive: true });
      client.on('error', () => this.#drop());
      client.on('end', () => this.#drop());
      client.on('notification', (n) => {
        const channel = this.#names.get(n.channel);
        for (const h of (channel === undefined ? undefined : this.#handlers.get(channel)) ?? []) {
          try { h(n.payload ?? ''); } catch { /* a handler's failure is its own */ }
        }
      });
      try {
        await client.connect();
        for (const channel of this.#handlers.keys()) await this.#listen(client, channel);
        if (this.#closed) {
          await client.end().catch(() => {});
          return;
        }
        this.#client = client;
      } catch {
        await client.end().catch(() => {});
        this.#scheduleRetry();
      }
    })().finally(() => { this.#connecting = undefined; });
    return this.#connecting;
  }

  async #listen(client: pg.Client, channel: string): Promise<void> {
    const { rows } = await client.query<{ name: string }>(`select ${channelNameSql(channel)} as name`);
    const name = rows[0]!.name;
    this.#names.set(name, channel);
    await client.query(`LISTEN ${quoteIdent(name)}`);
  }

  #drop(): void {
    const c = this.#client;
    this.#client = undefined;
    c?.end().catch(() => {});
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#connect().then(() => {
        if (this.#client) for (const f of this.#onReconnect) f();
      });
    }, 1000);
    this.#retry.unref();
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
