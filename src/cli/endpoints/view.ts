import type { RequestLogEntry } from '../../client/types.js';
import { escapeStrings, logTime } from '../format.js';
import type { Output } from '../output.js';

/** The columns of a piped request-log line, in order (documented in docs/cli.md). */
const TSV_FIELDS = ['id', 'at', 'method', 'status', 'rpc_code', 'latency_ms', 'credits', 'client_ip', 'cached', 'batch'] as const;

/**
 * One gateway call as one line: JSON with `--json`, tab-separated when piped, readable on a
 * terminal (errors in red). One line each, so `endpoints logs --follow` pipes to grep and jq.
 */
export function printCall(out: Output, e: RequestLogEntry): void {
  if (out.json) return out.printJsonLine(e);
  if (!out.isTTY) {
    return out.tsv(TSV_FIELDS.map((f) => e[f]));
  }
  // The method (and the rest) is what a client sent: escaped before it is coloured and joined.
  e = escapeStrings(e);
  const { c } = out;
  const failed = e.status >= 400 || e.rpc_code !== null;
  const status = failed ? c.red(String(e.status)) : c.green(String(e.status));
  const code = e.rpc_code === null ? '' : c.red(`  error ${e.rpc_code}`);
  const method = e.method === '' ? c.dim('(no method)') : e.method;
  const batch = e.batch === null ? '' : c.dim(`  batch of ${e.batch}`);
  const cached = e.cached ? c.dim('  cached') : '';
  out.print(`${c.dim(logTime(e.at))}  ${status}  ${method}${batch}${code}  ${e.latency_ms} ms  ${e.credits} cr  ${e.client_ip}${cached}`);
}
