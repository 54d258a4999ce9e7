// A gateway whose kubelet and API server are not there (yet): it starts, serves, says why its
// sources are not ok, and keeps retrying — a missing PodResources socket or API server is a warning.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseGatewayConfig, startGateway } from '../src/index.js';
import type { NodeSnapshot } from '@plugboard/api';
import { waitFor } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'pb-gw-degraded-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A port nothing listens on: bind one, note it, close it. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

test('no kubelet, no API server: the gateway starts, serves and reports stale/connecting sources', async () => {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: c, cluster: { server: "http://127.0.0.1:' + String(await deadPort()) + '" } }]',
      'users: [{ name: u, user: {} }]',
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
    ].join('\n'),
  );
  mkdirSync(join(dir, 'dp'));
  const gw = await startGateway(
    parseGatewayConfig({
      resources: [{ name: 'plugboard.example/gpu', simulated: { count: 2 } }],
      gateway: {
        nodeName: 'lonely',
        listen: '127.0.0.1:0',
        devicePluginDir: join(dir, 'dp'),
        podResources: {
          socket: join(dir, 'missing', 'kubelet.sock'),
          pollIntervalMs: 100,
          maxBackoffMs: 200,
        },
        kube: { kubeconfig, maxBackoffMs: 200 },
        stateDir: join(dir, 'state'),
      },
    }),
    { logger: pino({ level: 'silent' }) },
  );
  try {
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    const ready = await fetch(`${gw.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(
      ((await ready.json()) as { detail: string }).detail,
      /plugboard\.example\/gpu \(registering/,
    );
    const s = await waitFor('both sources report why', async () => {
      const s = (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;
      return s.sources.podResources.reason && s.sources.kubernetes.reason ? s : null;
    });
    assert.equal(s.sources.podResources.status, 'connecting');
    assert.match(s.sources.podResources.reason!, /does not exist; retrying with backoff/);
    assert.equal(s.sources.kubernetes.status, 'connecting');
    assert.match(s.sources.kubernetes.reason!, /watch (nodes|pods) failed/);
    assert.equal(s.resources['plugboard.example/gpu']!.apiServer, null);
    assert.equal(
      s.resources['plugboard.example/gpu']!.kubelet.capacity,
      2,
      'devices come from the plugin meanwhile',
    );
    // Retries keep failing without flapping the status (no ok/stale churn in the event ring).
    await new Promise((r) => setTimeout(r, 500));
    const later = (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;
    assert.equal(later.sources.kubernetes.status, 'connecting');
    assert.equal(later.events.filter((e) => e.kind === 'source').length, 0);
  } finally {
    await gw.stop();
  }
});
