import { AddressInUseError, startService } from '../../serve/service.js';
import { listAccounts, storeUrl } from '../../store/index.js';
import { createLogger, lineLogger, parseLogFormat, parseLogLevel, type Logger } from '../../log/index.js';
import { CliError, usageError, type CliIO } from '../io.js';
import { lastResort } from '../../runtime/last-resort.js';
import { serveControl } from './control.js';

// Here rather than in serve.ts: serve.ts loads this file, so this file must not import it.
export interface ServeOptions {
  config?: string;
  dataDir?: string;
  host?: string;
  port?: string;
  gatewayPort?: string;
  dev?: boolean;
  database?: string;
  redis?: string;
  logFormat?: string;
  logLevel?: string;
  upstream?: string[];
}

/** `--upstream eth-mainnet=http://...` (repeatable; one target given twice gets both nodes). */
function upstreamOption(values: string[] | undefined): Record<string, string[]> | undefined {
  if (!values?.length) return undefined;
  const byTarget: Record<string, string[]> = {};
  for (const value of values) {
    const m = /^([a-z0-9][a-z0-9-]*)=(.+)$/i.exec(value);
    let url: URL | undefined;
    try {
      url = m ? new URL(m[2]!) : undefined;
    } catch {
      url = undefined;
    }
    if (!m || !url || !/^https?:$/.test(url.protocol)) throw usageError(`--upstream must be NETWORK-ENV=URL with an http(s) URL, e.g. eth-mainnet=http://127.0.0.1:8546; got "${value}"`);
    (byTarget[m[1]!.toLowerCase()] ??= []).push(m[2]!);
  }
  return byTarget;
}

function portOption(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw usageError(`${flag} must be a port number 0-65535, got "${value}"`);
  return n;
}

/**
 * What to run next on a service without accounts. The commands must reach the store this
 * service uses: in PostgreSQL mode `admin` gets its `--database` (without it, admin would
 * write a local SQLite file no instance reads), and the plan named is one the config has.
 */
export function firstSteps(service: { apiUrl: string; store: { kind: string; catalog: { plans: Array<{ slug: string }> } } }, opts: Pick<ServeOptions, 'dataDir' | 'config'>, databaseUrl: string | undefined): string[] {
  const shared = service.store.kind === 'postgres' && databaseUrl !== undefined;
  const where = [
    opts.dataDir && !shared ? ` --data-dir ${opts.dataDir}` : '',
    opts.config ? ` --config ${opts.config}` : '',
    shared ? ` --database ${shellQuote(withoutPassword(databaseUrl))}` : '',
  ].join('');
  const plans = service.store.catalog.plans;
  const plan = (plans.find((p) => p.slug === 'free') ?? plans[0])?.slug;
  const base = service.apiUrl === 'http://127.0.0.1:8080' ? '' : ` --base-url ${service.apiUrl}`;
  const out = ['No accounts yet.'];
  if (!shared) {
    out.push('To try everything on this machine (an account, a key and a saved profile in one step):', `  rpcctl init --local${where}${base}`);
  }
  if (plan === undefined) {
    out.push('The config has no plans: add one (plans: in the config file) before creating accounts.');
    return out;
  }
  out.push(
    `${shared ? 'Create' : 'Or, as an operator, create'} an account and an API key for it (the secret is shown once):`,
    `  rpcctl admin accounts create --plan ${plan}${where}`,
    `  rpcctl admin keys create --account 1${where}`,
  );
  if (shared && databaseUrl !== withoutPassword(databaseUrl)) out.push('  (put the database password in place of ****)');
  return out;
}

/** A database URL fit to print: the password never reaches a terminal or a log. */
export function withoutPassword(url: string): string {
  // pg-connection-string parses `user:pw@/db?host=/socket` by putting a dummy host in; WHATWG URL refuses an empty host after credentials.
  const dummyHost = '___rpcctl_dummy_host___';
  for (const candidate of [url, url.replace('@/', `@${dummyHost}/`)]) {
    let u: URL;
    try {
      u = new URL(candidate);
    } catch {
      continue;
    }
    const search = maskSecretParams(u.search);
    if (!u.password && search === u.search) return url;
    if (u.password) u.password = '****';
    u.search = search;
    return u.toString().replace(`@${dummyHost}/`, '@/');
  }
  // Not a URL we can take apart (a socket path, say): print none of it if it could hold a password.
  return /@|pass/i.test(url) ? '<database URL>' : url;
}

/** Query parameters pg-connection-string takes as secrets (`?password=`, `?sslpassword=`), matched the way it decodes names. */
const secretParams = new Set(['password', 'sslpassword']);

