// values.schema.json: every value of values.yaml is declared and described, unknown keys and bad
// types are refused by helm itself with a message naming the value, and the README's values table
// is generated from the schema (never edited by hand).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { at, chartDir, isObject, repoRoot, template } from './helm.js';

interface SchemaNode {
  $ref?: string;
  description?: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  definitions?: Record<string, SchemaNode>;
}

const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as SchemaNode;
const values: unknown = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));

function resolveRef(node: SchemaNode): SchemaNode {
  if (!node.$ref) return node;
  const target = schema.definitions?.[node.$ref.replace('#/definitions/', '')];
  assert.ok(target, `unknown $ref ${node.$ref}`);
  return { ...target, description: node.description ?? target.description };
}

const isClosed = (node: SchemaNode | undefined): boolean =>
  node?.additionalProperties === false && !!node.properties;

/**
 * Every key path of values.yaml, paired with the schema node that declares it (or undefined).
 * Descends into closed objects only; the entries of maps and free-form objects are one value.
 */
function declaredPaths(): { path: string; node: SchemaNode | undefined }[] {
  const out: { path: string; node: SchemaNode | undefined }[] = [];
  const walk = (node: SchemaNode, value: unknown, path: string[]) => {
    if (!isObject(value) || !node.properties) return;
    for (const [key, child] of Object.entries(value)) {
      const declared = node.properties[key];
      out.push({ path: [...path, key].join('.'), node: declared && resolveRef(declared) });
      if (declared && isClosed(resolveRef(declared))) walk(resolveRef(declared), child, [...path, key]);
    }
  };
  walk(schema, values, []);
  return out;
}

describe('values.schema.json covers values.yaml', () => {
  it('declares every key of values.yaml, each with a description where it is a documented value', () => {
    const paths = declaredPaths();
    assert.ok(paths.length > 80, `walked ${paths.length} values`);
    for (const { path, node } of paths) {
      assert.ok(node, `${path} is declared in values.schema.json`);
      assert.ok(node.description, `${path} has a description`);
    }
  });

  it('closes every object it declares: unknown keys are errors, except free-form maps', () => {
    const freeForm = new Set(['global', 'config.gateway', 'gateway.affinity', 'web.affinity']);
    const walk = (node: SchemaNode, path: string) => {
      const resolved = resolveRef(node);
      if (resolved.type !== 'object' || freeForm.has(path)) return;
      if (isClosed(resolved)) {
        for (const [key, child] of Object.entries(resolved.properties ?? {}))
          walk(child, path ? `${path}.${key}` : key);
      } else {
        assert.ok(
          isObject(resolved.additionalProperties),
          `${path} rejects unknown keys or constrains its entries`,
        );
      }
    };
    walk(schema, '');
  });

  it('lets the default values through (helm lint would fail otherwise) and keeps faults off', () => {
    assert.equal(at(values, 'faults', 'enabled'), false);
    assert.equal(template({}).status, 0);
  });

  it('defaults to an observer: no resource and no DRA driver of its own, `resources: []` accepted', () => {
    assert.deepEqual(at(values, 'config', 'resources'), []);
    assert.deepEqual(at(values, 'config', 'dra'), []);
    for (const config of [
      { resources: [] },
      { resources: [], dra: [] },
      { resources: [], dra: [{ driver: 'gpu.example.com', simulated: { count: 1 } }] },
      // examples/dra-partitions.yaml's two drivers.
      {
        dra: [
          {
            driver: 'part.plugboard.example',
            simulated: { count: 2 },
            partitions: { counters: { memory: '40Gi' }, even: [1, 2, 4] },
          },
          {
            driver: 'share.plugboard.example',
            simulated: { count: 1 },
            capacity: { memory: '40Gi' },
            sharing: {
              allowMultipleAllocations: true,
              requestPolicy: { memory: { default: '10Gi', validRange: { min: '10Gi', step: '10Gi' } } },
            },
          },
        ],
      },
    ]) {
      const res = template({ values: { config } });
      assert.equal(res.status, 0, `${JSON.stringify(config)}: ${res.stderr}`);
    }
  });

  it('keeps DeviceTaintRule drills off by default', () => {
    assert.equal(at(values, 'gateway', 'rbac', 'deviceTaintRules'), false);
  });
});

