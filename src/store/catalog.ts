import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import { ConfigError } from '../config/index.js';
import { isFamily, traitsOf, UnknownFamilyError } from '../chains/traits.js';
import type { Database, PlanRow } from './tables.js';
import type { UtxoAddressFormat } from '../chains/utxo/address.js';
import type { NetworkFamily } from '../chains/family.js';

// Named by the chain families' registry (chains/ sits below the store).
export type { NetworkFamily } from '../chains/family.js';

// Defined beside the codec that reads it (chains/ sits below the store).
export type { UtxoAddressFormat } from '../chains/utxo/address.js';

export interface Network {
  id: number;
  uuid: string;
  slug: string;
  name: string;
  family: NetworkFamily;
  sort: number;
  credits: { default: number; methods: Record<string, number>; logs_block_unit?: number };
  environments: Environment[];
}

export interface Environment {
  id: number;
  slug: string;
  network: Network;
  upstreams: string[];
  confirmations: number;
  /** Confirmations after which a transaction is final: config's `finality_depth`, else the family's. */
  finalityDepth: number;
  /** UTXO family: the address prefixes; undefined for other families. */
  addressFormat?: UtxoAddressFormat;
}

/** A plan row with its network allowlist parsed (the API shows it as wire/ Plan). */
export type CatalogPlan = Omit<PlanRow, 'allowed_network_slugs'> & { allowed_network_slugs: string[] };

/** Networks and plans as the running service sees them; config is their source of truth. */
export class Catalog {
  readonly networks: Network[];
  readonly plans: CatalogPlan[];
  readonly #envById = new Map<number, Environment>();
  readonly #netById = new Map<number, Network>();
  readonly #netBySlug = new Map<string, Network>();
  readonly #planById = new Map<number, CatalogPlan>();
  readonly #planBySlug = new Map<string, CatalogPlan>();

  constructor(networks: Network[], plans: CatalogPlan[]) {
    this.networks = [...networks].sort((a, b) => a.sort - b.sort || a.id - b.id);
    this.plans = plans;
    for (const n of networks) {
      this.#netById.set(n.id, n);
      this.#netBySlug.set(n.slug, n);
      for (const e of n.environments) this.#envById.set(e.id, e);
    }
    for (const p of plans) {
      this.#planById.set(p.id, p);
      this.#planBySlug.set(p.slug, p);
    }
  }

