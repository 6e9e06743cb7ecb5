/**
 * A cabinet member's role, which its API keys act with too. Ranked: each role may do what the
 * ones below it may. `owner`: members, keys, plan and payments settings; `developer`: endpoints,
 * watches, webhooks and payment orders; `viewer`: reads only.
 */
export const ROLES = ['owner', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, developer: 1, owner: 2 };

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function roleAllows(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

/** A stored role as a Role; anything unknown reads as the least (a row edited by hand grants nothing). */
export function asRole(value: unknown): Role {
  return isRole(value) ? value : 'viewer';
}
