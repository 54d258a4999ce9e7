// Shared by the browser specs: where the web server and the gateways are, the gateways' own view
// of the truth, an axe scan that fails on serious/critical violations, and screenshots as artefacts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, type Page } from '@playwright/test';
import type { NodeSnapshot, NodeSummary } from '@plugboard/api';
import { seriousA11yViolations } from './axe';
import type { FixtureInfo } from './cluster-fixture';
import { WEB_DIR } from './processes';

export function webUrl(path = '/'): string {
  const base = process.env.PLUGBOARD_WEB_URL;
  if (!base) throw new Error('PLUGBOARD_WEB_URL is not set: global setup did not run');
  return `${base}${path}`;
}

export function fixture(): FixtureInfo {
  return JSON.parse(process.env.PLUGBOARD_FIXTURE ?? '{}') as FixtureInfo;
}

function gatewayUrl(node: string): string {
  const g = fixture().gateways.find((x) => x.name === node);
  if (!g) throw new Error(`no gateway ${node} in the fixture`);
  return g.url;
}

/** The gateway's own snapshot, read directly (not through the web server): the test's oracle. */
export async function gatewaySnapshot(node: string): Promise<NodeSnapshot> {
  return (await (await fetch(`${gatewayUrl(node)}/api/v1/node`)).json()) as NodeSnapshot;
}

export async function gatewaySummary(node: string): Promise<NodeSummary> {
  return (await (await fetch(`${gatewayUrl(node)}/api/v1/summary`)).json()) as NodeSummary;
}

export async function expectNoSeriousA11yViolations(page: Page, what: string): Promise<void> {
  expect(await seriousA11yViolations(page), `axe on ${what}`).toEqual([]);
}

export async function saveScreenshot(page: Page, name: string): Promise<void> {
  const dir = join(WEB_DIR, 'test-results', 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}
