import { z } from 'zod';
import type { Environment } from '../store/index.js';
import { badRequest } from './http.js';
import type { AppContext } from './router.js';

// Helpers the features' route files share (watch/routes.ts, webhooks/routes.ts): part of the
// API kit, so neither feature imports the other's routes for them.

/** The environment a request names by slug, or a 400 that says how to name one. */
export function resolveEnv(app: AppContext, field: string, slug: string): Environment {
  const env = app.store.catalog.environmentBySlug(slug);
  if (!env) throw badRequest(`${field}: unknown network "${slug}" (use a network slug such as "eth", or "{network}-{environment}" such as "eth-sepolia")`);
  return env;
}

/** How far back a list goes: older rows are deleted by the retention job (null: kept for ever). */
export const retentionDays = z.number().int().nullable().meta({ description: 'days kept: older items are deleted (finished deliveries only); null: kept for ever' });
export const keptFor = (days: number) => (days === 0 ? null : days);
