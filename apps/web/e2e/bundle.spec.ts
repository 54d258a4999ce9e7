// The browser bundles of the production build carry no server library.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { WEB_DIR } from './processes';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? files(full) : [full];
  });
}

test('no @grpc/grpc-js, @kubernetes/client-node, ws or pino in browser bundles', () => {
  const scripts = files(join(WEB_DIR, '.next', 'static')).filter((f) => f.endsWith('.js'));
  expect(scripts.length).toBeGreaterThan(0);
  const markers = [
    /@grpc\/grpc-js|grpc-js/,
    /@kubernetes\/client-node|makeInformer|loadFromDefault/,
    /WebSocketServer|perMessageDeflate/,
    /pino\.destination|"pino"/,
  ];
  const hits = scripts.flatMap((f) => {
    const text = readFileSync(f, 'utf8');
    return markers.filter((m) => m.test(text)).map((m) => `${f}: ${m}`);
  });
  expect(hits).toEqual([]);
});
