/**
 * The base of every error rpcctl raises on purpose. `code` is the stable part, a literal per
 * class (or a union of literals): callers branch on it — the Public API's status table
 * (`api/http.ts STATUS_BY_CODE`), the CLI's exit codes — so a message can be reworded without
 * changing what anyone does with the error. `cause` is the ES2022 one: the failure this one
 * explains. `name` is left as each class sets it (several print it), so adopting the base
 * changes no output.
 */
export abstract class RpcctlError extends Error {
  abstract readonly code: string;
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** The stable code of an error rpcctl raised, or undefined for anything else (a bug, a library's error). */
export function errorCode(err: unknown): string | undefined {
  return err instanceof RpcctlError ? err.code : undefined;
}
