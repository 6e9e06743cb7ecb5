/**
 * What `rpcctl __complete KIND` lists (completion/complete.ts; which arguments take which:
 * completion/run.ts). Beside the groups, not in completion/: the definitions need it, and
 * `--help` loads no file of a group but its command.ts.
 */
export const DYNAMIC_KINDS = ['endpoints', 'profiles', 'networks', 'watches', 'payments', 'payouts'] as const;
export type DynamicKind = typeof DYNAMIC_KINDS[number];
