import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWebConfig, parseGatewayList } from './config';
import { WebError } from './errors';

describe('web config', () => {
  it('parses PLUGBOARD_GATEWAYS and defaults to loopback:3000', () => {
    const cfg = loadWebConfig({
      PLUGBOARD_GATEWAYS: 'gpu-node-a=http://127.0.0.1:7001, edge-node=http://127.0.0.1:7002/',
    });
    assert.equal(cfg.port, 3000);
    assert.equal(cfg.host, '127.0.0.1');
    assert.deepEqual(cfg.discovery, {
      mode: 'static',
      source: 'PLUGBOARD_GATEWAYS',
      gateways: [
        { name: 'gpu-node-a', url: 'http://127.0.0.1:7001' },
        { name: 'edge-node', url: 'http://127.0.0.1:7002' },
      ],
    });
  });

  it('reads a gateway file (JSON or NAME=URL lines)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-web-'));
    writeFileSync(join(dir, 'g.json'), JSON.stringify({ gateways: [{ name: 'a', url: 'http://h:1' }] }));
    writeFileSync(join(dir, 'g.txt'), '# demo\nb=http://h:2\n');
    assert.deepEqual(loadWebConfig({ PLUGBOARD_GATEWAYS_FILE: join(dir, 'g.json') }).discovery, {
      mode: 'static',
      source: join(dir, 'g.json'),
      gateways: [{ name: 'a', url: 'http://h:1' }],
    });
    assert.equal(
      (
        loadWebConfig({ PLUGBOARD_GATEWAYS_FILE: join(dir, 'g.txt') }).discovery as unknown as {
          gateways: unknown[];
        }
      ).gateways.length,
      1,
    );
  });

  it('selects Kubernetes discovery by selector', () => {
    const cfg = loadWebConfig({
      PLUGBOARD_GATEWAY_SELECTOR: 'app.kubernetes.io/component=gateway',
      PLUGBOARD_GATEWAY_NAMESPACE: 'pb',
      PLUGBOARD_GATEWAY_PORT: '9477',
    });
    assert.deepEqual(cfg.discovery, {
      mode: 'kubernetes',
      selector: 'app.kubernetes.io/component=gateway',
      namespace: 'pb',
      port: 9477,
      scheme: 'http',
    });
  });

  it('honours HOSTNAME only when it is an IP literal', () => {
    assert.equal(loadWebConfig({ HOSTNAME: '0.0.0.0' }).host, '0.0.0.0');
    assert.equal(loadWebConfig({ HOSTNAME: 'my-laptop' }).host, '127.0.0.1');
    assert.equal(loadWebConfig({ HOST: '::1', HOSTNAME: '0.0.0.0' }).host, '::1');
  });

  it('requires a bearer token for mutations when bound beyond loopback, unless explicitly allowed', () => {
    assert.equal(loadWebConfig({}).mutationsNeedToken, false);
    assert.equal(loadWebConfig({ HOST: '::1' }).mutationsNeedToken, false);
    assert.equal(loadWebConfig({ HOST: '0.0.0.0' }).mutationsNeedToken, true);
    assert.equal(
      loadWebConfig({ HOST: '0.0.0.0', PLUGBOARD_INSECURE_ALLOW_UNAUTHENTICATED: 'true' }).mutationsNeedToken,
      false,
    );
  });

  it('names the variable and the reason on bad input', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PLUGBOARD_GATEWAYS: 'a=ftp://x' }, /^PLUGBOARD_GATEWAYS: entry "a=ftp:\/\/x"/],
      [{ PLUGBOARD_GATEWAYS: 'justaname' }, /not NAME=URL/],
      [{ PLUGBOARD_GATEWAYS: 'a=http://x:1,a=http://y:1' }, /listed twice/],
      [{ PORT: 'abc' }, /^PORT: /],
      [{ PLUGBOARD_GATEWAYS: 'a=http://x:1', PLUGBOARD_GATEWAY_SELECTOR: 'x=y' }, /set only one/],
      [{ PLUGBOARD_GATEWAYS_FILE: '/nonexistent/file' }, /cannot read \/nonexistent\/file/],
      [{ PLUGBOARD_GATEWAY_DISCOVERY: 'kubernetes' }, /PLUGBOARD_GATEWAY_SELECTOR: required/],
    ];
    for (const [env, re] of cases) {
      assert.throws(
        () => loadWebConfig(env),
        (e: unknown) => e instanceof WebError && e.code === 'config' && re.test(e.message),
        JSON.stringify(env),
      );
    }
  });

  it('parseGatewayList accepts newlines and comments', () => {
    assert.deepEqual(parseGatewayList('X', 'a=http://h:1\n# c\n\nb=https://h:2'), [
      { name: 'a', url: 'http://h:1' },
      { name: 'b', url: 'https://h:2' },
    ]);
  });
});