function maskSecretParams(search: string): string {
  if (search.length <= 1) return search;
  const pairs = search.slice(1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    return secretParams.has(decodedParamName(rawName).toLowerCase()) ? `${rawName}=****` : pair;
  });
  return `?${pairs.join('&')}`;
}

function decodedParamName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs until SIGINT/SIGTERM, then shuts down cleanly. */
export async function runServe(io: CliIO, opts: ServeOptions): Promise<void> {
  const overrides = {
    host: opts.host, apiPort: portOption('--port', opts.port), gatewayPort: portOption('--gateway-port', opts.gatewayPort), dev: opts.dev,
    upstreams: upstreamOption(opts.upstream),
  };
  let logger: Logger;
  try {
    const isTTY = io.stderr.isTTY === true;
    logger = createLogger({
      format: parseLogFormat(opts.logFormat ?? io.env.RPCCTL_LOG_FORMAT, isTTY),
      level: parseLogLevel(opts.logLevel ?? io.env.RPCCTL_LOG_LEVEL),
      stream: io.stderr,
      color: isTTY && !(io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') && io.env.TERM !== 'dumb',
    });
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const log = lineLogger(logger.child({ component: 'serve' }));
  const logLevelFromConfig = !opts.logLevel && !io.env.RPCCTL_LOG_LEVEL;
  const service = await startService({
    configFile: opts.config, dataDir: opts.dataDir, databaseUrl: opts.database, redisUrl: opts.redis, env: io.env, logger, overrides, logLevelFromConfig,
  }).catch((err: unknown) => {
    if (err instanceof AddressInUseError) {
      if (err.part === 'metrics') throw new CliError(`port ${err.port} (metrics) on ${err.host} is already in use: stop what holds it, or choose another with metrics.listen in the config`);
      const flag = err.part === 'api' ? '--port' : '--gateway-port';
      throw new CliError(`port ${err.port} (${err.part === 'api' ? 'Public API' : 'gateway'}) on ${err.host} is already in use: stop what holds it, or choose another with ${flag} N`);
    }
    throw err;
  });
  const g = service.config.gateway;
  const lines = [
    `rpcctl serve is ready${opts.dev ? ' (development mode)' : ''}`,
    `  api       ${service.apiUrl}`,
    `  gateway   ${service.gatewayUrl}`,
    ...(service.store.kind === 'postgres'
      ? ['  store     PostgreSQL (shared)', `  limits    ${service.limits.kind === 'redis' ? 'Redis (shared)' : 'in memory (this instance only: pass --redis to share them)'}`, `  instance  ${service.addressWatch.instanceId}`]
      : [`  data dir  ${service.dataDir}`]),
    `  endpoint URLs look like ${g.scheme}://${g.host_prefix}-{network}-{env}.${g.rpc_domain}/{endpoint_uuid}`,
  ];
  if (opts.dev) lines.push('  webhooks may go to loopback and private addresses: do not expose this service');
  if (service.metricsUrl) lines.splice(3, 0, `  metrics   ${service.metricsUrl}/metrics`);
  if ((await listAccounts(service.store)).length === 0) lines.push('', ...firstSteps(service, opts, storeUrl(opts.database, service.config, io.env)));
  // Handlers first, then the banner: whoever reads "ready" may signal at once, and a signal
  // that arrived before the handlers would kill the process instead of stopping it cleanly.
  let releaseLastResort = () => {};
  const control = serveControl(service.dataDir);
  const stopped = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      // A second signal while draining: stop now.
      if (stopping) return void service.stop();
      stopping = true;
      log(`received ${signal}, shutting down`);
      // SIGTERM (an orchestrator, a rolling restart) drains first; Ctrl-C stops at once.
      const drainMs = signal === 'SIGTERM' ? service.config.shutdown.drain_s * 1000 : 0;
      service.drain(drainMs).then(() => service.stop()).then(() => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        process.off('SIGHUP', onHup);
        control.remove();
        resolve();
      }, (err: unknown) => {
        log(`shutdown failed: ${(err as Error).message}`);
        process.off('SIGHUP', onHup);
        control.remove();
        resolve();
      });
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    // SIGHUP: read the config again (`rpcctl admin reload` sends it); the outcome is logged and
    // left in the data dir for admin to report.
    // Kept (ignoring it) until the process is stopped: without a listener, SIGHUP's default
    // action would end a draining process (a `systemctl reload` during a rolling restart).
    const onHup = () => {
      if (stopping) return;
      void service.reload().then((outcome) => control.reloaded(outcome));
    };
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    process.on('SIGHUP', onHup);
    control.write();
    releaseLastResort = lastResort(logger, service.metrics, () => {
      process.exitCode = 1;
      stop('an uncaught exception');
    });
  });
  io.stdout.write(`${lines.join('\n')}\n`);
  await stopped;
  releaseLastResort();
  log('stopped');
}
