import type { Config } from '../config/index.js';
import { CHANNELS, type Environment, type Store } from '../store/index.js';
import { IpAllowlist } from '../util/ip.js';

/** What the gateway knows of one endpoint; the RPS window lives here so the hot path allocates nothing. */
export interface EndpointState {
  id: number;
  uuid: string;
  accountId: number;
  paused: boolean;
  allowlist: IpAllowlist;
  /** Undefined when the endpoint's environment left the config: it stops routing. */
  env: Environment | undefined;
  /** `{host_prefix}-{network}-{env}`, the first label its Host header may carry. */
  hostLabel: string;
  rpsLimit: number;
  windowSecond: number;
  windowCount: number;
}

/**
 * Endpoints by UUID, in memory. Changes made through the Public API in this process apply at
 * once (`refresh(id)`); a full reload every few seconds picks up what other processes changed
 * (an operator's plan change).
 */
export class EndpointRegistry {
  readonly #store: Store;
  readonly #config: Config;
  #byUuid = new Map<string, EndpointState>();
  #timer: NodeJS.Timeout | undefined;
  #reloading: Promise<void> | undefined;
  #versionTimer: NodeJS.Timeout | undefined;
  #version: string | undefined;
  #unlisten: () => void = () => {};

  constructor(store: Store, config: Config) {
    this.#store = store;
    this.#config = config;
  }

  get(uuid: string): EndpointState | undefined {
    return this.#byUuid.get(uuid);
  }

  get size(): number {
    return this.#byUuid.size;
  }

  async start(reloadMs = 5000): Promise<void> {
    await this.reload();
    this.#timer = setInterval(() => {
      this.reload().catch(() => { /* keep serving the last good view; the next tick retries */ });
    }, reloadMs);
    this.#timer.unref();
    // Several instances: a change made through any instance's API (or `rpcctl admin`) is
    // announced in its transaction; the version check below catches a missed announcement.
    this.#unlisten = this.#store.notifications.on(CHANNELS.endpoints, (payload) => {
      const id = payload.startsWith('e:') ? Number(payload.slice(2)) : NaN;
      (Number.isSafeInteger(id) ? this.refresh(id) : this.reload()).catch(() => {});
    }, () => { this.reload().catch(() => {}); });
    if (this.#store.kind === 'postgres') {
      this.#versionTimer = setInterval(() => { this.#checkVersion().catch(() => {}); }, 1000);
      this.#versionTimer.unref();
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    clearInterval(this.#versionTimer);
    this.#unlisten();
  }

  /** Reloads when the endpoints' newest change or their number moved since the last look. */
  async #checkVersion(): Promise<void> {
    const row = await this.#store.db.selectFrom('endpoints')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('updated_at').as('v')]).executeTakeFirst();
    const version = `${Number(row?.n ?? 0)}/${String(row?.v ?? '')}`;
    if (this.#version !== undefined && version !== this.#version) await this.reload();
    this.#version = version;
  }

  async reload(): Promise<void> {
    this.#reloading ??= (async () => {
      try {
        const rows = await this.#query().execute();
        const next = new Map<string, EndpointState>();
        for (const row of rows) next.set(row.uuid, this.#toState(row, this.#byUuid.get(row.uuid)));
        this.#byUuid = next;
      } finally {
        this.#reloading = undefined;
      }
    })();
    return this.#reloading;
  }

  async refresh(endpointId: number): Promise<void> {
    const row = await this.#query().where('e.id', '=', endpointId).executeTakeFirst();
    if (row) this.#byUuid.set(row.uuid, this.#toState(row, this.#byUuid.get(row.uuid)));
  }

  #query() {
    return this.#store.db.selectFrom('endpoints as e')
      .innerJoin('accounts as a', 'a.id', 'e.account_id')
      .select(['e.id', 'e.uuid', 'e.account_id', 'e.status', 'e.allowed_ips', 'e.network_environment_id', 'a.plan_id']);
  }

  /**
   * Updates the known object in place: a request that looked it up before a refresh (and is
   * still reading its body) then counts against the same RPS window as the ones after it.
   */
  #toState(
    row: { id: number; uuid: string; account_id: number; status: string; allowed_ips: string; network_environment_id: number; plan_id: number },
    previous: EndpointState | undefined,
  ): EndpointState {
    const catalog = this.#store.catalog;
    const env = catalog.environment(row.network_environment_id);
    const current = {
      accountId: row.account_id,
      paused: row.status !== 'active',
      allowlist: new IpAllowlist(JSON.parse(row.allowed_ips) as string[]),
      env,
      hostLabel: env ? `${this.#config.gateway.host_prefix}-${env.network.slug}-${env.slug}` : '',
      rpsLimit: catalog.plan(row.plan_id)?.rps_limit ?? 0,
    };
    if (previous) return Object.assign(previous, current);
    return { id: row.id, uuid: row.uuid, ...current, windowSecond: 0, windowCount: 0 };
  }
}
