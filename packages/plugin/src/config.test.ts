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
const parted = { ...dra, partitions: { counters: { memory: '40Gi' }, even: [1, 2, 4] } };
/** A shared device with 40Gi and the given requestPolicy for it. */
const shared = (policy: unknown, sharing: object = { allowMultipleAllocations: true }) => ({
  dra: [{ ...dra, capacity: { memory: '40Gi' }, sharing: { ...sharing, requestPolicy: { memory: policy } } }],
});

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
    name: 'partitions without counters',
    config: { dra: [{ ...parted, partitions: { counters: {}, even: [1] } }] },
    message: /dra\[0\]\.partitions\.counters: needs at least one counter/,
  },
  {
    name: 'partition counter name not a DNS label',
    config: { dra: [{ ...parted, partitions: { counters: { Memory_GB: '40' }, even: [1] } }] },
    message: /dra\[0\]\.partitions\.counters\.Memory_GB: .*must be a DNS label/,
  },
  {
    name: 'partition counter not a quantity',
    config: { dra: [{ ...parted, partitions: { counters: { memory: '40 GB' }, even: [1] } }] },
    message: /dra\[0\]\.partitions\.counters\.memory: must be a quantity/,
  },
  {
    name: 'too many counters in a counter set',
    config: {
      dra: [
        {
          ...parted,
          partitions: {
            counters: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`c${i}`, '4'])),
            even: [1],
          },
        },
      ],
    },
    message: /dra\[0\]\.partitions\.counters: a counter set may have at most 32 counters/,
  },
  {
    name: 'no even split',
    config: { dra: [{ ...parted, partitions: { counters: { memory: '40Gi' }, even: [] } }] },
    message: /dra\[0\]\.partitions\.even:/,
  },
  {
    name: 'even split zero',
    config: { dra: [{ ...parted, partitions: { counters: { memory: '40Gi' }, even: [0] } }] },
    message: /dra\[0\]\.partitions\.even\[0\]:/,
  },
  {
    name: 'even split twice',
    config: { dra: [{ ...parted, partitions: { counters: { memory: '40Gi' }, even: [2, 4, 2] } }] },
    message: /dra\[0\]\.partitions\.even\[2\]: duplicates the split 2/,
  },
  {
    name: 'even split leaving a partition nothing',
    config: { dra: [{ ...parted, partitions: { counters: { cores: '3' }, even: [1, 4] } }] },
    message: /dra\[0\]\.partitions\.counters\.cores: 3 split 4 ways leaves a partition 0/,
  },
  {
    name: 'more counter sets than a slice takes',
    config: { dra: [{ ...parted, simulated: { count: 9 } }] },
    message: /dra\[0\]\.partitions: a counter set per device: the API server takes at most 8 in a slice/,
  },
  {
    name: 'unknown partitions key',
    config: { dra: [{ ...parted, partitions: { ...parted.partitions, split: [2] } }] },
    message: /dra\[0\]\.partitions: unknown key "split"/,
  },
  {
    name: 'requestPolicy without allowMultipleAllocations',
    config: shared({ default: '10Gi' }, {}),
    message: /dra\[0\]\.sharing\.requestPolicy\.memory: allowMultipleAllocations must be true/,
  },
  {
    name: 'requestPolicy for a capacity the device does not have',
    config: {
      dra: [
        { ...dra, sharing: { allowMultipleAllocations: true, requestPolicy: { cores: { default: '1' } } } },
      ],
    },
    message: /dra\[0\]\.sharing\.requestPolicy\.cores: names no capacity; add "cores" under capacity/,
  },
  {
    name: 'requestPolicy quantity that does not parse',
    config: shared({ default: '10 GB' }),
    message: /dra\[0\]\.sharing\.requestPolicy\.memory\.default: must be a quantity/,
  },
  {
    name: 'both validRange and validValues',
    config: shared({ default: '10Gi', validRange: { min: '10Gi' }, validValues: ['10Gi'] }),
    message: /requestPolicy\.memory: exactly one policy can be specified/,
  },
  {
    name: 'validRange without a default',
    config: shared({ validRange: { min: '10Gi' } }),
    message: /requestPolicy\.memory\.default: required when validRange is defined/,
  },
  {
    name: 'validRange without min',
    config: shared({ default: '10Gi', validRange: { max: '20Gi' } }),
    message: /requestPolicy\.memory\.validRange\.min:/,
  },
  {
    name: 'validRange min above the capacity',
    config: shared({ default: '50Gi', validRange: { min: '50Gi' } }),
    message: /requestPolicy\.memory\.validRange\.min: min is larger than capacity value: 40Gi/,
  },
  {
    name: 'default below min',
    config: shared({ default: '5Gi', validRange: { min: '10Gi' } }),
    message: /requestPolicy\.memory\.default: default is less than min: 10Gi/,
  },
  {
    name: 'min above max',
    config: shared({ default: '20Gi', validRange: { min: '20Gi', max: '10Gi' } }),
    message: /requestPolicy\.memory\.validRange\.max: min is larger than max: 10Gi/,
  },
  {
    name: 'max above the capacity',
    config: shared({ default: '10Gi', validRange: { min: '10Gi', max: '80Gi' } }),
    message: /requestPolicy\.memory\.validRange\.max: max is larger than capacity value: 40Gi/,
  },
  {
    name: 'default above max',
    config: shared({ default: '30Gi', validRange: { min: '10Gi', max: '20Gi' } }),
    message: /requestPolicy\.memory\.default: default is more than max: 20Gi/,
  },
  {
    name: 'step zero',
    config: shared({ default: '10Gi', validRange: { min: '10Gi', step: '0' } }),
    message: /requestPolicy\.memory\.validRange\.step: must be greater than zero/,
  },
  {
    name: 'one step past the capacity',
    config: shared({ default: '10Gi', validRange: { min: '10Gi', step: '40Gi' } }),
    message: /requestPolicy\.memory\.validRange\.step: one step from min is larger than capacity value: 40Gi/,
  },
  {
    name: 'default off the step',
    config: shared({ default: '15Gi', validRange: { min: '10Gi', step: '10Gi' } }),
    message: /requestPolicy\.memory\.default: 15Gi is not a multiple of the step 10Gi from min 10Gi/,
  },
  {
    name: 'max off the step',
    config: shared({ default: '10Gi', validRange: { min: '10Gi', max: '35Gi', step: '10Gi' } }),
    message: /requestPolicy\.memory\.validRange\.max: 35Gi is not a multiple of the step/,
  },
  {
    name: 'validValues without a default',
    config: shared({ validValues: ['10Gi'] }),
    message: /requestPolicy\.memory\.default: required when validValues is defined/,
  },
  {
    name: 'validValues not sorted',
    config: shared({ default: '10Gi', validValues: ['20Gi', '10Gi'] }),
    message: /requestPolicy\.memory\.validValues\[1\]: values must be sorted in ascending order/,
  },
  {
    name: 'validValues twice the same',
    config: shared({ default: '10Gi', validValues: ['10Gi', '10240Mi'] }),
    message: /requestPolicy\.memory\.validValues\[1\]: duplicates 10240Mi/,
  },
  {
    name: 'validValues above the capacity',
    config: shared({ default: '10Gi', validValues: ['10Gi', '50Gi'] }),
    message: /requestPolicy\.memory\.validValues\[1\]: option is larger than capacity value: 40Gi/,
  },
  {
    name: 'more validValues than the API takes',
    config: shared({ default: '1Gi', validValues: Array.from({ length: 11 }, (_, i) => `${i + 1}Gi`) }),
    message: /requestPolicy\.memory\.validValues:/,
  },
  {
    name: 'default not among validValues',
    config: shared({ default: '15Gi', validValues: ['10Gi', '20Gi'] }),
    message: /requestPolicy\.memory\.default: 15Gi is not one of validValues/,
  },
  {
    name: 'lone default above the capacity',
    config: shared({ default: '50Gi' }),
    message: /requestPolicy\.memory\.default: default is larger than capacity value: 40Gi/,
  },
  {
    name: 'unknown requestPolicy key',
    config: shared({ default: '10Gi', range: {} }),
    message: /requestPolicy\.memory: unknown key "range"/,
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

  it('takes partitions and sharing of DRA drivers', () => {
    const config = parsePluginConfig({
      dra: [
        parted,
        {
          ...dra,
          driver: 'share.example.com',
          capacity: { memory: '40Gi', cores: '8' },
          sharing: {
            allowMultipleAllocations: true,
            requestPolicy: {
              memory: { default: '10Gi', validRange: { min: '10Gi', max: '40Gi', step: '10Gi' } },
              cores: { default: '2', validValues: ['1', '2', '4', '8'] },
            },
          },
        },
        // replicas > 1 publishes allowMultipleAllocations itself; a fractional step uses thousandths.
        {
          ...dra,
          driver: 'rep.example.com',
          replicas: 4,
          capacity: { bw: '1' },
          sharing: { requestPolicy: { bw: { default: '250m', validRange: { min: '250m', step: '250m' } } } },
        },
      ],
    });
    const [p, s, r] = config.dra;
    assert.deepEqual(p?.partitions, { counters: { memory: '40Gi' }, even: [1, 2, 4] });
    assert.deepEqual(
      [s?.sharing?.allowMultipleAllocations, Object.keys(s?.sharing?.requestPolicy ?? {})],
      [true, ['memory', 'cores']],
    );
    assert.deepEqual(
      [r?.sharing?.allowMultipleAllocations, r?.sharing?.requestPolicy.bw?.default],
      [false, '250m'],
    );
    assert.equal(parsePluginConfig({ dra: [dra] }).dra[0]?.sharing, undefined);
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

    it('examples/dra-partitions.yaml is valid: a partitioned driver and a shared one', async () => {
      const file = new URL('../../../examples/dra-partitions.yaml', import.meta.url).pathname;
      const [parts, share] = parsePluginConfig(await readFile(file, 'utf8'), file).dra;
      assert.deepEqual(parts?.partitions, { counters: { memory: '40Gi' }, even: [1, 2, 4] });
      assert.deepEqual(share?.sharing?.requestPolicy.memory, {
        default: '10Gi',
        validRange: { min: '10Gi', step: '10Gi' },
      });
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
