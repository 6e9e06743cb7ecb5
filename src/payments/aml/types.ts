import type { NetworkFamily } from '../../store/catalog.js';
import { RpcctlError } from '../../util/errors.js';
import type { AmlResult, FailAt, RiskLevel } from '../../wire/payments.js';

/** The normalised result every provider returns (decisions.md, "Payment orders"): the API's shape. */
export type { AmlResult, RiskLevel } from '../../wire/payments.js';
export type AmlDetail = AmlResult['details'][number];

/** What is screened: the sender of one funding transfer. */
export interface AmlSubject {
  family: NetworkFamily;
  network: string;
  address: string;
  txHash: string;
}

export interface AmlProvider {
  readonly name: string;
  screen(subject: AmlSubject): Promise<AmlResult>;
}

/** The provider cannot answer yet (rate limited, result still computing, unreachable): try again later. */
export class AmlRetryError extends RpcctlError {
  readonly code = 'E_AML_RETRY';
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs?: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

const RANK: Record<RiskLevel, number> = { unknown: 0, low: 1, medium: 2, high: 3, severe: 4 };

/** Whether `level` is at or above the merchant's `aml_fail_at`. `unknown` (provider `none`) never fails. */
export function failsAt(level: RiskLevel, failAt: FailAt): boolean {
  return level !== 'unknown' && RANK[level] >= RANK[failAt];
}

/** One result for an order from its senders' results: the worst level, the highest score, every detail. */
export function combine(results: AmlResult[]): AmlResult {
  const worst = results.reduce((a, b) => (RANK[b.risk_level] > RANK[a.risk_level] || (RANK[b.risk_level] === RANK[a.risk_level] && b.score > a.score) ? b : a));
  return {
    provider: worst.provider,
    score: Math.max(...results.map((r) => r.score)),
    risk_level: worst.risk_level,
    details: results.flatMap((r) => r.details),
    report_url: worst.report_url,
    checked_at: results.map((r) => r.checked_at).sort().at(-1)!,
  };
}

/** The score a provider's label stands for when it gives no number. */
export function scoreOf(level: RiskLevel): number {
  return { unknown: 0, low: 10, medium: 50, high: 75, severe: 100 }[level];
}
