import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadPluginConfig, parseConfigWith, parsePluginConfig, pluginConfigSchema } from './config.js';
import { PluginError } from './errors.js';

const gpu = { name: 'plugboard.example/gpu', simulated: { count: 2 } };
const dra = { driver: 'gpu.example.com', simulated: { count: 2 } };

const invalid: { name: string; config: unknown; message: RegExp }[] = [
  {
    name: 'empty document',
    config: null,
    message: /resources: needs at least one resource \(or a driver under dra\)/,
  },
  { name: 'no resources', config: { resources: [] }, message: /resources: needs at least one resource/ },
  {
    name: 'no resources and no drivers',
    config: { resources: [], dra: [] },
    message: /or a driver under dra/,
  },
  { name: 'dra not a list', config: { dra: { driver: 'a.example' } }, message: /cfg: dra: .*expected array/ },
  {
    name: 'DRA driver name not a DNS subdomain',
    config: { dra: [{ ...dra, driver: 'GPU_Driver' }] },
    message: /cfg: dra\[0\]\.driver: must be a lower-case DNS subdomain/,
  },
  {
    name: 'DRA driver name too long',
    config: { dra: [{ ...dra, driver: `${'a'.repeat(60)}.example` }] },
    message: /dra\[0\]\.driver: must be at most 63 characters/,
  },
  {
    name: 'DRA driver without a source',
    config: { dra: [{ driver: 'gpu.example.com' }] },
    message: /dra\[0\]: needs exactly one device source.*found none/,
  },
  {
    name: 'duplicate DRA drivers',
    config: { dra: [dra, dra] },
    message: /dra\[1\]\.driver: duplicates dra\[0\]\.driver "gpu\.example\.com"/,
  },
  {
    name: 'unknown DRA key',
    config: { dra: [{ ...dra, taint: { effect: 'NoSchedule' } }] },
    message: /dra\[0\]: unknown key "taint"/,
  },
  {
    name: 'attribute with two values',
    config: { dra: [{ ...dra, attributes: { model: { string: 'x', int: 1 } } }] },
    message: /dra\[0\]\.attributes\.model: needs exactly one of int, bool, string, version/,
  },
  {
    name: 'attribute name not an identifier',
    config: { dra: [{ ...dra, attributes: { 'pci-address': { string: 'x' } } }] },
    message: /dra\[0\]\.attributes\.pci-address: .*must be a C identifier/,
  },
  {
    name: 'attribute string longer than the API allows',
    config: { dra: [{ ...dra, attributes: { model: { string: 'x'.repeat(65) } } }] },
    message: /dra\[0\]\.attributes\.model\.string:/,
  },
  {
    name: 'unknown attribute template variable',
    config: { dra: [{ ...dra, attributes: { model: { string: '{{ids}}' } } }] },
    message:
      /attributes\.model\.string: unknown template variable\(s\) \{\{ids\}\}; known: id, name, numaNode/,
  },
  {
    name: 'bad version attribute',
    config: { dra: [{ ...dra, attributes: { fw: { version: 'v1' } } }] },
    message: /attributes\.fw\.version: must be a semantic version/,
  },
  {
    name: 'bad capacity quantity',
    config: { dra: [{ ...dra, capacity: { memory: '80 GB' } }] },
    message: /dra\[0\]\.capacity\.memory: must be a quantity/,
  },
  {
    name: 'taint effect PreferNoSchedule (not valid for devices)',
    config: { dra: [{ ...dra, taints: { effect: 'PreferNoSchedule' } }] },
    message: /dra\[0\]\.taints\.effect:/,
  },
  {
    name: 'too many attributes',
    config: {
      dra: [
        {
          ...dra,
          attributes: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`a${i}`, { int: i }])),
        },
      ],
    },
    message:
      /dra\[0\]\.attributes: a device may have at most 32 attributes and capacities; with the 2 the driver adds this is 33/,
  },
  {
    name: 'relative fault directory',
    config: { dra: [{ ...dra, faultDir: 'faults' }] },
    message: /dra\[0\]\.faultDir: must be an absolute path/,
  },
  {
    name: 'unknown top-level key',
    config: { resources: [gpu], extra: 1 },
    message: /cfg: \(root\): unknown key "extra"/,
  },
  {
    name: 'unknown resource key',
    config: { resources: [{ ...gpu, replica: 2 }] },
    message: /resources\[0\]: unknown key "replica"/,
  },
  {
    name: 'name without domain',
    config: { resources: [{ ...gpu, name: 'gpu' }] },
    message: /resources\[0\]\.name: must be domain-prefixed/,
  },
  {
    name: 'kubernetes.io namespace',
    config: { resources: [{ ...gpu, name: 'kubernetes.io/gpu' }] },
    message: /resources\[0\]\.name: the kubernetes\.io namespace/,
  },
  {
    name: 'requests. prefix',
    config: { resources: [{ ...gpu, name: 'requests.example.com/gpu' }] },
    message: /reserved for quota/,
  },
  {
    name: 'duplicate names',
    config: { resources: [gpu, gpu] },
    message: /resources\[1\]\.name: duplicates resources\[0\]\.name/,
  },
  {
    name: 'no source',
    config: { resources: [{ name: 'a.example/x' }] },
    message: /resources\[0\]: needs exactly one device source.*found none/,
  },
  {
    name: 'two sources',
    config: { resources: [{ ...gpu, paths: { patterns: ['/dev/fuse'] } }] },
    message: /resources\[0\]\.paths: needs exactly one device source.*simulated and paths/,
  },
  {
    name: 'negative count',
    config: { resources: [{ ...gpu, simulated: { count: -1 } }] },
    message: /resources\[0\]\.simulated\.count:/,
  },
  {
    name: 'relative path pattern',
    config: { resources: [{ name: 'a.example/tty', paths: { patterns: ['dev/tty*'] } }] },
    message: /resources\[0\]\.paths\.patterns\[0\]: must be an absolute path/,
  },
  {
    name: 'bad vendor ID',
    config: { resources: [{ name: 'a.example/nic', sysfsPci: { vendor: '8086' } }] },
    message: /sysfsPci\.vendor: must be a hex ID/,
  },
  {
    name: 'replicas zero',
    config: { resources: [{ ...gpu, replicas: 0 }] },
    message: /resources\[0\]\.replicas:/,
  },
  {
    name: 'failRequestsGreaterThanOne without replicas',
    config: { resources: [{ ...gpu, failRequestsGreaterThanOne: true }] },
    message: /failRequestsGreaterThanOne: only applies to shared resources/,
  },
  {
    name: 'unknown template variable',
    config: { resources: [{ ...gpu, allocate: { env: { X: '{{idz}}' } } }] },
    message: /resources\[0\]\.allocate\.env\.X: unknown template variable\(s\) \{\{idz\}\}/,
  },
  {
    name: 'bad env name',
    config: { resources: [{ ...gpu, allocate: { env: { 'A-B': 'x' } } }] },
    message: /allocate\.env.*environment variable name/,
  },
  {
    name: 'bad permissions',
    config: { resources: [{ ...gpu, allocate: { devices: [{ hostPath: '/dev/x', permissions: 'rwx' }] } }] },
    message: /allocate\.devices\[0\]\.permissions: must be one or more of r, w, m/,
  },
  {
    name: 'CDI without vendor',
    config: { resources: [{ ...gpu, allocate: { cdi: { class: 'gpu' } } }] },
    message: /allocate\.cdi\.vendor:/,
  },
  {
    name: 'empty preStart',
    config: { resources: [{ ...gpu, preStart: {} }] },
    message: /resources\[0\]\.preStart: needs "command"/,
  },
  {
    name: 'bad socket name',
    config: { resources: [{ ...gpu, socketName: '../x.sock' }] },
    message: /socketName: must be a file name ending in \.sock/,
  },
];

