// Shared by the console's browser scripts: Debian's chromium driven by npm
// playwright-core, with the flags CI needs and a fresh profile each run.
//
// Environment: PLAYWRIGHT_CORE (path of playwright-core's index.js),
// CHROMIUM (the browser binary), SCREENSHOTS (a directory).

import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const playwright = await import(pathToFileURL(process.env.PLAYWRIGHT_CORE).href);
const chromium = playwright.chromium || playwright.default.chromium;

export const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

/**
 * A browser context on a fresh profile; page errors and console errors of
 * pages at `origin` (the console's, not an authorization server's) collected.
 */
export async function open(origin = process.env.CONSOLE_URL) {
  const profile = mkdtempSync(join(tmpdir(), 'toolport-console-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  const errors = [];
  const page = context.pages()[0] || await context.newPage();
  const watch = (p) => {
    const ours = () => !origin || p.url().startsWith(origin);
    p.on('console', (m) => { if (m.type() === 'error' && ours()) errors.push(`console: ${m.text()}`); });
    p.on('pageerror', (e) => { if (ours()) errors.push(`page error: ${e.message}`); });
  };
  watch(page);
  context.on('page', watch);
  mkdirSync(process.env.SCREENSHOTS, { recursive: true });
  const shot = (name) => page.screenshot({ path: join(process.env.SCREENSHOTS, `${name}.png`), fullPage: true });
  return { context, page, errors, shot };
}

/** Fails with `what` unless `check()` turns true within `ms` (polled, bounded). */
export async function until(what, check, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Prints the outcome as the last line and exits. */
export function finish(report, error) {
  if (error) report.error = String(error.stack || error);
  console.log(JSON.stringify(report));
  process.exit(error ? 1 : 0);
}
