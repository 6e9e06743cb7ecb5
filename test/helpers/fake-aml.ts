import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Per-address risk the fakes answer with; `Severe|High|Medium|Low` as the providers spell it. */
export type Risk = 'Severe' | 'High' | 'Medium' | 'Low';

export interface FakeAml {
  url: string;
  risks: Map<string, Risk>;
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: string }>;
  /** Statuses to answer the next requests with (429 carries Retry-After: 1), before the real answer. */
  failNext: number[];
  /** Chainalysis only: how many GETs of a freshly registered address answer IN_PROGRESS. */
  pendingPolls: number;
  /** Answers (all of them) this much later. */
  delayMs: number;
  close(): Promise<void>;
}

async function serve(handler: (req: IncomingMessage, body: string, fake: FakeAml) => { status: number; body?: unknown; headers?: Record<string, string> }): Promise<FakeAml> {
  const fake = { risks: new Map(), requests: [], failNext: [], pendingPolls: 0, delayMs: 0 } as unknown as FakeAml;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      fake.requests.push({ method: req.method!, path: req.url!, headers: req.headers, body });
      const fail = fake.failNext.shift();
      const out = fail !== undefined
        ? { status: fail, body: { message: fail === 429 ? 'Too Many Requests' : 'Internal error' }, headers: fail === 429 ? { 'retry-after': '1' } : {} }
        : handler(req, body, fake);
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(out.status, { 'content-type': 'application/json', ...out.headers }).end(out.body === undefined ? '' : JSON.stringify(out.body));
      }, fake.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(fake, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  });
}

/**
 * Chainalysis Address Screening (entity API v2): `Token` header; POST /api/risk/v2/entities
 * registers `{address}` (201); GET /api/risk/v2/entities/{address} answers its risk, 404 for an
 * address never registered, `status: IN_PROGRESS` while the assessment runs.
 */
export function startFakeChainalysis(token: string): Promise<FakeAml> {
  const polls = new Map<string, number>();
  return serve((req, body, fake) => {
    if (req.headers.token !== token) return { status: 403, body: { message: 'Forbidden' } };
    if (req.method === 'POST' && req.url === '/api/risk/v2/entities') {
      const { address } = JSON.parse(body) as { address?: string };
      if (!address) return { status: 400, body: { message: 'address is required' } };
      polls.set(address.toLowerCase(), fake.pendingPolls);
      return { status: 201, body: { address } };
    }
    const m = /^\/api\/risk\/v2\/entities\/([^/?]+)$/.exec(req.url ?? '');
    if (req.method === 'GET' && m) {
      const address = decodeURIComponent(m[1]!);
      const left = polls.get(address.toLowerCase());
      if (left === undefined) return { status: 404, body: { message: 'Address not registered' } };
      if (left > 0) {
        polls.set(address.toLowerCase(), left - 1);
        return { status: 200, body: { address, risk: null, status: 'IN_PROGRESS' } };
      }
      const risk = fake.risks.get(address.toLowerCase()) ?? 'Low';
      return {
        status: 200,
        body: {
          address, risk, riskReason: risk === 'Low' ? null : 'Identified as Sanctioned Entity', status: 'COMPLETE', addressType: 'PRIVATE_WALLET',
          cluster: risk === 'Low' ? null : { name: 'Example Mixer', category: risk === 'Severe' ? 'sanctioned entity' : 'mixing' },
          addressIdentifications: [], exposures: [{ category: 'exchange', value: 12.5, exposureType: 'indirect', direction: 'both_directions' }],
          triggers: [], poolMetadata: {},
        },
      };
    }
    return { status: 404, body: { message: 'Not found' } };
  });
}

/**
 * TRM Labs wallet screening: Basic auth with the API key as user name; POST
 * /public/v2/screening/addresses with `[{address, chain}]` answers an array of results with
 * `addressRiskIndicators` and `entities`, each with a risk level label.
 */
export function startFakeTrm(apiKey: string): Promise<FakeAml> {
  return serve((req, body, fake) => {
    const expected = `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
    if (req.headers.authorization !== expected) return { status: 401, body: { message: 'Unauthorized' } };
    if (req.method !== 'POST' || req.url !== '/public/v2/screening/addresses') return { status: 404, body: { message: 'Not found' } };
    const items = JSON.parse(body) as Array<{ address: string; chain: string; accountExternalId?: string }>;
    if (!Array.isArray(items) || items.some((i) => !i.address || !i.chain)) return { status: 400, body: { message: 'address and chain are required' } };
    return {
      status: 201,
      body: items.map((i) => {
        const risk = fake.risks.get(i.address.toLowerCase()) ?? 'Low';
        return {
          accountExternalId: i.accountExternalId ?? null, address: i.address, addressSubmitted: i.address, chain: i.chain, externalId: null,
          addressRiskIndicators: risk === 'Low' ? [] : [{
            category: 'Sanctions', categoryId: '69', categoryRiskScoreLevel: risk === 'Severe' ? 15 : 10, categoryRiskScoreLevelLabel: risk,
            incomingVolumeUsd: '1000', outgoingVolumeUsd: '0', riskType: 'OWNERSHIP', totalVolumeUsd: '1000',
          }],
          entities: risk === 'Low' ? [] : [{ category: 'Sanctions', categoryId: '69', entity: 'Example Entity', riskScoreLevel: 15, riskScoreLevelLabel: risk, trmAppUrl: `https://app.trmlabs.com/address/${i.address}` }],
        };
      }),
    };
  });
}
