import type { ServerResponse } from 'node:http';
import type { Assets } from './assets.js';
import { html, type Html } from './html.js';
import { bare } from './layout.js';

export const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

export const FLASH_COOKIE = 'rpcctl_flash';

export function send(res: ServerResponse, status: number, body: Html | string, headers: Record<string, string | string[]> = {}): void {
  const text = typeof body === 'string' ? body : body.text;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(text);
}

export function redirect(res: ServerResponse, to: string, cookies: string[] = []): void {
  res.writeHead(303, { location: to, 'cache-control': 'no-store', ...SECURITY_HEADERS, ...(cookies.length ? { 'set-cookie': cookies } : {}) });
  res.end();
}

export function errorPage(res: ServerResponse, assets: Assets, status: number, title: string, message: string): void {
  send(res, status, bare({
    assets, title,
    body: html`<section class="card narrow"><h1>${title}</h1><p>${message}</p><p><a class="button" href="/">Back to the dashboard</a></p></section>`,
  }));
}

export function flashCookie(message: string): string {
  return `${FLASH_COOKIE}=${Buffer.from(message.slice(0, 300)).toString('base64url')}; Path=/; HttpOnly; SameSite=Lax; Max-Age=60`;
}

export function decodeFlash(value: string): string {
  return Buffer.from(value, 'base64url').toString('utf8');
}
