import { html, type Html } from '../html.js';

/**
 * The IP allowlist box, one way for keys and endpoints: one address per line (commas and spaces
 * also split, for a pasted list). The rules stay the API's (`allowedIpsBody`); this only maps
 * its messages, which name entries 0-based (`allowed_ips[1]: ...`), back to the lines typed.
 */

export interface TypedAllowlist {
  text: string;
  entries: string[];
  /** The 1-based line of each entry. */
  lines: number[];
}

export function readAllowlist(text: string | null): TypedAllowlist {
  const typed: TypedAllowlist = { text: text ?? '', entries: [], lines: [] };
  typed.text.split(/\r\n|\r|\n/).forEach((line, i) => {
    for (const entry of line.split(/[\s,]+/)) {
      if (!entry) continue;
      typed.entries.push(entry);
      typed.lines.push(i + 1);
    }
  });
  return typed;
}

/** Rewrites the API's messages on `allowed_ips` in words, by line; other messages pass as they are. */
export function allowlistMessage(apiMessage: string, typed: TypedAllowlist): string {
  return apiMessage.split('; ').map((part) => {
    const entry = /^allowed_ips\[(\d+)\]: (.*)$/.exec(part);
    if (entry) {
      const i = Number(entry[1]);
      const value = typed.entries[i] ?? '';
      const line = typed.lines[i] ?? i + 1;
      const what = entry[2]!.startsWith('must be an IPv4 or IPv6 address')
        ? `is not an IPv4 or IPv6 address${value.includes('/') ? ' (ranges are not supported)' : ''}`
        : entry[2]!;
      return `Line ${line}: ${value} ${what}`;
    }
    const list = /^allowed_ips: must have at most (\d+) entries$/.exec(part);
    if (list) return `At most ${list[1]} addresses (${typed.entries.length} given)`;
    return part;
  }).join('. ');
}

/** The labelled textarea with its error beneath it; the text as typed is kept on an error. */
export function allowlistField(opts: { id: string; label: string; value: string; error?: string; rows?: number }): Html {
  const errorId = `${opts.id}-error`;
  return html`<div class="field">
  <label for="${opts.id}">${opts.label} <span class="muted small">(one per line; empty allows any)</span></label>
  <textarea id="${opts.id}" name="allowed_ips" rows="${opts.rows ?? 3}" spellcheck="false" autocapitalize="off"${opts.error ? html` aria-invalid="true" aria-describedby="${errorId}"` : ''}>${opts.value}</textarea>
  ${opts.error ? html`<p class="field-error" id="${errorId}">${opts.error}</p>` : ''}
</div>`;
}
