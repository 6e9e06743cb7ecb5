import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reporter } from 'vitest/node';
import { SKIP_LOG_ENV } from './skips.js';

interface Skip { file: string; part: string; why: string }

/** Counts skipped parts by reason from the records `skips.ts` writes. */
export function skipSummary(skips: readonly Skip[]): string {
  if (skips.length === 0) return 'Skipped parts: none (every PostgreSQL, Redis and toolchain part ran)';
  const byWhy = new Map<string, Set<string>>();
  for (const s of skips) {
    const key = `${s.file}: ${s.part}`;
    byWhy.set(s.why, (byWhy.get(s.why) ?? new Set()).add(key));
  }
  const parts = [...byWhy].sort((a, b) => b[1].size - a[1].size || a[0].localeCompare(b[0])).map(([why, set]) => `${set.size} × ${why}`);
  const total = [...byWhy.values()].reduce((n, s) => n + s.size, 0);
  return `Skipped parts: ${total} (${parts.join('; ')})`;
}

/**
 * Adds one closing line after vitest's own: how many parts were skipped, for which reasons
 * (`RPCCTL_TEST_SKIPS_VERBOSE=1`: every part). The test processes append to a file this sets
 * up before they start.
 */
export default class SkipsReporter implements Reporter {
  #dir = mkdtempSync(join(tmpdir(), 'rpcctl-skips-'));
  #file = join(this.#dir, 'skips.jsonl');

  onInit(): void {
    process.env[SKIP_LOG_ENV] = this.#file;
  }

  onTestRunEnd(): void {
    let text = '';
    try { text = readFileSync(this.#file, 'utf8'); } catch { /* nothing skipped */ }
    const skips = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Skip);
    // A file collected twice (a rerun) records its parts twice: one per part.
    const seen = new Map(skips.map((s) => [`${s.file}\0${s.part}\0${s.why}`, s]));
    const unique = [...seen.values()];
    process.stdout.write(`${skipSummary(unique)}\n`);
    if (process.env.RPCCTL_TEST_SKIPS_VERBOSE) for (const s of unique) process.stdout.write(`  skipped ${s.file}: ${s.part} (${s.why})\n`);
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
