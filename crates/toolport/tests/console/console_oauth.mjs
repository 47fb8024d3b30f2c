// The console against a protected server: it signs in with authorization
// code + PKCE at a real authorization server (oidc-provider's login and
// consent pages), lists and calls the tools its token's scopes allow, and a
// tool whose scope the token lacks is neither offered nor callable with the
// console's token; the admin views answer for the signed-in caller.
//
// Environment: CONSOLE_URL and those of browser.mjs.

import { open, until, finish } from './browser.mjs';

const base = process.env.CONSOLE_URL;
const report = { steps: [] };
const step = (name) => report.steps.push(name);
let session;

try {
  session = await open();
  const { page, shot } = session;
  await page.goto(`${base}/ui`);
  await page.waitForSelector('#sign-in', { timeout: 15000 });
  if (await page.$('button.tool[data-tool="echo"]')) throw new Error('tools listed before sign-in');
  step('asked to sign in, no tools shown');
  await shot('oauth-01-sign-in');

  await page.click('#sign-in');
  // oidc-provider's development login page: any login, any password.
  await page.waitForSelector('input[name="login"]', { timeout: 15000 });
  report.authorizationServer = new URL(page.url()).origin;
  await page.fill('input[name="login"]', 'ada');
  await page.fill('input[name="password"]', 'any');
  await shot('oauth-02-login');
  await page.click('button[type="submit"]');
  // Its consent page, then back to the console's callback.
  await page.waitForSelector('button[type="submit"]', { timeout: 15000 });
  await page.click('button[type="submit"]');
  await page.waitForURL(`${base}/ui`, { timeout: 15000 });
  await page.waitForSelector('#connection.ok', { timeout: 15000 });
  await page.waitForSelector('#signed-in', { timeout: 5000 });
  step('signed in with authorization code + PKCE');

  const names = await page.$$eval('#tool-list button.tool', (b) => b.map((x) => x.dataset.tool));
  report.tools = names;
  if (!names.includes('echo')) throw new Error(`echo not listed: ${names}`);
  if (names.includes('book_table')) throw new Error('book_table listed to a token without its scope');
  step('only the tools the token may use are listed');

  await page.click('button.tool[data-tool="echo"]');
  await page.fill('#arg-echo-message', 'signed in');
  await page.click('#call-button');
  const echoed = await page.waitForSelector('.call.done[data-tool="echo"] .result-text', { timeout: 10000 });
  if ((await echoed.textContent()) !== 'signed in') throw new Error('echo did not answer');
  step('echo called with the token');

  // The console's own token, from the console's origin, at the tool it lacks the scope for.
  const quiet = session.errors.length;
  const refused = await page.evaluate(async () => {
    const token = sessionStorage.getItem('toolport-console-token');
    const response = await fetch('/mcp', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'book_table',
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 99, method: 'tools/call',
        params: {
          name: 'book_table', arguments: { restaurant: 'Nope' },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
    return { status: response.status, challenge: response.headers.get('WWW-Authenticate') };
  });
  report.refused = refused;
  // The browser logs the deliberate 403 itself; nothing else may have been.
  const during = session.errors.splice(quiet);
  if (during.some((e) => !/status of 403/.test(e))) throw new Error(`errors during the refused call: ${during}`);
  if (refused.status !== 403 || !/insufficient_scope/.test(refused.challenge || '') || !/demo:book/.test(refused.challenge || '')) {
    throw new Error(`book_table with the console's token: ${JSON.stringify(refused)}`);
  }
  step("the console's token cannot call a tool without its scope");

  await page.click('nav button[data-tab="live"]');
  await page.waitForSelector('#live-errors table', { timeout: 10000 });
  const forbidden = await page.textContent('#live-errors');
  if (!/forbidden/.test(forbidden)) throw new Error(`the refusal is not among the caller's errors: ${forbidden}`);
  step('the admin views answer for the signed-in caller');
  await shot('oauth-03-live');

  await page.click('#sign-out');
  await page.waitForSelector('#sign-in', { timeout: 5000 });
  step('signed out');

  if (session.errors.length) throw new Error(`console errors: ${session.errors.join('; ')}`);
  step('no console errors');
  await session.context.close();
  finish(report);
} catch (error) {
  if (session) {
    report.consoleErrors = session.errors;
    await session.shot('oauth-failure').catch(() => {});
    await session.context.close().catch(() => {});
  }
  finish(report, error);
}
