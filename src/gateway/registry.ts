import type { Config } from '../config/index.js';
import { CHANNELS, endpointRoutesQuery, type Catalog, type Environment, type Store } from '../store/index.js';
import { IpAllowlist } from '../util/ip.js';
import { Supervisor } from '../runtime/supervisor.js';

/** The registry's periodic check under the supervisor. */
export const REGISTRY_CHECK_TASK = 'registry-check';

/** What the gateway knows of one endpoint; its RPS window is slot `slot` of the shared windows (rps-shared.ts). */
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
  slot: number;
  /** The environment id the row names (kept when the environment left the config). */
  envId: number;
}

/** What the gateway looks endpoints up in (the main thread's registry, or a worker's copy). */
export interface EndpointLookup {
  get(uuid: string): EndpointState | undefined;
}

/** One endpoint as the main thread sends it to gateway workers: id, uuid, account, paused, allowed_ips (JSON), environment, RPS limit, slot. */
export type EndpointWire = [number, string, number, 0 | 1, string, number, number, number];

/**
 * Every endpoint in columns (the snapshot a gateway worker starts from): one string of the
 * UUIDs end to end, six numbers per endpoint (id, account, paused, environment, RPS limit,
 * slot), and the allowlists that are not empty. Cloned to a worker as a few flat blocks
 * rather than one small array per endpoint.
 */
export interface EndpointPack {
  uuids: string;
  numbers: Float64Array;
  allowlists: Array<[index: number, json: string]>;
}

/** Most endpoints have no allowlist: they share one empty list instead of one each. */
const NO_ALLOWLIST = new IpAllowlist([]);
/**
 * Rows whose `updated_at` is this close to the newest one seen are read again at each check:
 * a transaction that stamped its row a moment before another's but committed after it is not missed.
 */
const RECHECK_MS = 10_000;

/**
 * Endpoints by UUID, in memory, built from wire rows: shared by the main thread's registry and
 * the gateway workers' copies. An update changes the known object in place, so a request that
 * looked it up before (and is still reading its body) sees the new state.
 */
export class EndpointTable implements EndpointLookup {
  #catalog: Catalog;
  readonly #hostPrefix: string;
  readonly #byUuid = new Map<string, EndpointState>();
  readonly #byId = new Map<number, EndpointState>();
  readonly #labels = new Map<number, string>();

  constructor(catalog: Catalog, hostPrefix: string) {
    this.#catalog = catalog;
    this.#hostPrefix = hostPrefix;
  }

  get(uuid: string): EndpointState | undefined {
    return this.#byUuid.get(uuid);
  }

  get size(): number {
    return this.#byUuid.size;
  }

  /**
   * A new catalog (a config reload): every endpoint's environment is looked up in it, in place,
   * so a request already holding an endpoint sees where it now routes.
   */
  recatalog(catalog: Catalog): void {
    this.#catalog = catalog;
    this.#labels.clear();
    for (const ep of this.#byUuid.values()) {
      ep.env = catalog.environment(ep.envId);
      ep.hostLabel = ep.env ? `${this.#hostPrefix}-${ep.env.network.slug}-${ep.env.slug}` : '';
    }
  }

  byId(id: number): EndpointState | undefined {
    return this.#byId.get(id);
  }

  values(): IterableIterator<EndpointState> {
    return this.#byUuid.values();
  }

  /** Every endpoint, packed. */
  pack(): EndpointPack {
    const n = this.#byUuid.size;
    const numbers = new Float64Array(n * 6);
    const uuids: string[] = new Array(n);
    const allowlists: Array<[number, string]> = [];
    let i = 0;
    for (const ep of this.#byUuid.values()) {
      uuids[i] = ep.uuid;
      const o = i * 6;
      numbers[o] = ep.id;
      numbers[o + 1] = ep.accountId;
      numbers[o + 2] = ep.paused ? 1 : 0;
      numbers[o + 3] = ep.envId;
      numbers[o + 4] = ep.rpsLimit;
      numbers[o + 5] = ep.slot;
      if (ep.allowlist !== NO_ALLOWLIST) allowlists.push([i, allowlistText(ep)]);
      i++;
    }
    return { uuids: uuids.join(''), numbers, allowlists };
  }

