import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Row types of the store. JSON columns hold text; booleans are 0/1 (SQLite has neither). */
export interface Database {
  plans: PlansTable;
  networks: NetworksTable;
  network_environments: NetworkEnvironmentsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  endpoints: EndpointsTable;
  usage_daily: UsageDailyTable;
}

export interface PlansTable {
  id: number;
  slug: string;
  name: string;
  included_credits: number;
  rps_limit: number;
  endpoints_limit: number;
  webhook_address_slots: number;
  network_limit: number | null;
  allowed_network_slugs: string;
}

export interface NetworksTable {
  id: number;
  uuid: string;
  slug: string;
  name: string;
  family: string;
  sort: number;
  credits: string;
  active: number;
}

export interface NetworkEnvironmentsTable {
  id: number;
  network_id: number;
  slug: string;
  upstreams: string;
  confirmations: number;
  position: number;
  active: number;
}

export interface AccountsTable {
  id: Generated<number>;
  name: string | null;
  plan_id: number;
  webhook_secret: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: number;
  prefix: string;
  secret: string;
  name: string | null;
  allowed_ips: string;
  created_at: string;
  revoked_at: string | null;
}

export interface EndpointsTable {
  id: Generated<number>;
  uuid: string;
  account_id: number;
  name: string;
  status: string;
  network_environment_id: number;
  allowed_ips: string;
  created_at: string;
  updated_at: string;
  version: string | null;
  block_height: number | null;
}

/** endpoint_id 0 holds account-level charges that belong to no endpoint (webhook deliveries). */
export interface UsageDailyTable {
  account_id: number;
  endpoint_id: number;
  day: string;
  method: string;
  requests: number;
  credits: number;
}

export type PlanRow = Selectable<PlansTable>;
export type NetworkRow = Selectable<NetworksTable>;
export type EnvironmentRow = Selectable<NetworkEnvironmentsTable>;
export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type EndpointRow = Selectable<EndpointsTable>;
export type NewEndpoint = Insertable<EndpointsTable>;
export type EndpointUpdate = Updateable<EndpointsTable>;
