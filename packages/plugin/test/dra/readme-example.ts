// A README's DRA driver example (examples/plugins/<file>) run as written, as its own process: a fake
// API server with the node, a test DRA kubelet on its own plugins_registry, the check that the
// README shows the file verbatim, and the run — started with the example's environment, registered,
// then the test's steps, ended by SIGTERM with exit 0 and its registration socket removed.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeApiServer } from './fake-api-server.js';
import { TestDraKubelet } from './test-dra-kubelet.js';

export const root = fileURLToPath(new URL('../../../..', import.meta.url));

export interface ReadmeDraExample {
  readonly api: FakeApiServer;
  /** A temporary directory of the suite's own (the example's plugins_registry is `registry` in it). */
  readonly dir: string;
  /** Starts the example with `env` beside the defaults, waits for its registration, runs `steps`. */
  run(env: NodeJS.ProcessEnv, steps: (kubelet: TestDraKubelet) => Promise<void>): Promise<void>;
}

/** Call inside a `describe`: registers its before/after hooks and the README check. */
export function readmeDraExample(file: string, driver: string, node: string): ReadmeDraExample {
  const example = join(root, 'examples/plugins', file);
  let api: FakeApiServer;
  let dir: string;
  before(async () => {
    api = await FakeApiServer.start();
    api.addNode(node);
    dir = await mkdtemp(join(tmpdir(), 'pb-dra-readme-'));
  });
  after(async () => {
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  });
  it('the README shows the example file verbatim', async () => {
    const readme = await readFile(join(root, 'packages/plugin/README.md'), 'utf8');
    const code = await readFile(example, 'utf8');
    assert.ok(readme.includes('```ts\n' + code + '```'), `README code block equals examples/plugins/${file}`);
  });
  return {
    get api() {
      return api;
    },
    get dir() {
      return dir;
    },
    async run(env, steps) {
      const registry = join(dir, 'registry');
      await mkdir(registry, { recursive: true });
      const kubelet = new TestDraKubelet(registry);
      kubelet.start();
      const child = spawn(process.execPath, ['--conditions=@plugboard/source', '--import', 'tsx', example], {
        cwd: root,
        env: {
          ...process.env,
          KUBECONFIG: api.kubeconfigPath,
          NODE_NAME: node,
          PLUGINS_REGISTRY_DIR: registry,
          ...env,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const exited = once(child, 'exit');
      try {
        await kubelet.registered(driver, { timeoutMs: 60_000 });
        await steps(kubelet);
      } finally {
        child.kill('SIGTERM');
        kubelet.stop();
      }
      const [code] = (await exited) as [number | null];
      assert.equal(code, 0);
      await assert.rejects(stat(join(registry, `${driver}-reg.sock`)), { code: 'ENOENT' });
    },
  };
}