  applyPack(pack: EndpointPack): void {
    const { uuids, numbers } = pack;
    const allow = new Map(pack.allowlists);
    const n = numbers.length / 6;
    for (let i = 0; i < n; i++) {
      const o = i * 6;
      this.#applyOne(numbers[o]!, uuids.slice(i * 36, i * 36 + 36), numbers[o + 1]!, numbers[o + 2] === 1 ? 1 : 0, allow.get(i) ?? '[]',
        numbers[o + 3]!, numbers[o + 4]!, numbers[o + 5]!);
    }
  }

  /** Applies rows; answers the ones that changed anything. */
  apply(rows: readonly EndpointWire[]): EndpointWire[] {
    const changed: EndpointWire[] = [];
    for (const row of rows) if (this.#applyOne(...row)) changed.push(row);
    return changed;
  }

  #applyOne(id: number, uuid: string, accountId: number, paused: 0 | 1, allowedIps: string, envId: number, rpsLimit: number, slot: number): boolean {
    const env = this.#catalog.environment(envId);
    const prev = this.#byUuid.get(uuid);
    if (prev && prev.accountId === accountId && prev.paused === (paused === 1) && prev.env === env && prev.rpsLimit === rpsLimit
      && allowlistText(prev) === allowedIps) return false;
    const allowlist = allowedIps === '[]' ? NO_ALLOWLIST : withText(new IpAllowlist(JSON.parse(allowedIps) as string[]), allowedIps);
    let hostLabel = this.#labels.get(envId);
    if (hostLabel === undefined) {
      hostLabel = env ? `${this.#hostPrefix}-${env.network.slug}-${env.slug}` : '';
      this.#labels.set(envId, hostLabel);
    }
    if (prev) {
      prev.accountId = accountId;
      prev.paused = paused === 1;
      prev.allowlist = allowlist;
      prev.env = env;
      prev.hostLabel = hostLabel;
      prev.rpsLimit = rpsLimit;
      prev.envId = envId;
    } else {
      const ep: EndpointState = { id, uuid, accountId, paused: paused === 1, allowlist, env, hostLabel, rpsLimit, slot, envId };
      this.#byUuid.set(uuid, ep);
      this.#byId.set(id, ep);
    }
    return true;
  }
}

/** The JSON an allowlist was built from, kept on it to tell a change from a repeat. */
const TEXT = new WeakMap<IpAllowlist, string>();
function withText(list: IpAllowlist, text: string): IpAllowlist {
  TEXT.set(list, text);
  return list;
}
function allowlistText(ep: EndpointState): string {
  return ep.allowlist === NO_ALLOWLIST ? '[]' : TEXT.get(ep.allowlist) ?? '';
}

/**
 * The main thread's registry: reads endpoints from the store and pushes what changed to the
 * gateway workers (`onChange`). Changes made through the Public API in this process apply at
 * once (`refresh(id)`, which waits for every worker); changes by other processes (`rpcctl
 * admin`, other instances) are found by a cheap check every `checkMs`, which reads only the
 * rows whose `updated_at` moved (an index; a plan change stamps its account's endpoints);
 * PostgreSQL also announces them with NOTIFY.
 */
export class EndpointRegistry implements EndpointLookup {
  readonly #store: Store;
  readonly #table: EndpointTable;
  #slots = 0;
  #supervisor: Supervisor | undefined;
  #unlisten: () => void = () => {};
  #newest = '';
  /** When the last full read or check began (ms): every row committed before then was seen. */
  #seenUntil = 0;
  #checking: Promise<void> | undefined;
  /** Called with the rows that changed; the change counts as applied when it resolves. */
  onChange: (rows: EndpointWire[]) => Promise<void> = async () => {};
  /** Called after a new slot was given out (the shared windows must cover it). */
  onSlots: (count: number) => void = () => {};

  constructor(store: Store, config: Config) {
    this.#store = store;
    this.#table = new EndpointTable(store.catalog, config.gateway.host_prefix);
  }

  get(uuid: string): EndpointState | undefined {
    return this.#table.get(uuid);
  }

  get size(): number {
    return this.#table.size;
  }

  /** Every endpoint, packed: the snapshot a gateway worker starts from. */
  snapshot(): EndpointPack {
    return this.#table.pack();
  }

