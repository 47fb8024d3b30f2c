// The console in a real browser against `toolport serve --demo --ui`: the
// tools are listed, echo answers through its form, long_task's progress
// moves and it is cancelled (from its call, and by an operator from the
// live view), book_table's elicitation is answered from a form, the
// in-flight count and a chart update, and no console error happens.
//
// Environment: CONSOLE_URL (the server's base URL) and those of browser.mjs.

import { open, until, finish } from './browser.mjs';

const base = process.env.CONSOLE_URL;
const report = { steps: [] };
const step = (name) => report.steps.push(name);
let session;

try {
  session = await open();
  const { page, shot } = session;
  await page.goto(`${base}/ui`);
  const names = await page.$$eval('#tool-list button.tool', (b) => b.map((x) => x.dataset.tool));
  for (const tool of ['echo', 'long_task', 'book_table']) {
    if (!names.includes(tool)) throw new Error(`the first page lists ${names}, not ${tool}`);
  }
  report.tools = names;
  step('tools listed by the page');
  await page.waitForSelector('#connection.ok', { timeout: 15000 });
  step('connected over MCP');

  // echo through its form.
  await page.click('button.tool[data-tool="echo"]');
  await page.fill('#arg-echo-message', 'hello from the browser');
  await page.click('#call-button');
  const echoed = await page.waitForSelector('.call.done[data-tool="echo"] .result-text', { timeout: 10000 });
  report.echo = await echoed.textContent();
  if (report.echo !== 'hello from the browser') throw new Error(`echo answered ${report.echo}`);
  step('echo answered through its form');
  await shot('01-echo');

  // long_task: progress moves, the in-flight count shows it, then cancel.
  await page.click('button.tool[data-tool="long_task"]');
  await page.fill('#arg-long_task-steps', '40');
  await page.fill('#arg-long_task-step_ms', '150');
  await page.click('#call-button');
  const progressOf = () => page.$eval('.call.running[data-tool="long_task"]', (b) => Number(b.dataset.progress || 0)).catch(() => 0);
  const first = await until('long_task progress', async () => { const p = await progressOf(); return p >= 1 && p; });
  const later = await until('long_task progress to move', async () => { const p = await progressOf(); return p > first + 1 && p; });
  report.progress = [first, later];
  step('long_task progress moved');
  await until('the in-flight count to show the call', async () => Number(await page.textContent('#inflight-count')) >= 1);
  step('in-flight count shows the running call');
  await shot('02-long-task-running');
  await page.click('.call.running[data-tool="long_task"] button.cancel');
  await page.waitForSelector('.call.cancelled[data-tool="long_task"]', { timeout: 5000 });
  await until('the in-flight count to fall back to 0', async () => Number(await page.textContent('#inflight-count')) === 0);
  step('long_task cancelled from its call; in-flight count back to 0');

  // An operator stops a call from the live view (the admin API's cancel).
  await page.click('#call-button');
  await until('a second long_task to run', async () => (await progressOf()) >= 1);
  await page.click('nav button[data-tab="live"]');
  const stop = await page.waitForSelector('#live-calls button.stop', { timeout: 5000 });
  await shot('03-live-view');
  await stop.click();
  const stopped = await page.waitForSelector('.call.failed[data-tool="long_task"] .result .error', { timeout: 10000, state: 'attached' });
  report.stopped = await stopped.textContent();
  if (!/cancel/i.test(report.stopped)) throw new Error(`the stopped call says ${report.stopped}`);
  await until('the live view to empty', async () => (await page.$$('#live-calls button.stop')).length === 0);
  step('an operator stopped a call from the live view');

  // book_table: the elicitation form.
  await page.click('nav button[data-tab="tools"]');
  await page.click('button.tool[data-tool="book_table"]');
  await page.fill('#arg-book_table-restaurant', 'Chez Test');
  await page.click('#call-button');
  await page.waitForSelector('dialog#elicitation[open]', { timeout: 10000 });
  await page.fill('#elicit-name', 'Ada');
  await page.fill('#elicit-guests', '4');
  await shot('04-elicitation');
  await page.click('#elicit-accept');
  const booked = await page.waitForSelector('.call.done[data-tool="book_table"] .result-text', { timeout: 10000 });
  report.booking = await booked.textContent();
  if (!report.booking.includes('for 4 at Chez Test under the name Ada')) throw new Error(`booking: ${report.booking}`);
  step("book_table's form answered");

  // The charts update from /metrics.
  await page.click('nav button[data-tab="charts"]');
  const updates = () => page.$eval('#chart-requests', (b) => Number(b.dataset.updates || 0));
  const before = await updates();
  await until('the requests chart to update', async () => (await updates()) >= before + 2);
  const line = await page.$('#chart-requests polyline.series');
  if (!line) throw new Error('the requests chart draws no line');
  step('charts update');
  await shot('05-charts');

  // Live views and the optional ones answer without a gateway or tasks.
  await page.click('nav button[data-tab="upstreams"]');
  await page.waitForSelector('#upstreams p.hint', { timeout: 5000 });
  step('optional views answer');

  // The last bench report, drawn with its knee.
  await page.click('nav button[data-tab="bench"]');
  const knee = await page.waitForSelector('#bench svg #knee', { timeout: 5000, state: 'attached' });
  report.benchKnee = await knee.getAttribute('data-concurrency');
  await shot('06-bench');
  step('the last bench report is shown');

  if (session.errors.length) throw new Error(`console errors: ${session.errors.join('; ')}`);
  step('no console errors');
  await session.context.close();
  finish(report);
} catch (error) {
  if (session) {
    report.consoleErrors = session.errors;
    await session.shot('failure').catch(() => {});
    await session.context.close().catch(() => {});
  }
  finish(report, error);
}
