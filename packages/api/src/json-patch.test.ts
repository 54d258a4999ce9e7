import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { applyPatchImmutable, PatchError, pointerToken, type JsonPatchOp } from './json-patch.ts';

const base = () => ({
  devices: { 'r/a': { id: 'a', health: 'Healthy' }, 'r/b': { id: 'b', health: 'Healthy' } },
  list: [1, 2, 3],
  nested: { deep: { x: 1 } },
});

describe('applyPatchImmutable', () => {
  it('replaces one device and keeps every other object identical (structural sharing)', () => {
    const doc = base();
    const next = applyPatchImmutable(doc, [
      { op: 'replace', path: '/devices/r~1a/health', value: 'Unhealthy' },
    ]);
    assert.equal(next.devices['r/a'].health, 'Unhealthy');
    assert.notEqual(next, doc);
    assert.notEqual(next.devices, doc.devices);
    assert.notEqual(next.devices['r/a'], doc.devices['r/a']);
    assert.equal(next.devices['r/b'], doc.devices['r/b']);
    assert.equal(next.list, doc.list);
    assert.equal(next.nested, doc.nested);
    assert.equal(doc.devices['r/a'].health, 'Healthy', 'input is never mutated');
  });

  it('supports add, remove, move, copy, test and array insertion', () => {
    const doc = base();
    const next = applyPatchImmutable(doc, [
      { op: 'add', path: '/list/-', value: 4 },
      { op: 'add', path: '/list/0', value: 0 },
      { op: 'remove', path: '/devices/r~1b' },
      { op: 'copy', from: '/nested/deep', path: '/copy' },
      { op: 'move', from: '/nested/deep/x', path: '/moved' },
      { op: 'test', path: '/moved', value: 1 },
    ]);
    assert.deepEqual(next.list, [0, 1, 2, 3, 4]);
    assert.equal('r/b' in next.devices, false);
    assert.deepEqual((next as unknown as { copy: unknown }).copy, { x: 1 });
    assert.equal((next as unknown as { moved: number }).moved, 1);
    assert.deepEqual(next.nested.deep, {});
    assert.deepEqual(doc, base());
  });

  it('throws PatchError on a missing path, a failed test or a bad index, and leaves the input intact', () => {
    const doc = base();
    const bad: JsonPatchOp[][] = [
      [{ op: 'replace', path: '/devices/missing/health', value: 1 }],
      [{ op: 'remove', path: '/nope' }],
      [{ op: 'test', path: '/list/0', value: 9 }],
      [{ op: 'add', path: '/list/7', value: 9 }],
      [{ op: 'replace', path: 'no-slash', value: 9 }],
    ];
    for (const ops of bad)
      assert.throws(() => applyPatchImmutable(doc, ops), PatchError, JSON.stringify(ops));
    assert.deepEqual(doc, base());
  });

  it('escapes pointer tokens per RFC 6901', () => {
    assert.equal(pointerToken('a/b~c'), 'a~1b~0c');
    const empty: { m: Record<string, number> } = { m: {} };
    const next = applyPatchImmutable(empty, [{ op: 'add', path: `/m/${pointerToken('x/~y')}`, value: 1 }]);
    assert.deepEqual(next.m, { 'x/~y': 1 });
  });

  it('agrees with fast-json-patch on random replace/add/remove sequences', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd/e', 'f~g');
    const op = fc.oneof(
      fc.record({ op: fc.constant('add' as const), k: key, v: fc.integer() }),
      fc.record({ op: fc.constant('replace' as const), k: key, v: fc.integer() }),
      fc.record({ op: fc.constant('remove' as const), k: key }),
    );
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.integer(), { noNullPrototype: true }),
        fc.array(op, { maxLength: 12 }),
        (start, raw) => {
          // Build a valid op list against a running model (fast-json-patch is the oracle).
          const model = structuredClone<Record<string, number>>(start);
          const ops: JsonPatchOp[] = [];
          for (const o of raw) {
            const path = `/m/${pointerToken(o.k)}`;
            if (o.op === 'add') {
              ops.push({ op: 'add', path, value: o.v });
              model[o.k] = o.v;
            } else if (o.k in model) {
              ops.push(o.op === 'replace' ? { op: 'replace', path, value: o.v } : { op: 'remove', path });
              if (o.op === 'replace') model[o.k] = o.v;
              else delete model[o.k];
            }
          }
          const doc = { m: start, other: { keep: true } };
          const ours = applyPatchImmutable(doc, ops);
          const theirs = jsonpatch.applyPatch(
            structuredClone(doc),
            ops as Operation[],
            true,
            false,
          ).newDocument;
          assert.deepEqual(ours, theirs);
          assert.equal(ours.other, doc.other);
        },
      ),
      { numRuns: 200 },
    );
  });
});
