// CEL device selectors, table-driven: the cases of k8s.io/dynamic-resource-allocation/cel/
// compile_test.go that apply to the stored-expressions environment, plus the Kubernetes quantity and
// semver extensions, attribute typing and the base environment's extensions.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DeviceAttribute, DeviceCapacity } from '../../types.js';
import {
  compileSelector,
  evaluateSelector,
  SelectorCache,
  validateSelector,
  type CelDevice,
} from './compile.js';
import { enhanceRuntimeError } from './errors.js';

const DRIVER = 'dra.example.com';

function device(
  attributes: Record<string, DeviceAttribute> = {},
  capacity: Record<string, DeviceCapacity> = {},
  extra: Partial<CelDevice> = {},
): CelDevice {
  return { driver: DRIVER, attributes, capacity, ...extra };
}

interface Case {
  name: string;
  expression: string;
  device?: CelDevice;
  match?: boolean;
  /** A substring of the runtime error. */
  matchError?: string;
  /** A substring of the compile error. */
  compileError?: string;
}

const cases: Case[] = [
  { name: 'true', expression: 'true', match: true },
  { name: 'false', expression: 'false', match: false },
  { name: 'syntax error', expression: '?!', compileError: 'compilation failed: ERROR: <input>:1:1:' },
  { name: 'not bool', expression: '1', compileError: 'must evaluate to bool or the unknown type, not int' },
  {
    name: 'list result type',
    expression: '[1]',
    compileError: 'must evaluate to bool or the unknown type, not list(int)',
  },
  { name: 'undeclared variable', expression: 'foo == 1', compileError: 'foo' },
  {
    name: 'unknown device field',
    expression: 'device.foo == 1',
    compileError: 'compilation failed: ERROR: <input>:1:8:',
  },
  {
    name: 'missing attribute in an unknown domain',
    expression: `device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))`,
    matchError: 'no such key: noSuchAttr',
  },
  {
    name: 'missing attribute by index',
    expression: `device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))`,
    matchError: 'no such key: noSuchAttr',
  },
  {
    name: 'a known domain is in the attributes',
    expression: `"dra.example.com" in device.attributes`,
    device: device({ name: { string: 'x' } }),
    match: true,
  },
  {
    // Known difference (see compile.ts): upstream answers false, the lookup default makes it true here.
    name: 'an unknown domain reads as present (upstream: absent)',
    expression: `"no-such-domain" in device.attributes`,
    match: true,
  },
  {
    name: 'an unknown domain is an empty map',
    expression: `device.attributes["x.y"].size() == 0`,
    match: true,
  },
  { name: 'driver (empty)', expression: 'device.driver == ""', device: { driver: '' }, match: true },
  { name: 'driver', expression: `device.driver == "dra.example.com"`, match: true },
  {
    name: 'bool attribute in the driver domain',
    expression: `device.attributes["dra.example.com"].name`,
    device: device({ name: { bool: true } }),
    match: true,
  },
  {
    name: 'attribute by index',
    expression: `device.attributes["dra.example.com"]["name"]`,
    device: device({ name: { bool: true } }),
    match: true,
  },
  {
    name: 'cel.bind',
    expression: `cel.bind(dra, device.attributes["dra.example.com"], dra.name)`,
    device: device({ name: { bool: true } }),
    match: true,
  },
  {
    name: 'attribute in another domain',
    expression: `device.attributes["other.example.com"].name`,
    device: device({ 'other.example.com/name': { bool: true } }),
    match: true,
  },
  {
    name: 'int attribute is an int',
    expression: `device.attributes["dra.example.com"].name > 0`,
    device: device({ name: { int: 1 } }),
    match: true,
  },
  {
    name: 'int attribute compares with a double',
    expression: `device.attributes["dra.example.com"].name > 0.5`,
    device: device({ name: { int: 1 } }),
    match: true,
  },
  {
    name: 'string attribute',
    expression: `device.attributes["dra.example.com"].name == "fish"`,
    device: device({ name: { string: 'fish' } }),
    match: true,
  },
  {
    name: 'string attribute against an int is simply unequal',
    expression: `device.attributes["dra.example.com"].name == 1`,
    device: device({ name: { string: 'fish' } }),
    match: false,
  },
  {
    name: 'version attribute is a semver',
    expression: `device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))`,
    device: device({ name: { version: '1.0.0' } }),
    match: true,
  },
  {
    name: 'version attribute with normalize',
    expression: `device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)`,
    device: device({ name: { version: '1.0.0' } }),
    match: true,
  },
  {
    name: 'a bad version attribute is an error',
    expression: 'true',
    device: device({ name: { version: '1.0' } }),
    matchError: 'attribute name: parse semantic version: No Major.Minor.Patch elements found',
  },
  {
    name: 'list result is not a bool',
    expression: `device.attributes["dra.example.com"].names`,
    device: device({ names: { strings: ['a', 'b'] } }),
    matchError: 'CEL result of type list could not be converted to bool',
  },
  {
    name: 'list attribute size',
    expression: `device.attributes["dra.example.com"].names.size() == 2`,
    device: device({ names: { ints: [1, 2] } }),
    match: true,
  },
  {
    name: 'list attribute exists',
    expression: `device.attributes["dra.example.com"].names.exists(x, x > 0)`,
    device: device({ names: { ints: [1, 2] } }),
    match: true,
  },
  {
    name: 'version list all',
    expression: `device.attributes["dra.example.com"].names.all(x, x.isGreaterThan(semver("0.0.1")))`,
    device: device({ names: { versions: ['1.0.0', '2.0.0'] } }),
    match: true,
  },
  {
    name: 'in on a list attribute',
    expression: `1 in device.attributes["dra.example.com"].names`,
    device: device({ names: { ints: [1, 2] } }),
    match: true,
  },
  {
    name: 'includes on a scalar',
    expression: `device.attributes["dra.example.com"].name.includes("fish")`,
    device: device({ name: { string: 'fish' } }),
    match: true,
  },
  {
    name: 'includes on a list',
    expression: `device.attributes["dra.example.com"].name.includes(semver("2.0.0"))`,
    device: device({ name: { versions: ['1.0.0', '2.0.0'] } }),
    match: true,
  },
  {
    name: 'includes: missing value',
    expression: `device.attributes["dra.example.com"].name.includes(3)`,
    device: device({ name: { ints: [1, 2] } }),
    match: false,
  },
  {
    name: 'includes: too long a list',
    expression: `device.attributes["dra.example.com"].name.includes("x")`,
    device: device({ name: { strings: Array.from({ length: 49 }, (_, i) => `v${i}`) } }),
    matchError: "'includes' function cannot be applied to lists longer than 48 values",
  },
  {
    name: 'capacity is a quantity',
    expression: `device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))`,
    device: device({}, { name: { value: '1Mi' } }),
    match: true,
  },
  {
    name: 'capacity guarded with in',
    expression: `!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))`,
    match: true,
  },
  {
    name: 'capacity compareTo',
    expression: `device.capacity["dra.example.com"].memory.compareTo(quantity("40Gi")) >= 0`,
    device: device({}, { memory: { value: '80Gi' } }),
    match: true,
  },
  {
    name: 'capacity equality is by value',
    expression: `device.capacity["dra.example.com"].memory == quantity("1024Mi")`,
    device: device({}, { memory: { value: '1Gi' } }),
    match: true,
  },
  {
    name: 'exists_one over domains',
    expression: `device.attributes.exists_one(x, x == "dra.example.com")`,
    device: device({ name: { bool: true } }),
    match: true,
  },
  {
    name: 'has() on an attribute',
    expression: `has(device.attributes["dra.example.com"].model) && device.attributes["dra.example.com"].model == "a100"`,
    device: device({ model: { string: 'a100' } }),
    match: true,
  },
  {
    name: 'has() on a missing attribute',
    expression: `has(device.attributes["dra.example.com"].model)`,
    match: false,
  },
  {
    name: 'optional chaining',
    expression: `device.attributes["dra.example.com"].?model.orValue("none") == "none"`,
    match: true,
  },
  {
    name: 'short circuit absorbs the error',
    expression: `device.attributes["dra.example.com"].missing == 1 || true`,
    match: true,
  },
  {
    name: 'allowMultipleAllocations',
    expression: 'device.allowMultipleAllocations',
    device: { driver: DRIVER, allowMultipleAllocations: true },
    match: true,
  },
  {
    name: 'the standard NUMA attribute',
    expression: `device.attributes["resource.kubernetes.io"].numaNode == 1`,
    device: device({ 'resource.kubernetes.io/numaNode': { int: 1 } }),
    match: true,
  },
];

