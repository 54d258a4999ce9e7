// Label and field selectors as the API server parses them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from './object-store.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';

const obj = (
  name: string,
  labels: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: name, creationTimestamp: '', labels },
  ...extra,
});

test('label selectors', () => {
  const o = obj('a', { app: 'web', tier: 'front' });
  const cases: [string, boolean][] = [
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app in (web,api)', true],
    ['app notin (web)', false],
    ['tier', true],
    ['!tier', false],
    ['app=web,tier=back', false],
    ['', true],
  ];
  for (const [sel, want] of cases) assert.equal(parseLabelSelector(sel)(o), want, sel);
  assert.throws(() => parseLabelSelector('app=(x'), SelectorError);
});

test("field selectors know each kind's field labels", () => {
  const p = obj('p', {}, { spec: { nodeName: 'n1' }, status: { phase: 'Running' } });
  assert.equal(parseFieldSelector('spec.nodeName=n1', 'Pod')(p), true);
  assert.equal(parseFieldSelector('spec.nodeName=n2', 'Pod')(p), false);
  assert.equal(parseFieldSelector('status.phase!=Failed,metadata.name=p', 'Pod')(p), true);
  assert.throws(() => parseFieldSelector('spec.bogus=1', 'Pod'), /field label not supported: spec.bogus/);
  assert.throws(() => parseFieldSelector('spec.nodeName=n1', 'Node'), /field label not supported/);
});
