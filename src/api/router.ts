import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import type { Config } from '../config/index.js';
import { roleAllows, type AccountRow, type ActiveKey, type AuditChange, type Role, type Store } from '../store/index.js';
import { HttpError } from './http.js';
import type { RequestLogQuery, RequestLogRead } from '../gateway/index.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler gets: validated input plus the caller. */
export interface HandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  key: ActiveKey;
  account: AccountRow;
  req: IncomingMessage;
  app: AppContext;
}

/** Shared services of the API process. */
export interface AppContext {
  store: Store;
  config: Config;
  /** Called after a change the gateway must see before the API answers (create, status, allowlist). */
  onEndpointChanged(endpointId: number): Promise<void>;
  /** An endpoint's recent gateway calls on this instance (gateway/request-log.ts). */
  requestLog(endpointId: number, q: RequestLogQuery): Promise<RequestLogRead>;
  /** The API's base URL as customers reach it (`api.public_url`, else the listener's address): checkout links. */
  publicUrl(): string;
  /** Records a change in the audit log; never throws (a failed write is logged and counted, see api/audit.ts). */
  audit(entry: AuditChange): Promise<void>;
}

/** What a changing route's call was, for its audit entry. */
export interface AuditCall<P, B> {
  params: P;
  body: B;
  /** The handler's answer (a created row's id is read from it). */
  result: any;
}

/**
 * How a changing route (any method but GET) is recorded in the audit log: after its handler
 * succeeded, by the one place both the API and the cabinet run handlers (api/audit.ts).
 */
export interface RouteAudit<P = any, B = any> {
  /** `<target>.<verb>`: `endpoint.create`. */
  action: string;
  /**
   * The target and the changed fields worth reading later (never a secret); null when the call
   * changed nothing (an idempotent create that found its row). `action` names what the call did
   * when one route does one of several things (`endpoint.pause`, `endpoint.resume`).
   */
  describe(call: AuditCall<P, B>): { type: string; id?: string | null; action?: string; changes?: Record<string, unknown> } | null;
}

export interface RouteDef<
  P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** OpenAPI-style template: `/v1/endpoints/{id}`. */
  path: string;
  /**
   * The operation's name in openapi.json, which code generators turn into method names: kept
   * when the path changes, so a generated client's methods do not (test/openapi-contract pins the list).
   */
  operationId: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Success body, documented in openapi.json. */
  response: z.ZodType;
  /** Statuses this route can fail with, besides the auth and rate-limit ones every route has. */
  errors?: number[];
  /** Required of every route that changes something (test/audit.test.ts walks the routes). */
  audit?: RouteAudit<z.output<P>, z.output<B>>;
  /** The least role that may call it (the role of the member who made the key): GET viewer, else developer. */
  role?: Role;
  handler(ctx: HandlerContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<object>;
}

export function neededRole(def: Pick<RouteDef, 'method' | 'role'>): Role {
  return def.role ?? (def.method === 'GET' ? 'viewer' : 'developer');
}

/** Refuses (403) a caller whose role is below the route's: a read-only key, a developer's key on owner settings. */
export function checkRole(def: Pick<RouteDef, 'method' | 'path' | 'role'>, role: Role, who: 'key' | 'member'): void {
  const needed = neededRole(def);
  if (roleAllows(role, needed)) return;
  const caller = who === 'key' ? `This API key acts with the role of the member who made it (${role})` : `Your role is ${role}`;
  const what = role === 'viewer' ? 'which may only read' : `and ${def.method} ${def.path} needs the ${needed} role`;
  throw new HttpError(403, `${caller}, ${what}. An owner of the account can change roles in the cabinet (Members).`);
}

/** Keeps the handler's types tied to its schemas. */
export function route<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(def: RouteDef<P, Q, B>): RouteDef {
  return def as unknown as RouteDef;
}

/**
 * What the matcher needs of a route. The API's `RouteDef` and the cabinet's pages both match
 * through `Router`, so paths are split, decoded and compared in one place.
 */
export interface Routable {
  method: string;
  /** `/v1/endpoints/{id}`: a `{name}` segment captures one path segment. */
  path: string;
}

interface Compiled<D extends Routable> {
  def: D;
  segments: string[];
}

export type RouteMatch<D extends Routable = RouteDef> =
  | { kind: 'found'; def: D; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

/** Exact segment matching; a `{name}` segment captures one path segment. */
export class Router<D extends Routable = RouteDef> {
  readonly routes: D[];
  readonly #static = new Map<string, Map<string, D>>();
  readonly #dynamic: Compiled<D>[] = [];

  constructor(routes: D[]) {
    this.routes = routes;
    // Two definitions of one route would leave which one answers to registration order (a
    // cabinet section could shadow a core page): refused when the table is built.
    const seen = new Set<string>();
    for (const def of routes) {
      const key = `${def.method} ${def.path}`;
      if (seen.has(key)) throw new Error(`two routes for ${key}`);
      seen.add(key);
      if (def.path.includes('{')) {
        this.#dynamic.push({ def, segments: def.path.split('/') });
      } else {
        let byMethod = this.#static.get(def.path);
        if (!byMethod) this.#static.set(def.path, (byMethod = new Map()));
        byMethod.set(def.method, def);
      }
    }
  }

  match(method: string, path: string): RouteMatch<D> {
    const normalized = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const byMethod = this.#static.get(normalized);
    if (byMethod) {
      const def = byMethod.get(method);
      if (def) return { kind: 'found', def, params: {} };
    }
    const allow = byMethod ? [...byMethod.keys()] : [];
    const segments = normalized.split('/');
    for (const c of this.#dynamic) {
      if (c.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length; i++) {
        const pattern = c.segments[i]!;
        if (pattern.startsWith('{')) {
          if (segments[i] === '') { ok = false; break; }
          const decoded = safeDecode(segments[i]!);
          if (decoded === undefined) { ok = false; break; }
          params[pattern.slice(1, -1)] = decoded;
        } else if (pattern !== segments[i]) { ok = false; break; }
      }
      if (!ok) continue;
      // A static route wins over a template for the same path (`/v1/endpoints/usage`).
      if (byMethod) continue;
      if (c.def.method === method) return { kind: 'found', def: c.def, params };
      allow.push(c.def.method);
    }
    return allow.length > 0 ? { kind: 'method-not-allowed', allow } : { kind: 'not-found' };
  }
}

/** A malformed %-escape cannot name anything: treat it as no match, not as a server error. */
function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