const quantityCases: [string, boolean | string][] = [
  ['quantity("200M") == quantity("0.2G")', true],
  ['quantity("50M").isLessThan(quantity("50Mi"))', true],
  ['quantity("150Mi").isGreaterThan(quantity("100Mi"))', true],
  ['quantity("50Mi").compareTo(quantity("50M")) == 1', true],
  ['quantity("50k").add(quantity("20")) == quantity("50.02k")', true],
  ['quantity("50k").add(20) == quantity("50020")', true],
  ['quantity("50k").sub(20000) == quantity("30k")', true],
  ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() == 20', true],
  ['quantity("50k").asInteger() == 50000', true],
  ['quantity("9999999999999999999999999999999999999G").isInteger()', false],
  ['quantity("1000m").isInteger()', false],
  ['quantity("50.703k").asApproximateFloat() == 50703.0', true],
  ['isQuantity("1.3Gi") && isQuantity("10000k") && !isQuantity("1,3G") && !isQuantity("200K")', true],
  ['sign(quantity("-5")) == -1 && sign(quantity("0")) == 0', true],
  ['quantity("9999999999999999999999999999999999999G").asInteger() == 0', 'cannot convert value to integer'],
  ['quantity("10Mo") == quantity("1")', 'quantities must match the regular expression'],
  ['quantity("10Mm") == quantity("1")', "unable to parse quantity's suffix"],
];

