import type { IncomingMessage } from 'node:http';
import { Router, type AppContext } from '../api/router.js';
import type { KeyUseRecorder } from '../api/key-use.js';
import type { Config } from '../config/index.js';
import { memoryLimits, type Limits, type WindowLimiter } from '../limits/index.js';
import type { Store } from '../store/index.js';
import { IpAllowlist, normalizeIp } from '../util/ip.js';
import { Assets } from './assets.js';
import type { CabinetCore, CabinetSection, OpenPageRoute, PageRoute } from './context.js';
import { BUILTIN_NAV, type NavItem } from './layout.js';
import { accountRoutes } from './pages/account.js';
import { auditRoutes } from './pages/audit.js';
import { endpointRoutes } from './pages/endpoints.js';
import { requestLogRoutes } from './pages/request-logs.js';
import { keyRoutes } from './pages/keys.js';
import { memberRoutes } from './pages/members.js';
import { overviewRoutes } from './pages/overview.js';
import { twoFactorRoutes } from './pages/two-factor.js';
import { DEFAULT_SESSION_LIMITS, Sessions, type SessionLimits } from './sessions.js';

export interface CabinetOptions {
  store: Store;
  config: Config;
  router: Router;
  app: AppContext;
  keyUse: KeyUseRecorder;
  log?: (line: string) => void;
  sessions?: Partial<SessionLimits>;
  /** The features' pages (Address Watch, Webhooks, Payments), handed in by serve/; nav entries in this order. */
  sections?: CabinetSection[];
  /** Sign-in attempts per minute per client address (default 30) and per e-mail (default 10). */
  signIn?: { perIpPerMinute?: number; perEmailPerMinute?: number };
  /** Where sign-in attempts are counted: with Redis, by every instance together. */
  limits?: Limits;
}

/** What every step of a cabinet request reads: built once, by `openShell`. */
export interface Shell {
  opts: CabinetOptions;
  assets: Assets;
  sessions: Sessions;
  nav: NavItem[];
  /** The core pages and the sections', matched as the API's routes are. */
  pages: Router<PageRoute>;
  /** The sections' pages without sign-in. */
  openPages: Router<OpenPageRoute>;
  core: CabinetCore;
  trusted: IpAllowlist;
  signIn: { limiter: WindowLimiter; perIp: number; perEmail: number };
  /** Served over https: TLS here, or a trusted proxy that says so. */
  isSecure(req: IncomingMessage): boolean;
}

/** The cabinet's own pages; the features' come in as sections. */
export const CORE_PAGES: readonly PageRoute[] = [
  ...overviewRoutes, ...keyRoutes, ...endpointRoutes, ...requestLogRoutes, ...accountRoutes, ...auditRoutes, ...twoFactorRoutes, ...memberRoutes,
];

export function openShell(opts: CabinetOptions): Shell {
  const assets = new Assets();
  const sessions = new Sessions(opts.store, { ...DEFAULT_SESSION_LIMITS, ...opts.sessions });
  const sections = opts.sections ?? [];
  const pages = new Router<PageRoute>([...CORE_PAGES, ...sections.flatMap((s) => s.routes)]);
  const openPages = new Router<OpenPageRoute>(sections.flatMap((s) => s.open ?? []));
  const trusted = new IpAllowlist(opts.config.api.trusted_proxies);
  // Counted where the API's limits are: spreading guesses over the instances gains nothing.
  const signIn = {
    limiter: (opts.limits ?? memoryLimits()).window('cabinet-sign-in', 60_000),
    perIp: opts.signIn?.perIpPerMinute ?? 30,
    perEmail: opts.signIn?.perEmailPerMinute ?? 10,
  };
  const core: CabinetCore = {
    store: opts.store, config: opts.config, router: opts.router, app: opts.app, assets, keyUse: opts.keyUse, sessions,
    throttlePassword: async (key) => signIn.limiter.take(`pw:${key}`, signIn.perEmail),
  };
  return {
    opts, assets, sessions, pages, openPages, core, trusted, signIn,
    nav: [...BUILTIN_NAV, ...sections.flatMap((s) => (s.nav ? [s.nav] : []))],
    isSecure(req) {
      if ((req.socket as { encrypted?: boolean }).encrypted) return true;
      const peer = normalizeIp(req.socket.remoteAddress ?? '');
      return trusted.size > 0 && trusted.allows(peer) && String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() === 'https';
    },
  };
}
