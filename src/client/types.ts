/** Shapes of the Public API, as clients see them. */

export interface Plan {
  id: number;
  slug: string;
  name: string;
  included_credits: number;
  rps_limit: number;
  endpoints_limit: number;
  webhook_address_slots: number;
}

export interface AccountUsageSummary {
  period: string;
  requests: number;
  credits_used: number;
  credits_included: number;
  credits_remaining: number;
}

export interface Account {
  user_id: number;
  plan: Plan | null;
  usage: AccountUsageSummary;
}

export type EndpointStatus = 'active' | 'paused';

export interface Endpoint {
  id: number;
  uuid: string;
  name: string;
  status: EndpointStatus;
  network_id: number;
  network_name: string;
  network_slug: string;
  network_environment_id: number;
  env_slug: string;
  url: string;
  rps_limit: number;
  plan_id: number;
  created_at: string;
  version: string | null;
  block_height: number | null;
  allowed_ips: string[];
}

export interface AvailableNetwork {
  id: number;
  uuid: string;
  name: string;
  slug: string;
  sort: number;
  environment_kinds: string[];
}

export interface AvailableNetworks {
  networks: AvailableNetwork[];
  network_limit: number | null;
  allowed_network_slugs: string[];
}

export interface Usage {
  days: number;
  total_requests: number;
  total_credits: number;
  series: Array<{ date: string; requests: number; credits: number }>;
  methods: Array<{ method: string; requests: number; credits: number }>;
}

export type UsageDays = 7 | 30 | 90;

/** One change in the audit log (GET /v1/account/audit). */
export interface AuditEntry {
  audit_id: string;
  created_at: string;
  /** A cabinet login (label: its e-mail), an API key (label: its prefix) or the operator ('rpcctl admin'). */
  actor: { kind: 'login' | 'key' | 'admin'; id: string; label: string };
  /** `endpoint.create`, `key.revoke`, `webhook.set`, ... */
  action: string;
  target: { type: string; id: string | null };
  changes: Record<string, unknown> | null;
  ip: string | null;
}

export interface AuditPage {
  entries: AuditEntry[];
  /** Pass as `before` for the next (older) page; null on the last one. */
  next_before: string | null;
  retention_days: number | null;
}

/** One gateway call in an endpoint's request log (`GET /v1/endpoints/{id}/logs`). */
export interface RequestLogEntry {
  id: string;
  at: string;
  method: string;
  status: number;
  rpc_code: number | null;
  latency_ms: number;
  credits: number;
  client_ip: string;
  cached: boolean;
  /** Elements of a batch (one entry per batch); null for a single call. */
  batch: number | null;
}

export interface RequestLogPage {
  ok: true;
  calls: RequestLogEntry[];
  next_before: string | null;
  cursor: string;
  kept_per_worker: number;
}

export interface RequestLogQuery {
  limit?: number;
  status?: 'all' | 'error';
  method?: string;
  before?: string;
  after?: string;
}

export type CreateEndpointInput =
  | { name: string; network_environment_id: number }
  | { name: string; network_id: number; env_slug: string };