const semverCases: [string, boolean | string][] = [
  ['semver("1.2.3").compareTo(semver("1.2.3")) == 0', true],
  ['semver("1.2.3").compareTo(semver("2.0.0")) == -1', true],
  ['semver("1.2.3").isGreaterThan(semver("0.1.2"))', true],
  ['semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', true],
  ['semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3', true],
  ['semver("01.01.01", true) == semver("1.1.1")', true],
  ['isSemver("1.0.0") && !isSemver("hello") && !isSemver("v1.0") && isSemver("v1.0", true)', true],
  ['semver("200K") == semver("1.0.0")', 'No Major.Minor.Patch elements found'],
];

const extensionCases: [string, boolean | string][] = [
  ['"abc".charAt(1) == "b"', true],
  ['"a-b-c".replace("-", "+") == "a+b+c" && "a-b-c".replace("-", "+", 1) == "a+b-c"', true],
  ['strings.quote("a\\"b") == "\\"a\\\\\\"b\\""', true],
  ['"a,b".split(",") == ["a", "b"] && ["a", "b"].join("-") == "a-b"', true],
  ['"GPU".lowerAscii() == "gpu" && " x ".trim() == "x" && "hello".indexOf("l") == 2', true],
  ['[1, 2, 3].isSorted() && ![2, 1].isSorted()', true],
  ['[1, 3].sum() == 4 && [1, 3].min() == 1 && [1, 3].max() == 3', true],
  ['[1, 2, 2, 3].indexOf(2) == 1 && [1, 2, 2, 3].lastIndexOf(2) == 2', true],
  ['[].min() == 0', 'min called on empty list'],
  ['[3, 1, 2].sort() == [1, 2, 3] && [1, 1, 2].distinct() == [1, 2] && [1, 2].reverse() == [2, 1]', true],
  ['[[1], [2, 3]].flatten() == [1, 2, 3] && [1, 2, 3].slice(1, 2) == [2]', true],
  ['[1, 2].first().orValue(0) == 1 && [].last().hasValue() == false && lists.range(3) == [0, 1, 2]', true],
  ['sets.contains([1, 2], [2]) && sets.equivalent([1, 2], [2, 1]) && sets.intersects([1], [1, 3])', true],
  ['"gpu-12".find("[0-9]+") == "12" && "a1b22".findAll("[0-9]+") == ["1", "22"]', true],
  ['"a".matches("^a$") && "dra.example.com".endsWith(".com")', true],
];

