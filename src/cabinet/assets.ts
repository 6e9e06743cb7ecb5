import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';

interface Asset {
  body: Buffer;
  type: string;
  url: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The static files live in src/cabinet/static; the compiled module in dist/cabinet finds them there. */
function staticDir(): string {
  for (const rel of ['./static/', '../../src/cabinet/static/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(dir)) return dir;
  }
  throw new Error('cabinet: static files not found (src/cabinet/static)');
}

/**
 * Static files under fingerprinted names (`/static/htmx.min.3f2a9c1d.js`): a new version is
 * a new URL, so each can be cached for a year.
 */
export class Assets {
  readonly #byUrl = new Map<string, Asset>();
  readonly #byName = new Map<string, string>();

  constructor(dir = staticDir()) {
    for (const name of readdirSync(dir)) {
      const dot = name.lastIndexOf('.');
      const ext = name.slice(dot);
      const type = TYPES[ext];
      if (!type) continue;
      const body = readFileSync(dir + name);
      const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
      const url = `/static/${name.slice(0, dot)}.${hash}${ext}`;
      this.#byUrl.set(url, { body, type, url });
      this.#byName.set(name, url);
    }
  }

  url(name: string): string {
    const url = this.#byName.get(name);
    if (!url) throw new Error(`cabinet: no static file ${name}`);
    return url;
  }

  /** Answers a /static/ request; false when no such file. */
  serve(path: string, res: ServerResponse): boolean {
    const asset = this.#byUrl.get(path);
    if (!asset) return false;
    res.writeHead(200, {
      'content-type': asset.type,
      'content-length': asset.body.length,
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    });
    res.end(asset.body);
    return true;
  }
}
