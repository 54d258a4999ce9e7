// Shared test helpers: temporary directories, a simulator per test, polling a condition.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubeletSim, type KubeletSim, type KubeletSimOptions } from '../src/index.js';
import { TestPlugin, type TestPluginOptions } from './test-plugin.js';
import { waitFor as waitUntil, type Falsy } from '@plugboard/testbed/wait';

export interface SimFixture {
  sim: KubeletSim;
  dir: string;
  stateDir: string;
  /** The plugins_registry directory, when started with `{ registry: true }`. */
  registry: string;
  cleanup: () => Promise<void>;
}

export async function startFixture(
  opts: Partial<KubeletSimOptions> = {},
  extra: { registry?: boolean } = {},
): Promise<SimFixture> {
  const root = mkdtempSync(join(tmpdir(), 'pb-ksim-'));
  const dir = join(root, 'device-plugins');
  const stateDir = join(root, 'state');
  const registry = join(root, 'plugins_registry');
  const sim = await startKubeletSim({
    devicePluginDir: dir,
    stateDir,
    ...(extra.registry ? { pluginsRegistryDir: registry } : {}),
    ...opts,
  });
  return {
    sim,
    dir,
    stateDir,
    registry,
    cleanup: async () => {
      await sim.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * A simulator with one registered test plugin whose devices are all allocatable; `stop` stops both.
 * The shared `before` of most suites.
 */
export async function startWithPlugin(
  simOptions: Partial<KubeletSimOptions>,
  pluginOptions: Omit<TestPluginOptions, 'dir'>,
): Promise<{ f: SimFixture; plugin: TestPlugin; stop: () => Promise<void> }> {
  const f = await startFixture(simOptions);
  const plugin = new TestPlugin({ dir: f.dir, ...pluginOptions });
  await plugin.start();
  await plugin.register();
  const name = pluginOptions.resourceName;
  const healthy = pluginOptions.devices.filter((d) => (d.health ?? 'Healthy') === 'Healthy').length;
  await waitFor(() => f.sim.state().resources[name]?.allocatable === healthy, `${name} devices`);
  return {
    f,
    plugin,
    stop: async () => {
      await plugin.stop();
      await f.cleanup();
    },
  };
}

/**
 * The test bed's waitFor with this suite's argument order: re-checks `check` every 10 ms until it
 * returns a truthy value, for at most `timeoutMs` (a bound for a busy machine, not a pause).
 */
export const waitFor = <T>(
  check: () => T | Falsy | Promise<T | Falsy>,
  what: string,
  timeoutMs = 5000,
): Promise<T> => waitUntil(what, check, timeoutMs, 10);

export function pod(
  name: string,
  resources: Record<string, number>,
  extra: { restartPolicy?: 'Always' | 'OnFailure' | 'Never'; init?: Record<string, number> } = {},
) {
  const res = (r: Record<string, number>) => ({
    limits: Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)])),
  });
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      restartPolicy: extra.restartPolicy ?? 'Always',
      ...(extra.init ? { initContainers: [{ name: 'init', resources: res(extra.init) }] } : {}),
      containers: [{ name: 'main', resources: res(resources) }],
    },
  };
}