  /** The supervisor that runs the periodic check (one of its own when none is given). */
  async start(checkMs = 1000, supervisor: Supervisor = new Supervisor()): Promise<void> {
    await this.reload();
    // A failed check (the store away) keeps serving the last good view; the next run retries.
    this.#supervisor = supervisor;
    supervisor.every(REGISTRY_CHECK_TASK, checkMs, () => this.check(), { immediate: false });
    // Several instances: a change made through any instance's API (or `rpcctl admin`) is
    // announced in its transaction; the version check catches a missed announcement.
    this.#unlisten = this.#store.notifications.on(CHANNELS.endpoints, (payload) => {
      const id = Number(payload.slice(2));
      const work = !Number.isSafeInteger(id) ? this.check()
        : payload.startsWith('e:') ? this.refresh(id) : payload.startsWith('a:') ? this.refreshAccount(id) : this.check();
      work.catch(() => {});
    }, () => { this.check().catch(() => {}); });
  }

  async stop(): Promise<void> {
    this.#unlisten();
    await this.#supervisor?.cancel(REGISTRY_CHECK_TASK);
  }

  /**
   * The store's catalog changed (a config reload): environments are looked up anew and every
   * endpoint is read again, since a plan's RPS limit may have changed. The workers' copies take
   * the new catalog first (their own `recatalog`), then the rows that changed.
   */
  async recatalog(): Promise<void> {
    this.#table.recatalog(this.#store.catalog);
    await this.reload();
  }

  /** Reads every endpoint (start-up). */
  async reload(): Promise<void> {
    // In pages by id: 100k endpoints never sit in memory as rows all at once.
    this.#seenUntil = Date.now();
    let after = 0;
    for (;;) {
      const rows = await this.#query().where('e.id', '>', after).orderBy('e.id').limit(10_000).execute();
      if (rows.length === 0) return;
      await this.#apply(rows);
      after = rows[rows.length - 1]!.id;
    }
  }

  /** Reads what changed since the last look. Concurrent calls share one read. */
  check(): Promise<void> {
    this.#checking ??= (async () => {
      try {
        const startedAt = Date.now();
        // Rows stamped long before the last look were committed before it too: without this
        // bound, rows written in one bulk (one `updated_at`) were all read again at every check.
        const floor = Math.max(this.#newest ? Date.parse(this.#newest) : 0, this.#seenUntil) - RECHECK_MS;
        const since = floor > 0 ? new Date(floor).toISOString() : '';
        await this.#apply(await this.#query().where('e.updated_at', '>=', since).execute());
        this.#seenUntil = startedAt;
      } finally {
        this.#checking = undefined;
      }
    })();
    return this.#checking;
  }

  async refresh(endpointId: number): Promise<void> {
    await this.#apply(await this.#query().where('e.id', '=', endpointId).execute());
  }

  async refreshAccount(accountId: number): Promise<void> {
    await this.#apply(await this.#query().where('e.account_id', '=', accountId).execute());
  }

  #query() {
    return endpointRoutesQuery(this.#store);
  }

  async #apply(rows: Array<{
    id: number; uuid: string; account_id: number; status: string; allowed_ips: string; network_environment_id: number; updated_at: string; plan_id: number;
  }>): Promise<void> {
    const catalog = this.#store.catalog;
    const wires: EndpointWire[] = [];
    let newSlots = false;
    /** Slots given in this batch (a row may come twice in one batch). */
    let pending: Map<number, number> | undefined;
    for (const row of rows) {
      if (row.updated_at > this.#newest) this.#newest = row.updated_at;
      let slot = this.#table.byId(row.id)?.slot ?? pending?.get(row.id);
      if (slot === undefined) {
        slot = this.#slots++;
        (pending ??= new Map()).set(row.id, slot);
        newSlots = true;
      }
      const wire: EndpointWire = [row.id, row.uuid, row.account_id, row.status !== 'active' ? 1 : 0, row.allowed_ips,
        row.network_environment_id, catalog.plan(row.plan_id)?.rps_limit ?? 0, slot];
      wires.push(wire);
    }
    if (newSlots) this.onSlots(this.#slots);
    const changed = this.#table.apply(wires);
    if (changed.length === 0) return;
    await this.onChange(changed);
  }
}
