// The plugboard-gateway bin as a user runs it: help, configuration errors (exit 2 naming file and
// field), the refusal to expose unauthenticated mutations beyond loopback, and a clean SIGTERM.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './helpers.js';

const bin = fileURLToPath(new URL('../bin/plugboard-gateway.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'pb-gw-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const config = join(dir, 'gw.yaml');
writeFileSync(config, 'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: 2 }\n');
mkdirSync(join(dir, 'dp'));

function run(
  args: string[],
  onStart?: (child: ReturnType<typeof spawn>, out: () => string) => Promise<void>,
) {
  const child = spawn(process.execPath, [bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PLUGBOARD_CONFIG: '' },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, out })),
  );
  return onStart ? onStart(child, () => out).then(() => done) : done;
}

test('--help, bad config and unauthenticated non-loopback exposure', async () => {
  const [help, bad, exposed] = await Promise.all([
    run(['--help']),
    run(['--config', config, '--listen', 'not-an-address']),
    run(['--config', config, '--listen', '0.0.0.0:0', '--no-kube', '--device-plugin-dir', join(dir, 'dp')]),
  ]);
  assert.equal(help.code, 0);
  assert.match(help.out, /--pod-resources-socket PATH/);
  assert.match(help.out, /--insecure-allow-unauthenticated/);
  assert.equal(bad.code, 2);
  assert.match(bad.out, /gw\.yaml: gateway\.listen: must be HOST:PORT/);
  assert.equal(exposed.code, 2);
  assert.match(exposed.out, /refusing to listen on 0\.0\.0\.0 without authentication/);
});

test('runs on loopback without a token (and says so), serves, stops on SIGTERM', async () => {
  const res = await run(
    [
      '--config',
      config,
      '--listen',
      '127.0.0.1:0',
      '--no-kube',
      '--pod-resources-socket',
      '',
      '--device-plugin-dir',
      join(dir, 'dp'),
    ],
    async (child, out) => {
      const url = await waitFor(
        'listening log line',
        () => /"url":"(http:\/\/[^"]+)"/.exec(out())?.[1],
        20_000,
      );
      assert.match(out(), /mutations need no token/);
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      child.kill('SIGTERM');
    },
  );
  assert.equal(res.code, 0);
});

test('SIGTERM while its Kubernetes lists are in flight: the gateway opens no watch after stopping and exits 0', async () => {
  // An API server that holds every list until the gateway has been told to stop, then answers them.
  const held: ServerResponse[] = [];
  const watchesAfterStop: string[] = [];
  let stopping = false;
  const api = createServer((req, res) => {
    const url = req.url ?? '';
    if (/[?&]watch=(true|1)\b/.test(url)) {
      if (stopping) watchesAfterStop.push(url);
      res.writeHead(200, { 'content-type': 'application/json' });
      return; // held open, as a watch is
    }
    if (/^\/(api\/v1\/(nodes|pods)|apis\/resource\.k8s\.io\/v1\/\w+)(\?|$)/.test(url)) {
      held.push(res);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  after(() => {
    api.closeAllConnections();
    api.close();
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'c', cluster: { server: `http://127.0.0.1:${(api.address() as AddressInfo).port}` } },
      ],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  const res = await run(
    [
      '--config',
      config,
      '--listen',
      '127.0.0.1:0',
      '--node-name',
      'stop-node',
      '--kubeconfig',
      kubeconfig,
      '--pod-resources-socket',
      '',
      '--device-plugin-dir',
      join(dir, 'dp'),
    ],
    async (child, out) => {
      await waitFor('listening log line', () => /"url":"http:/.test(out()), 20_000);
      await waitFor('the Node and Pod lists in flight', () => held.length >= 2, 20_000);
      stopping = true;
      child.kill('SIGTERM');
      await waitFor('the gateway stopping', () => /"msg":"stopping"/.test(out()), 20_000);
      for (const r of held.splice(0))
        r.writeHead(200, { 'content-type': 'application/json' }).end(
          '{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}',
        );
    },
  );
  assert.deepEqual(watchesAfterStop, [], 'no watch opened after stop()');
  assert.equal(res.code, 0, res.out);
});