describe('plugin config', () => {
  for (const row of invalid) {
    it(`rejects ${row.name}`, () => {
      assert.throws(
        () => parsePluginConfig(row.config, 'cfg'),
        (err: PluginError) => {
          assert.ok(err instanceof PluginError);
          assert.equal(err.code, 'config-invalid');
          assert.match(err.message, /^cfg/);
          assert.match(err.message, row.message);
          return true;
        },
      );
    });
  }

  it('fills defaults and freezes the result', () => {
    const config = parsePluginConfig({ resources: [gpu] });
    const r = config.resources[0]!;
    assert.deepEqual(
      [r.replicas, r.failRequestsGreaterThanOne, r.preferredAllocation, r.exclude],
      [1, false, true, []],
    );
    assert.ok(Object.isFrozen(config) && Object.isFrozen(r));
  });

  it('takes DRA drivers beside device plugins, with defaults', () => {
    const config = parsePluginConfig({
      resources: [gpu],
      dra: [
        { ...dra, attributes: { model: { string: 'PB-{{id}}' }, 'example.com/fw': { version: '1.2.3' } } },
      ],
    });
    const d = config.dra[0]!;
    assert.deepEqual(
      [d.driver, d.replicas, d.exclude, d.capacity, d.taints, Object.keys(d.attributes)],
      ['gpu.example.com', 1, [], {}, undefined, ['model', 'example.com/fw']],
    );
    assert.ok(Object.isFrozen(d));
    assert.deepEqual(parsePluginConfig({ dra: [dra] }).resources, [], 'device plugins are optional then');
  });

  it('accepts and ignores a top-level gateway key', () => {
    const config = parsePluginConfig({ resources: [gpu], gateway: { listen: '0.0.0.0:9400' } });
    assert.equal(config.resources.length, 1);
  });

  it('can be extended by the gateway, keeping the strict unknown-key check', () => {
    const extended = pluginConfigSchema.extend({
      gateway: z.strictObject({ listen: z.string() }).optional(),
    });
    const parsed = parseConfigWith(extended, { resources: [gpu], gateway: { listen: ':9400' } }, 'gw.yaml');
    assert.equal(parsed.gateway?.listen, ':9400');
    assert.throws(
      () => parseConfigWith(extended, { resources: [gpu], gateway: { port: 1 } }, 'gw.yaml'),
      /gw\.yaml: gateway: unknown key "port"/,
    );
  });

  it('allows nothing to serve only when asked (the gateway observing), still validating the rest', () => {
    assert.throws(() => parseConfigWith(pluginConfigSchema, { resources: [] }, 'p.yaml'), /at least one/);
    const parsed = parseConfigWith(pluginConfigSchema, { resources: [] }, 'gw.yaml', {
      allowNothingToServe: true,
    });
    assert.deepEqual([parsed.resources, parsed.dra], [[], []]);
    assert.throws(
      () => parseConfigWith(pluginConfigSchema, { bogus: 1 }, 'gw.yaml', { allowNothingToServe: true }),
      /gw\.yaml: \(root\): unknown key "bogus"/,
    );
  });

  it('reports YAML syntax errors with file and line', () => {
    assert.throws(
      () => parsePluginConfig('resources:\n  - name: [unclosed\n', 'bad.yaml'),
      /bad\.yaml \(line \d+\): invalid YAML/,
    );
  });

  describe('files', () => {
    let dir: string;
    after(() => rm(dir, { recursive: true, force: true }));

    it('names the file in errors and when it cannot be read', async () => {
      dir = await mkdtemp(join(tmpdir(), 'pb-config-'));
      const file = join(dir, 'plugin.yaml');
      await writeFile(file, 'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: many }\n');
      await assert.rejects(
        loadPluginConfig(file),
        new RegExp(`${file}: resources\\[0\\]\\.simulated\\.count:`),
      );
      await assert.rejects(loadPluginConfig(join(dir, 'missing.yaml')), /missing\.yaml: cannot read config/);
    });

    for (const example of ['examples/plugins/usb-serial.yaml', 'examples/plugins/vfio-gpus.yaml']) {
      it(`${example} is valid`, async () => {
        const file = new URL(`../../../${example}`, import.meta.url).pathname;
        const config = parsePluginConfig(await readFile(file, 'utf8'), file);
        assert.equal(config.resources.length, 1);
      });
    }

    it('examples/dra-node.yaml is valid: one DRA driver with 8 GPUs on 2 NUMA nodes and taints', async () => {
      const file = new URL('../../../examples/dra-node.yaml', import.meta.url).pathname;
      const config = parsePluginConfig(await readFile(file, 'utf8'), file);
      assert.deepEqual(config.resources, []);
      assert.equal(config.dra.length, 1);
      const [driver] = config.dra;
      assert.equal(driver?.driver, 'gpu.plugboard.example');
      assert.deepEqual([driver?.simulated?.count, driver?.simulated?.numaNodes], [8, [0, 1]]);
      assert.equal(driver?.taints?.effect, 'NoSchedule');
    });

    it('examples/sim-node.yaml is valid: 8 GPUs on 2 NUMA nodes, NIC VFs and a shared resource', async () => {
      const file = new URL('../../../examples/sim-node.yaml', import.meta.url).pathname;
      const config = parsePluginConfig(await readFile(file, 'utf8'), file);
      const gpus = config.resources.find((r) => r.simulated?.count === 8);
      assert.deepEqual(gpus?.simulated?.numaNodes, [0, 1]);
      assert.ok(config.resources.some((r) => r.name.includes('vf')));
      assert.ok(config.resources.some((r) => r.replicas > 1));
    });
  });
});
