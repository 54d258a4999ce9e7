// The `helm test` pod's script, taken from the rendered chart and run with node against a real HTTP
// server on port 0 standing in for a gateway: it passes on 200, retries while gateways are not
// ready, and fails with the gateway's answer once its deadline passes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { at, only, render } from './helm.js';

const run = promisify(execFile);

/** Statuses /readyz answers, in order; the last one repeats. */
let answers: number[] = [200];
let requests = 0;
let server: Server;
let port = 0;

before(async () => {
  server = createServer((req, res) => {
    const status = answers[Math.min(requests, answers.length - 1)] ?? 200;
    requests++;
    if (req.url !== '/readyz') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/problem+json' });
    res.end(status === 200 ? '{}' : '{"detail":"not registered yet: plugboard.example/gpu"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The rendered test script, pointed at the stand-in gateway. */
function hookScript(timeoutSeconds: number): string {
  const pod = only(render({ values: { tests: { timeoutSeconds } } }), 'Pod', '-test-gateway-readyz');
  assert.deepEqual(at(pod, 'spec', 'containers', 0, 'command'), ['node', '-e']);
  const script = String(at(pod, 'spec', 'containers', 0, 'args', 0));
  const pointed = script
    .replace(/const host = "pb-plugboard-gateway\.plugboard\.svc";/, 'const host = "127.0.0.1";')
    .replace(/const port = 9400;/, `const port = ${port};`);
  assert.notEqual(pointed, script);
  assert.match(pointed, /const host = "127\.0\.0\.1";/);
  assert.match(pointed, new RegExp(`const port = ${port};`));
  return pointed;
}

async function runHook(timeoutSeconds = 10): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['-e', hookScript(timeoutSeconds)], {
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('helm test hook script', () => {
  it('passes when every gateway answers /readyz with 200', async () => {
    answers = [200];
    requests = 0;
    const res = await runHook();
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`http://127\\.0\\.0\\.1:${port}/readyz -> 200`));
  });

  it('retries while a gateway is not ready yet', async () => {
    answers = [503, 200];
    requests = 0;
    const res = await runHook();
    assert.equal(res.code, 0, res.stderr);
    assert.equal(requests, 2);
  });

  it('fails with the gateway answer once the deadline passes', async () => {
    answers = [503];
    requests = 0;
    const res = await runHook(1);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /-> 503 .*not registered yet: plugboard\.example\/gpu/);
    assert.ok(requests >= 2, `retried (${requests} requests)`);
  });
});