  environment(id: number): Environment | undefined { return this.#envById.get(id); }
  network(id: number): Network | undefined { return this.#netById.get(id); }
  networkBySlug(slug: string): Network | undefined { return this.#netBySlug.get(slug); }
  plan(id: number): CatalogPlan | undefined { return this.#planById.get(id); }
  planBySlug(slug: string): CatalogPlan | undefined { return this.#planBySlug.get(slug); }

  /** `eth` is the network's first (default) environment; `eth-sepolia` names one. */
  environmentBySlug(slug: string): Environment | undefined {
    const direct = this.#netBySlug.get(slug);
    if (direct) return direct.environments[0];
    const dash = slug.lastIndexOf('-');
    if (dash <= 0) return undefined;
    return this.#netBySlug.get(slug.slice(0, dash))?.environments.find((e) => e.slug === slug.slice(dash + 1));
  }
}

/** Writes config's networks and plans into the store, keeping the ids endpoints refer to. */
export async function syncCatalog(db: Kysely<Database>, config: Config): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const existingNets = await trx.selectFrom('networks').selectAll().execute();
    const bySlug = new Map(existingNets.map((n) => [n.slug, n]));
    let nextNetId = Math.max(0, ...existingNets.map((n) => n.id), ...config.networks.map((n) => n.id ?? 0)) + 1;
    await trx.updateTable('networks').set({ active: 0 }).execute();
    await trx.updateTable('network_environments').set({ active: 0 }).execute();

    const existingEnvs = await trx.selectFrom('network_environments').selectAll().execute();
    let nextEnvId = Math.max(0, ...existingEnvs.map((e) => e.id),
      ...config.networks.flatMap((n) => n.environments.map((e) => e.id ?? 0))) + 1;

    for (const [i, n] of config.networks.entries()) {
      const stored = bySlug.get(n.slug);
      if (stored && n.id !== undefined && stored.id !== n.id) {
        throw new ConfigError(`networks[${i}].id: network "${n.slug}" is stored with id ${stored.id}; ids cannot change once endpoints may refer to them`);
      }
      const id = stored?.id ?? n.id ?? nextNetId++;
      const row = { slug: n.slug, name: n.name, family: n.family, sort: n.sort, credits: JSON.stringify(n.credits), active: 1 };
      if (stored) await trx.updateTable('networks').set(row).where('id', '=', id).execute();
      else await trx.insertInto('networks').values({ id, uuid: randomUUID(), ...row }).execute();

      for (const [j, e] of n.environments.entries()) {
        const storedEnv = existingEnvs.find((x) => x.network_id === id && x.slug === e.slug);
        if (storedEnv && e.id !== undefined && storedEnv.id !== e.id) {
          throw new ConfigError(`networks[${i}].environments[${j}].id: environment "${n.slug}-${e.slug}" is stored with id ${storedEnv.id}`);
        }
        const clash = existingEnvs.find((x) => x.id === e.id && (x.network_id !== id || x.slug !== e.slug));
        if (clash) throw new ConfigError(`networks[${i}].environments[${j}].id: id ${e.id} already belongs to another environment`);
        const envId = storedEnv?.id ?? e.id ?? nextEnvId++;
        const builtInFormat = traitsOf(n.family).config.addressFormat;
        const format = builtInFormat ? e.address_format ?? builtInFormat(e.slug) : undefined;
        const envRow = {
          network_id: id, slug: e.slug, upstreams: JSON.stringify(e.upstreams), confirmations: e.confirmations, position: j, active: 1,
          finality_depth: e.finality_depth ?? null, address_format: format ? JSON.stringify(format) : null,
        };
        if (storedEnv) await trx.updateTable('network_environments').set(envRow).where('id', '=', envId).execute();
        else await trx.insertInto('network_environments').values({ id: envId, ...envRow }).execute();
      }
    }

    for (const p of config.plans) {
      const row = { ...p, allowed_network_slugs: JSON.stringify(p.allowed_network_slugs) };
      await trx.insertInto('plans').values(row)
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
    }
  });
}

export async function loadCatalog(db: Kysely<Database>): Promise<Catalog> {
  const [nets, envs, plans] = await Promise.all([
    db.selectFrom('networks').selectAll().where('active', '=', 1).execute(),
    db.selectFrom('network_environments').selectAll().where('active', '=', 1).orderBy('position').execute(),
    db.selectFrom('plans').selectAll().orderBy('id').execute(),
  ]);
  const networks: Network[] = nets.map((n) => {
    // A row a newer version wrote: said here, naming the network, not scanned as some other family.
    if (!isFamily(n.family)) throw new UnknownFamilyError(n.family, `network "${n.slug}" in the store`);
    return {
      id: n.id, uuid: n.uuid, slug: n.slug, name: n.name, family: n.family, sort: n.sort,
      credits: JSON.parse(n.credits) as Network['credits'], environments: [],
    };
  });
  const byId = new Map(networks.map((n) => [n.id, n]));
  for (const e of envs) {
    const network = byId.get(e.network_id);
    if (!network) continue;
    network.environments.push({
      id: e.id, slug: e.slug, network, upstreams: JSON.parse(e.upstreams) as string[], confirmations: e.confirmations,
      finalityDepth: e.finality_depth ?? traitsOf(network.family).payments.finalityDepth,
      ...(e.address_format ? { addressFormat: JSON.parse(e.address_format) as UtxoAddressFormat } : {}),
    });
  }
  return new Catalog(
    networks.filter((n) => n.environments.length > 0),
    plans.map((p) => ({ ...p, allowed_network_slugs: JSON.parse(p.allowed_network_slugs) as string[] })),
  );
}

/** `eth` for a network's default environment, `eth-sepolia` for the others. */
export function envIdentifier(env: Environment): string {
  return env.network.environments[0]?.id === env.id ? env.network.slug : `${env.network.slug}-${env.slug}`;
}
