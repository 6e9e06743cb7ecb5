import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseSanctionsList, replaceSanctions, SanctionsFileError } from '../../payments/aml/sanctions.js';
import type { AdminOptions } from '../admin/run.js';
import { withStore } from '../admin/run.js';
import { CliError, type CliIO } from '../io.js';

/** `rpcctl admin aml load FILE`: the sanctions list screening uses, replaced in one transaction (a running serve sees it at once). */
export async function amlLoad(io: CliIO, opts: AdminOptions & { file: string; json?: boolean; color?: boolean }): Promise<void> {
  const { file } = opts;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  let list;
  try {
    list = parseSanctionsList(text, file);
  } catch (err) {
    if (err instanceof SanctionsFileError) throw new CliError(err.message);
    throw err;
  }
  await withStore(io, opts as never, async (store, out) => {
    const n = await replaceSanctions(store.db, list, resolve(file));
    const byCurrency: Record<string, number> = {};
    for (const a of list) byCurrency[a.currency] = (byCurrency[a.currency] ?? 0) + 1;
    if (out.json) return out.printJson({ loaded: n, currencies: byCurrency, source: resolve(file) });
    out.note(`Loaded ${n} sanctioned addresses (${Object.entries(byCurrency).map(([c, k]) => `${c} ${k}`).join(', ')}) from ${file}.`);
  });
}
