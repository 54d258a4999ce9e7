import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { marshalYaml } from './go-yaml.js';

/** `[value, what yaml.v3 wrote for it]`, from the Go code itself (see the fixtures' README). */
const golden = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/openapi-v2/yaml.json', import.meta.url), 'utf8'),
) as [unknown, string][];

describe('marshalYaml: the YAML text gnostic keeps in an Any', () => {
  it('writes what yaml.v3 writes, for every golden value', () => {
    assert.ok(golden.length > 90);
    for (const [value, yaml] of golden) assert.equal(marshalYaml(value), yaml, JSON.stringify(value));
  });

  it('writes the vendor extensions Kubernetes schemas carry in block style', () => {
    assert.equal(
      marshalYaml([{ group: '', kind: 'Pod', version: 'v1' }]),
      '- group: ""\n  kind: Pod\n  version: v1\n',
    );
    assert.equal(marshalYaml(['containerPort', 'protocol']), '- containerPort\n- protocol\n');
    assert.equal(marshalYaml('merge,retainKeys'), 'merge,retainKeys\n');
    assert.equal(marshalYaml({ a: { b: ['c'] } }), 'a:\n    b:\n        - c\n');
  });

  it('quotes strings that would read back as something else', () => {
    assert.equal(marshalYaml('true'), '"true"\n');
    assert.equal(marshalYaml('1'), '"1"\n');
    assert.equal(marshalYaml(''), '""\n');
    assert.equal(marshalYaml('a: b'), "'a: b'\n");
    assert.equal(marshalYaml(true), 'true\n');
    assert.equal(marshalYaml(1), '1\n');
  });

  it('refuses what is not a JSON value', () => {
    assert.throws(() => marshalYaml(undefined), /not a JSON value/);
    assert.throws(() => marshalYaml(Number.NaN), /not a JSON value/);
  });
});
