/**
 * How values read on a terminal: times local and relative, amounts in units, long hex cut in
 * the middle. Piped output and --json keep the API's values (ISO-8601 UTC, raw integers).
 */

/** `3m ago`, `in 29s`, like gh's lists; past a month, the local date. */
export function relativeTime(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const diff = Math.round((now - t) / 1000);
  const abs = Math.abs(diff);
  if (abs < 5) return 'just now';
  const [n, unit] = abs < 60 ? [abs, 's'] : abs < 3600 ? [Math.floor(abs / 60), 'm'] : abs < 86_400 ? [Math.floor(abs / 3600), 'h'] : [Math.floor(abs / 86_400), 'd'];
  if (unit === 'd' && n > 30) return localTime(iso).slice(0, 10);
  return diff >= 0 ? `${n}${unit} ago` : `in ${n}${unit}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Local wall-clock time, `2026-01-31 14:03:05`. */
export function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `14:03:05` for today, else the full local time: for log-like lines (`events --follow`). */
export function logTime(iso: string, now = new Date()): string {
  const full = localTime(iso);
  return full.slice(0, 10) === localTime(now.toISOString()).slice(0, 10) ? full.slice(11) : full;
}

/** `0x5290…9EE7`: enough of a hash or address to tell it apart on a terminal. */
export function shortHex(value: string, keep = 6): string {
  return value.length > keep * 2 + 1 ? `${value.slice(0, keep)}…${value.slice(-4)}` : value;
}

/** The native coin of a network family or slug: its symbol, decimals and smallest unit's name. */
const NATIVE: Record<string, { symbol: string; decimals: number; unit: string }> = {
  eth: { symbol: 'ETH', decimals: 18, unit: 'wei' },
  arbitrum: { symbol: 'ETH', decimals: 18, unit: 'wei' },
  base: { symbol: 'ETH', decimals: 18, unit: 'wei' },
  optimism: { symbol: 'ETH', decimals: 18, unit: 'wei' },
  polygon: { symbol: 'POL', decimals: 18, unit: 'wei' },
  bsc: { symbol: 'BNB', decimals: 18, unit: 'wei' },
  stellar: { symbol: 'XLM', decimals: 7, unit: 'stroops' },
};

/** A raw integer amount in units: `units(1500000000000000000n, 18)` is `1.5`. */
export function units(raw: bigint, decimals: number): string {
  const negative = raw < 0n;
  const abs = negative ? -raw : raw;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const fraction = (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * An event amount for people: `1.5 ETH (1500000000000000000 wei)` for a native coin it knows
 * (`withRaw` false drops the bracket), else the raw amount and the token contract.
 */
export function formatAmount(e: { network: string; amount?: string; token?: string | null }, withRaw = true): string {
  if (e.amount === undefined) return '?';
  let raw: bigint;
  try {
    raw = BigInt(e.amount);
  } catch {
    return e.amount;
  }
  const native = NATIVE[e.network.split('-')[0]!];
  if (e.token) return `${e.amount} (raw) of token ${shortHex(e.token)}`;
  if (!native) return `${e.amount} (raw)`;
  return `${units(raw, native.decimals)} ${native.symbol}${withRaw ? ` (${e.amount} ${native.unit})` : ''}`;
}
