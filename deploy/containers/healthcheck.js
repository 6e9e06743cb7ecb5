// The image's HEALTHCHECK: healthy while the API listener's /ready answers 200 (the store
// answers, the gateway takes connections, the service is not stopping). No curl in the image.
const url = process.env.RPCCTL_HEALTHCHECK_URL ?? 'http://127.0.0.1:8080/ready';
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  process.exit(res.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