describe('bad values fail with a readable message naming the value', () => {
  const cases: [string, Record<string, unknown>, RegExp[]][] = [
    [
      'faults.enabled: "yes"',
      { faults: { enabled: 'yes' } },
      [/at '\/faults\/enabled': got string, want boolean/],
    ],
    [
      'auth.mode: basic',
      { auth: { mode: 'basic' } },
      [/at '\/auth\/mode': value must be one of 'token', 'kubernetes'/],
    ],
    [
      'an unknown key',
      { gateway: { bogus: 1 } },
      [/at '\/gateway'/, /additional properties 'bogus' not allowed/],
    ],
    ['a misspelt top-level key', { fault: { enabled: true } }, [/additional properties 'fault' not allowed/]],
    ['gateway.port: 70000', { gateway: { port: 70000 } }, [/at '\/gateway\/port'/, /maximum/]],
    [
      'a relative host path',
      { gateway: { hostPaths: { devicePlugins: 'var/lib/kubelet/device-plugins' } } },
      [/at '\/gateway\/hostPaths\/devicePlugins'/, /does not match pattern/],
    ],
    [
      'a resource name without a domain',
      { config: { resources: [{ name: 'gpu', simulated: { count: 1 } }] } },
      [/at '\/config\/resources\/0\/name'/, /does not match pattern/],
    ],
    [
      'config.resources not a list',
      { config: { resources: { name: 'plugboard.example/gpu' } } },
      [/at '\/config\/resources'/, /got object, want array/],
    ],
    [
      'gateway.rbac.deviceTaintRules: "yes"',
      { gateway: { rbac: { deviceTaintRules: 'yes' } } },
      [/at '\/gateway\/rbac\/deviceTaintRules': got string, want boolean/],
    ],
    [
      'a DRA driver name that is not a lower-case DNS subdomain',
      { config: { dra: [{ driver: 'GPU_Example', simulated: { count: 1 } }] } },
      [/at '\/config\/dra\/0\/driver'/, /does not match pattern/],
    ],
    [
      'a DRA driver without a name',
      { config: { dra: [{ simulated: { count: 1 } }] } },
      [/at '\/config\/dra\/0'/, /missing property 'driver'/],
    ],
    [
      'a misspelt DRA driver key',
      { config: { dra: [{ driver: 'gpu.example.com', simulated: { count: 1 }, atributes: {} }] } },
      [/at '\/config\/dra\/0'/, /additional properties 'atributes' not allowed/],
    ],
    [
      'a DRA driver without a device source',
      { config: { dra: [{ driver: 'gpu.example.com' }] } },
      [/at '\/config\/dra\/0'/, /missing property 'simulated'/, /missing property 'sysfsPci'/],
    ],
    [
      'a DRA driver with two device sources',
      {
        config: {
          dra: [{ driver: 'gpu.example.com', simulated: { count: 1 }, paths: { patterns: ['/dev/x'] } }],
        },
      },
      [/at '\/config\/dra\/0'/, /oneOf/],
    ],
    [
      'DRA partitions with a split of 0',
      {
        config: {
          dra: [
            {
              driver: 'gpu.example.com',
              simulated: { count: 1 },
              partitions: { counters: { memory: '40Gi' }, even: [0] },
            },
          ],
        },
      },
      [/at '\/config\/dra\/0\/partitions\/even\/0'/, /minimum/],
    ],
    [
      'a misspelt DRA sharing key',
      {
        config: {
          dra: [{ driver: 'gpu.example.com', simulated: { count: 1 }, sharing: { allowMultiple: true } }],
        },
      },
      [/at '\/config\/dra\/0\/sharing'/, /additional properties 'allowMultiple' not allowed/],
    ],
    [
      'DRA replicas: 0',
      { config: { dra: [{ driver: 'gpu.example.com', simulated: { count: 1 }, replicas: 0 }] } },
      [/at '\/config\/dra\/0\/replicas'/, /minimum/],
    ],
    [
      'a relative kubelet plugins directory',
      { gateway: { hostPaths: { plugins: 'var/lib/kubelet/plugins' } } },
      [/at '\/gateway\/hostPaths\/plugins'/, /does not match pattern/],
    ],
    [
      'maxUnavailable: 150%',
      { gateway: { updateStrategy: { maxUnavailable: '150%' } } },
      [/at '\/gateway\/updateStrategy\/maxUnavailable'/],
    ],
    [
      'a pull policy that does not exist',
      { web: { image: { pullPolicy: 'Sometimes' } } },
      [/at '\/web\/image\/pullPolicy'/],
    ],
    [
      'a toleration with a bad operator',
      { gateway: { tolerations: [{ key: 'x', operator: 'Is' }] } },
      [/at '\/gateway\/tolerations\/0\/operator'/],
    ],
    [
      'a NetworkPolicy peer with an unknown field',
      { networkPolicy: { metricsFrom: [{ namespaceSelectr: {} }] } },
      [/at '\/networkPolicy\/metricsFrom\/0'/, /namespaceSelectr/],
    ],
    [
      'a memory request that is not a quantity',
      { gateway: { resources: { requests: { memory: '64 MB' } } } },
      [/requests\/memory/],
    ],
    ['a bad image digest', { gateway: { image: { digest: 'latest' } } }, [/at '\/gateway\/image\/digest'/]],
  ];
  for (const [name, bad, expected] of cases) {
    it(name, () => {
      const res = template({ values: bad });
      assert.notEqual(res.status, 0, `${name} must be refused`);
      assert.match(res.stderr, /values don't meet the specifications of the schema/);
      for (const re of expected) assert.match(res.stderr, re);
      assert.ok(res.stderr.length < 2000, `the message stays short:\n${res.stderr}`);
    });
  }
});

describe('chart README', () => {
  it('has a values table generated from the schema and values.yaml', () => {
    const res = spawnSync(process.execPath, [join(repoRoot, 'deploy/scripts/chart-readme.mjs'), '--check'], {
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stderr);
    const readme = readFileSync(join(chartDir, 'README.md'), 'utf8');
    for (const { path, node } of declaredPaths()) {
      if (isClosed(node)) continue; // documented through its children
      assert.ok(readme.includes(`\`${path}`), `README documents ${path}`);
    }
  });
});
