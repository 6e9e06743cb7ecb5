import type { Config } from '../config/index.js';
import type { Catalog, CatalogPlan, EndpointRow } from '../store/index.js';
import type { Endpoint, Plan } from '../wire/account.js';

export function endpointUrl(config: Config, networkSlug: string, envSlug: string, uuid: string): string {
  const g = config.gateway;
  return `${g.scheme}://${g.host_prefix}-${networkSlug}-${envSlug}.${g.rpc_domain}/${uuid}`;
}

export function presentPlan(plan: CatalogPlan | undefined): Plan | null {
  if (!plan) return null;
  return {
    id: plan.id, slug: plan.slug, name: plan.name, included_credits: plan.included_credits,
    rps_limit: plan.rps_limit, endpoints_limit: plan.endpoints_limit, webhook_address_slots: plan.webhook_address_slots,
  };
}

export function presentEndpoint(row: EndpointRow, catalog: Catalog, config: Config, plan: CatalogPlan | undefined): Endpoint {
  const env = catalog.environment(row.network_environment_id);
  const network = env?.network;
  // An environment removed from config keeps its endpoints readable; they just stop routing.
  const networkSlug = network?.slug ?? 'unknown';
  const envSlug = env?.slug ?? 'unknown';
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    status: row.status as Endpoint['status'],
    network_id: network?.id ?? 0,
    network_name: network?.name ?? 'Unknown network',
    network_slug: networkSlug,
    network_environment_id: row.network_environment_id,
    env_slug: envSlug,
    url: endpointUrl(config, networkSlug, envSlug, row.uuid),
    rps_limit: plan?.rps_limit ?? 0,
    plan_id: plan?.id ?? 0,
    created_at: row.created_at,
    version: row.version,
    block_height: row.block_height,
    allowed_ips: JSON.parse(row.allowed_ips) as string[],
  };
}