function check(c: Case): void {
  const result = evaluateSelector(c.expression, c.device ?? device());
  if (c.compileError !== undefined) {
    const compiled = compileSelector(c.expression);
    assert.equal(compiled.ok, false, 'expected a compile error');
    if (!compiled.ok) assert.ok(compiled.error.detail.includes(c.compileError), compiled.error.detail);
    return;
  }
  if (c.matchError !== undefined) {
    assert.equal(result.ok, false, `expected a runtime error, got ${JSON.stringify(result)}`);
    if (!result.ok) assert.ok(result.error.includes(c.matchError), result.error);
    return;
  }
  assert.deepEqual(result, { ok: true, matches: c.match });
}

const table = (rows: [string, boolean | string][]): Case[] =>
  rows.map(([expression, want]) =>
    typeof want === 'boolean'
      ? { name: expression, expression, match: want }
      : { name: expression, expression, matchError: want },
  );

describe('CEL device selectors', () => {
  for (const c of cases) test(c.name, () => check(c));
});
describe('Kubernetes quantity extension', () => {
  for (const c of table(quantityCases)) test(c.name, () => check(c));
});
describe('Kubernetes semver extension', () => {
  for (const c of table(semverCases)) test(c.name, () => check(c));
});
describe('base environment extensions', () => {
  for (const c of table(extensionCases)) test(c.name, () => check(c));
});

describe('compile errors and validation', () => {
  test('sign() is a global function, as upstream declares it', () => {
    assert.equal(compileSelector('sign(quantity("1")) == 1').ok, true);
    assert.equal(compileSelector('quantity("1").sign() == 1').ok, false);
  });
  test('compile errors carry cel-go frames', () => {
    const compiled = compileSelector('device.attributes["x"].y == 1 &&');
    assert.equal(compiled.ok, false);
    if (!compiled.ok) {
      assert.equal(compiled.error.type, 'Invalid');
      assert.match(
        compiled.error.detail,
        /^compilation failed: ERROR: <input>:1:\d+: .*\n \| device\.attributes\["x"\]\.y == 1 &&\n \| \.+\^$/,
      );
    }
  });
  test('validateSelector reports field errors in the API server wording', () => {
    assert.deepEqual(validateSelector('device.driver == "x"', 'spec.selectors[0].cel'), []);
    assert.deepEqual(validateSelector('1', 'spec.selectors[0].cel'), [
      'spec.selectors[0].cel.expression: Invalid value: "1": must evaluate to bool or the unknown type, not int',
    ]);
    assert.deepEqual(validateSelector('x'.repeat(10 * 1024 + 1), 'spec.selectors[0].cel'), [
      'spec.selectors[0].cel.expression: Too long: may not be more than 10240 bytes',
    ]);
  });
  test('EnhanceRuntimeError adds the optional-field hint once', () => {
    const once = enhanceRuntimeError('no such key: model');
    assert.equal(
      once,
      'no such key: model. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields',
    );
    assert.equal(enhanceRuntimeError(once), once);
    assert.equal(enhanceRuntimeError('division by zero'), 'division by zero');
  });
  test('the cache keeps successful compilations only', () => {
    const cache = new SelectorCache(2);
    const first = cache.getOrCompile('true');
    assert.equal(
      first.ok &&
        cache.getOrCompile('true').ok &&
        first.selector === (cache.getOrCompile('true') as typeof first).selector,
      true,
    );
    assert.equal(cache.getOrCompile('1').ok, false);
  });
});
