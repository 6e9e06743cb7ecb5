// bench:api — signed `GET /v1/endpoints` against the unsigned `GET /v1/openapi.json` of the
// same process, alternating rounds so both see the same machine noise. Medians are reported.
import { signatureHeaders } from '../dist/client/index.js';
import { fmt, load, median } from './load.js';
import { startServe } from './serve.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

const serve = await startServe({
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0 },
  limits: { api_rps_per_ip: 1_000_000_000, api_rpm_per_account: 1_000_000_000 },
});
try {
  const { user_id } = serve.admin('accounts', 'create', '--plan', 'pro');
  const key = serve.admin('keys', 'create', '--account', String(user_id));
  // A realistic list: a few endpoints.
  const { ApiClient } = await import('../dist/client/index.js');
  const client = new ApiClient({ baseUrl: serve.api, apiKey: key.api_key, secret: key.secret });
  for (let i = 0; i < 3; i++) await client.createEndpoint({ name: `bench-${i}`, network_environment_id: 1 + i });
  await client.close();

  // Signing is the client's cost, not the server's: sign once per second and reuse.
  let cached = { second: -1, headers: {} };
  const signed = () => {
    const second = Math.floor(Date.now() / 1000);
    if (cached.second !== second) {
      cached = { second, headers: signatureHeaders({ apiKey: key.api_key, secret: key.secret, method: 'GET', path: '/v1/endpoints', timestamp: second }) };
    }
    return cached.headers;
  };

  const base = [];
  const sig = [];
  await load({ url: serve.api, path: '/v1/openapi.json', seconds: 1, connections }); // warm-up
  await load({ url: serve.api, path: '/v1/endpoints', headers: signed, seconds: 1, connections });
  for (let r = 0; r < rounds; r++) {
    const b = await load({ url: serve.api, path: '/v1/openapi.json', seconds, connections, expectStatus: 200 });
    const s = await load({ url: serve.api, path: '/v1/endpoints', headers: signed, seconds, connections, expectStatus: 200 });
    base.push(b);
    sig.push(s);
    console.log(`round ${r + 1}: baseline ${fmt(b)}`);
    console.log(`         signed   ${fmt(s)}`);
  }
  const summary = (rs) => ({ rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), errors: 0, unexpected: 0 });
  const b = summary(base);
  const s = summary(sig);
  console.log('\nmedians');
  console.log(`  baseline GET /v1/openapi.json (unsigned)  ${fmt(b)}`);
  console.log(`  signed   GET /v1/endpoints               ${fmt(s)}`);
  console.log(`  throughput ratio signed/baseline: ${(s.rps / b.rps * 100).toFixed(1)} % (aim >= 60 %)`);
  console.log(`  p99 ratio signed/baseline: ${(s.p99 / b.p99).toFixed(2)}x`);
  if ([...base, ...sig].some((r) => r.errors || r.unexpected)) console.log('  WARNING: some requests failed; see rounds above');
} finally {
  await serve.stop();
}
