import { request } from 'undici';
import { traitsOf } from '../../chains/traits.js';
import { AmlRetryError, scoreOf, type AmlDetail, type AmlProvider, type AmlResult, type AmlSubject, type RiskLevel } from './types.js';
import { RpcctlError } from '../../util/errors.js';

export interface HttpAmlOptions {
  preset: 'chainalysis' | 'trm';
  /** The provider's API root, e.g. https://api.chainalysis.com or https://api.trmlabs.com. */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Network identifier → the provider's chain name (TRM); default `ethereum` for EVM, `stellar`. */
  chains: Record<string, string>;
  /** `{address}` is replaced: a link to the provider's case page for the merchant. */
  reportUrlTemplate: string | null;
}

export class AmlProviderError extends RpcctlError {
  readonly code = 'E_AML_PROVIDER';
}

interface Reply { status: number; headers: Record<string, string | string[] | undefined>; body: unknown }

/**
 * A real screening API behind one adapter. The presets speak the providers' documented
 * protocols: Chainalysis address screening (register the address, then read its risk;
 * Severe/High/Medium/Low) and TRM Labs wallet screening (one POST, risk indicators with
 * level labels). A 429, a 5xx, a timeout or a result still being computed is an
 * AmlRetryError: the queue tries again later and the order waits in `aml_check`.
 */
export class HttpAmlProvider implements AmlProvider {
  readonly name: string;
  readonly #o: HttpAmlOptions;

  constructor(o: HttpAmlOptions) {
    this.#o = { ...o, baseUrl: o.baseUrl.replace(/\/+$/, '') };
    this.name = o.preset;
  }

  screen(subject: AmlSubject): Promise<AmlResult> {
    return this.#o.preset === 'chainalysis' ? this.#chainalysis(subject) : this.#trm(subject);
  }

  async #chainalysis(s: AmlSubject): Promise<AmlResult> {
    const headers = { token: this.#o.apiKey, accept: 'application/json', 'content-type': 'application/json' };
    const reg = await this.#call('POST', '/api/risk/v2/entities', headers, JSON.stringify({ address: s.address }));
    if (reg.status !== 200 && reg.status !== 201) throw this.#failure('register', reg);
    const res = await this.#call('GET', `/api/risk/v2/entities/${encodeURIComponent(s.address)}`, headers);
    if (res.status !== 200) throw this.#failure('risk', res);
    const b = res.body as {
      risk?: string; status?: string; riskReason?: string | null;
      cluster?: { name?: string; category?: string } | null;
      exposures?: Array<{ category?: string; value?: number; exposureType?: string }>;
      addressIdentifications?: Array<{ category?: string; name?: string }>;
    };
    // Chainalysis computes risk asynchronously for a newly registered address.
    if (b.status && b.status !== 'COMPLETE') throw new AmlRetryError(`chainalysis: risk of ${s.address} is ${b.status}`, 2000);
    const level = levelOf(b.risk);
    if (!level) throw new AmlProviderError(`chainalysis: unexpected risk "${String(b.risk)}"`);
    const details: AmlDetail[] = [];
    if (b.cluster?.category) details.push({ category: b.cluster.category, address: s.address, source: `chainalysis:cluster${b.cluster.name ? `:${b.cluster.name}` : ''}` });
    for (const id of b.addressIdentifications ?? []) if (id.category) details.push({ category: id.category, address: s.address, source: `chainalysis:identification${id.name ? `:${id.name}` : ''}` });
    for (const e of b.exposures ?? []) if (e.category && e.exposureType === 'direct') details.push({ category: e.category, address: s.address, source: 'chainalysis:exposure' });
    return this.#result(level, scoreOf(level), details, s.address);
  }

