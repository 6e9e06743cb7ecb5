import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (.ci/run installs it); playwright-core never downloads a browser. */
export const CHROMIUM = process.env.RPCCTL_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Screenshots of failed browser tests land here. */
export const TEST_OUTPUT = process.env.RPCCTL_TEST_OUTPUT ?? join(process.cwd(), 'test-output');

export interface TestBrowser {
  browser: Browser;
  /** A fresh context (own cookies) whose pages are screenshotted if the running test fails. */
  context(opts?: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number }; bypassCSP?: boolean }): Promise<BrowserContext>;
  close(): Promise<void>;
}

/** Chromium; playwright gives each launch a new empty profile dir of its own and removes it on close. */
export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async context(opts = {}) {
      const ctx = await browser.newContext({
        colorScheme: opts.colorScheme ?? 'light', viewport: opts.viewport ?? { width: 1280, height: 900 }, bypassCSP: opts.bypassCSP ?? false,
      });
      ctx.setDefaultTimeout(15_000);
      contexts.push(ctx);
      return ctx;
    },
    async close() {
      await browser.close();
    },
  };
}

/** Saves a full-page screenshot of every open page under test-output/<suite>/. */
export async function screenshotAll(pages: Page[], suite: string, testName: string): Promise<string[]> {
  const dir = join(TEST_OUTPUT, suite);
  mkdirSync(dir, { recursive: true });
  const slug = testName.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').slice(0, 80);
  const saved: string[] = [];
  for (const [i, page] of pages.entries()) {
    if (page.isClosed()) continue;
    const file = join(dir, `${slug}-${i}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    saved.push(file);
  }
  return saved;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; html: string }>;
}

/**
 * axe-core's WCAG 2 A/AA rules on the page as it is now. The page's context must bypass CSP:
 * the engine is injected as a script of its own.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`) as { violations: AxeViolation[] };
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, html: n.html })) }));
}

let axeSource: string | undefined;

/**
 * Every axe rule (WCAG and best practice) on the page as it is now, as `id (help) at targets`:
 * run through DevTools, so the page keeps its CSP (a hosted page is checked as customers get it).
 */
export async function axeAll(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(axeSource);
  const r = await page.evaluate('axe.run(document)') as { violations: Array<{ id: string; help: string; nodes: Array<{ target: string[] }> }> };
  return r.violations.map((v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Script errors and CSP refusals of `page`, pushed onto `problems` (a suite asserts it empty at the end). */
export function watchPageProblems(page: Page, problems: string[]): void {
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
}
