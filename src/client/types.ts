/**
 * Shapes of the Public API, as clients see them. Those the server validates and documents are
 * inferred from its schemas in wire/ (types only: nothing of zod loads with the client).
 */
import type { AuditEntry, Plan } from '../wire/account.js';

export type { AuditEntry, Endpoint, EndpointStatus, Plan, RequestLogEntry, RequestLogPage, Usage } from '../wire/account.js';

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

export type UsageDays = 7 | 30 | 90;

export interface AuditPage {
  entries: AuditEntry[];
  /** Pass as `before` for the next (older) page; null on the last one. */
  next_before: string | null;
  retention_days: number | null;
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
  | { name: string; network_id: number; env_slug: string }
  | { name?: string; network_slug: string; env_slug: string };
