// TaintRuleFaults against an API server that refuses the gateway (RBAC): a real HTTP server on port 0
// answering as kube-apiserver does (a 403 Status), reached through the gateway's own request path
// (kube-connection.ts with a kubeconfig). The refusal is a GatewayError 'forbidden' naming the verb
// and resource the gateway's identity lacks.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../errors.js';
import { createApiServerRequest, loadKubeConfig } from '../sources/kube-connection.js';
import { faultTaintRule, TaintRuleFaults } from './taint-rules.js';

let server: http.Server;
let dir: string;
const seen: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    const status = (code: number, reason: string, message: string) =>
      res
        .writeHead(code, { 'content-type': 'application/json' })
        .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code }));
    if (req.method === 'GET') {
      const name = req.url!.split('/').at(-1);
      status(404, 'NotFound', `devicetaintrules.resource.k8s.io "${name}" not found`);
    } else {
      status(
        403,
        'Forbidden',
        'devicetaintrules.resource.k8s.io is forbidden: User "system:serviceaccount:plugboard:gateway" cannot create resource "devicetaintrules" in API group "resource.k8s.io" at the cluster scope',
      );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  dir = mkdtempSync(join(tmpdir(), 'pb-taint-rules-'));
  const { port } = server.address() as AddressInfo;
  writeFileSync(
    join(dir, 'kubeconfig'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: 'u', user: { token: 'gateway-token' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

test('an RBAC refusal is a forbidden GatewayError naming the missing permission', async () => {
  const request = createApiServerRequest(loadKubeConfig('kubeconfig', join(dir, 'kubeconfig')));
  const faults = new TaintRuleFaults({ nodeName: 'n1' });
  faults.connect(request);
  const rule = faultTaintRule('gpu.example.com', 'n1', 'gpu-0');
  try {
    await assert.rejects(faults.apply({ rule, effect: 'None', reason: 'drill' }), (err: unknown) => {
      assert.ok(err instanceof GatewayError);
      assert.equal(err.code, 'forbidden');
      assert.match(
        err.message,
        new RegExp(
          `^the API server refused to create DeviceTaintRule ${rule.name}: the gateway's identity needs "create" on devicetaintrules \\(resource\\.k8s\\.io, cluster-scoped\\)`,
        ),
      );
      assert.match(err.message, /cannot create resource "devicetaintrules"/);
      return true;
    });
    assert.deepEqual(seen, [
      `GET /apis/resource.k8s.io/v1/devicetaintrules/${rule.name}`,
      'POST /apis/resource.k8s.io/v1/devicetaintrules',
    ]);
  } finally {
    faults.close();
    request.close();
  }
});

test('rule names: one per device, stable, valid object names', () => {
  const a = faultTaintRule('gpu.example.com', 'pool-a', 'gpu-0');
  assert.deepEqual(a, faultTaintRule('gpu.example.com', 'pool-a', 'gpu-0'));
  assert.notEqual(a.name, faultTaintRule('gpu.example.com', 'pool-b', 'gpu-0').name);
  assert.match(a.name, /^plugboard-fault-[0-9a-f]{20}$/);
});
