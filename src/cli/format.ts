/**
 * How values read on a terminal: times local and relative, amounts in units, long hex cut in
 * the middle. Piped output and --json keep the API's values (ISO-8601 UTC, raw integers).
 */

/**
 * Control characters as visible escapes (`\x1b`, `\n`, `\r`, `\t`, `\x00`, `\u202e`): data
 * from outside (a client's method name, an invited e-mail, a node's answer) must not move the
 * cursor, recolour or clear the terminal, fake a row, or reorder text (bidi overrides). C0, DEL,
 * C1, the Unicode line separators and the bidi controls; everything else is left as it is.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (ch) => {
    const code = ch.charCodeAt(0);
    return NAMED_CONTROL[ch] ?? (code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`);
  });
}
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED_CONTROL: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A record with each of its own string fields escaped (escapeControl): for line printers, before they colour and join. */
export function escapeStrings<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === 'string' ? escapeControl(v) : v])) as T;
}

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
  bitcoin: { symbol: 'BTC', decimals: 8, unit: 'sat' },
  tron: { symbol: 'TRX', decimals: 6, unit: 'sun' },
  solana: { symbol: 'SOL', decimals: 9, unit: 'lamports' },
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