  async #trm(s: AmlSubject): Promise<AmlResult> {
    const chain = this.#o.chains[s.network] ?? traitsOf(s.family).payments.amlChain;
    const headers = {
      authorization: `Basic ${Buffer.from(`${this.#o.apiKey}:`).toString('base64')}`,
      accept: 'application/json', 'content-type': 'application/json',
    };
    const res = await this.#call('POST', '/public/v2/screening/addresses', headers, JSON.stringify([{ address: s.address, chain, accountExternalId: s.txHash }]));
    if (res.status !== 200 && res.status !== 201) throw this.#failure('screening', res);
    const item = (res.body as Array<{
      address?: string;
      addressRiskIndicators?: Array<{ category?: string; categoryRiskScoreLevelLabel?: string; riskType?: string }>;
      entities?: Array<{ category?: string; entity?: string; riskScoreLevelLabel?: string; trmAppUrl?: string }>;
    }>)?.[0];
    if (!item) throw new AmlProviderError('trm: empty screening response');
    let worst: RiskLevel = 'low';
    const details: AmlDetail[] = [];
    for (const r of item.addressRiskIndicators ?? []) {
      const level = levelOf(r.categoryRiskScoreLevelLabel);
      if (level && rank(level) > rank(worst)) worst = level;
      if (r.category) details.push({ category: r.category, address: s.address, source: `trm:${(r.riskType ?? 'indicator').toLowerCase()}` });
    }
    for (const e of item.entities ?? []) {
      const level = levelOf(e.riskScoreLevelLabel);
      if (level && rank(level) > rank(worst)) worst = level;
      if (e.category) details.push({ category: e.category, address: s.address, source: `trm:entity${e.entity ? `:${e.entity}` : ''}` });
    }
    const appUrl = item.entities?.find((e) => e.trmAppUrl)?.trmAppUrl;
    return this.#result(worst, scoreOf(worst), details, s.address, appUrl);
  }

  #result(level: RiskLevel, score: number, details: AmlDetail[], address: string, url?: string): AmlResult {
    const template = this.#o.reportUrlTemplate;
    return {
      provider: this.#o.preset, score, risk_level: level, details,
      report_url: url ?? (template ? template.replace('{address}', encodeURIComponent(address)) : null),
      checked_at: new Date().toISOString(),
    };
  }

  #failure(what: string, r: Reply): Error {
    const retryAfter = retryAfterMs(r.headers['retry-after']);
    if (r.status === 429) return new AmlRetryError(`${this.name}: ${what}: rate limited (429)`, retryAfter);
    if (r.status >= 500 || r.status === 408) return new AmlRetryError(`${this.name}: ${what}: HTTP ${r.status}`, retryAfter);
    // 401/403: a wrong key; 400/404: a request we got wrong. Retried too (never passed), but loudly.
    const message = typeof r.body === 'object' && r.body && 'message' in r.body ? String((r.body as { message: unknown }).message) : '';
    return new AmlProviderError(`${this.name}: ${what}: HTTP ${r.status}${message ? `: ${message}` : ''}`);
  }

  async #call(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
    try {
      const res = await request(this.#o.baseUrl + path, {
        method, headers, body, headersTimeout: this.#o.timeoutMs, bodyTimeout: this.#o.timeoutMs, signal: AbortSignal.timeout(this.#o.timeoutMs),
      });
      const text = await res.body.text();
      let parsed: unknown = text;
      try { parsed = text ? JSON.parse(text) : null; } catch { /* keep text */ }
      return { status: res.statusCode, headers: res.headers, body: parsed };
    } catch (err) {
      const e = err as Error & { cause?: Error };
      throw new AmlRetryError(`${this.name}: ${e.cause?.message ?? e.message}`);
    }
  }
}

function levelOf(label: string | undefined | null): RiskLevel | undefined {
  const l = (label ?? '').toLowerCase();
  return l === 'low' || l === 'medium' || l === 'high' || l === 'severe' ? l : undefined;
}

function rank(l: RiskLevel): number {
  return ['unknown', 'low', 'medium', 'high', 'severe'].indexOf(l);
}

function retryAfterMs(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return undefined;
  const n = Number(s);
  if (Number.isFinite(n)) return Math.max(0, n * 1000);
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
