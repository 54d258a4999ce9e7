// A page load is clean: no console error (a missing favicon, a hydration mismatch, an uncaught
// exception) and no failed or refused request, on the overview and on a node page.
import { expect, test, type Page, type Request, type Response } from '@playwright/test';
import { webUrl } from './helpers';

/** The site icon as browsers ask for it: the <link rel="icon"> targets, or /favicon.ico. */
const ICON_PATH = /^\/(favicon\.ico|icon\.svg)$/;

/**
 * Next's router cancels its own route prefetches (`next-router-prefetch`) once it has the part it
 * needs; nothing is logged and nothing is missing, so those cancellations are not failures.
 */
function isCancelledPrefetch(r: Request): boolean {
  return r.failure()?.errorText === 'net::ERR_ABORTED' && r.headers()['next-router-prefetch'] === '1';
}

function recordProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (err) => problems.push(`uncaught: ${err.message}`));
  page.on('requestfailed', (r) => {
    if (!isCancelledPrefetch(r)) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return problems;
}

/**
 * Resolves with the site icon's response once the browser has fetched it, or with null once the
 * page logs an error: Chromium may fetch a missing /favicon.ico outside the page's network events
 * and only log its 404 to the console.
 */
function iconSettled(page: Page): Promise<Response | null> {
  const loaded = page.waitForResponse((r) => ICON_PATH.test(new URL(r.url()).pathname));
  const error = page.waitForEvent('console', (m) => m.type() === 'error').then(() => null);
  // Only the first matters; the other rejects when the page closes.
  loaded.catch(() => {});
  error.catch(() => {});
  return Promise.race([loaded, error]);
}

const PAGES = [
  {
    what: 'the overview',
    path: '/',
    ready: (page: Page) => page.getByRole('article', { name: 'gpu-node-a' }).getByText('● Live'),
  },
  {
    what: 'a node page',
    path: '/nodes/gpu-node-a',
    ready: (page: Page) => page.getByRole('region', { name: /^NUMA node 1 / }),
  },
  {
    what: 'the migration view',
    path: '/migration',
    ready: (page: Page) => page.getByRole('region', { name: 'plugboard.example/gpu' }),
  },
];

for (const { what, path, ready } of PAGES) {
  test(`${what} loads without a console error or a failed request`, async ({ page }) => {
    const problems = recordProblems(page);
    const icon = iconSettled(page);
    await page.goto(webUrl(path));
    await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
    await expect(ready(page)).toBeVisible();
    // The browser asks for the site icon on every load; it must be a real image.
    const iconResponse = await icon;
    if (iconResponse) expect(iconResponse.headers()['content-type'], iconResponse.url()).toMatch(/^image\//);
    // Everything the page starts while loading (history, faults, prefetches) has settled.
    await page.waitForLoadState('networkidle');
    expect(problems).toEqual([]);
  });
}

test('/favicon.ico and the SVG icon are served as images', async ({ request }) => {
  // Some clients ask for /favicon.ico whatever the page links to.
  const ico = await request.get(webUrl('/favicon.ico'));
  expect(ico.status()).toBe(200);
  expect(ico.headers()['content-type']).toBe('image/x-icon');
  const bytes = await ico.body();
  // ICONDIR: reserved 0, type 1 (icon), at least one image.
  expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2)]).toEqual([0, 1]);
  expect(bytes.readUInt16LE(4)).toBeGreaterThan(0);

  const html = await (await request.get(webUrl('/'))).text();
  const href = /<link rel="icon" href="([^"]+)"[^>]*type="image\/svg\+xml"/.exec(html)?.[1] ?? '';
  expect(href, 'the page links its SVG icon').toMatch(/^\/icon\.svg/);
  const svg = await request.get(webUrl(href));
  expect(svg.status()).toBe(200);
  expect(svg.headers()['content-type']).toContain('image/svg+xml');
  expect(await svg.text()).toContain('<svg');
});
