import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyLiveMessage, type LiveDocument } from './live-document';

type Doc = { a: number; b: { c: number } };
const snap = (seq: number, a = 1) => ({ type: 'snapshot' as const, seq, node: { a, b: { c: 0 } } });
const patch = (seq: number, value: number) => ({
  type: 'patch' as const,
  seq,
  ops: [{ op: 'replace' as const, path: '/a', value }],
});

function applied(r: ReturnType<typeof applyLiveMessage<Doc>>): LiveDocument<Doc> {
  assert.equal(r.kind, 'applied');
  return (r as { doc: LiveDocument<Doc> }).doc;
}

describe('applyLiveMessage (seq guard)', () => {
  it('takes a snapshot, then applies patches strictly in order', () => {
    let doc = applied(applyLiveMessage<Doc>(undefined, snap(10), 1));
    assert.equal(doc.seq, 10);
    doc = applied(applyLiveMessage(doc, patch(11, 5), 2));
    assert.equal(doc.data.a, 5);
    assert.equal(doc.seq, 11);
    assert.equal(doc.receivedAt, 2);
  });

  it('ignores duplicates and older messages', () => {
    const doc = applied(applyLiveMessage<Doc>(undefined, snap(10)));
    const d2 = applied(applyLiveMessage(doc, patch(11, 5)));
    assert.deepEqual(applyLiveMessage(d2, patch(11, 6)), { kind: 'ignored' });
    assert.deepEqual(applyLiveMessage(d2, patch(3, 6)), { kind: 'ignored' });
    assert.deepEqual(applyLiveMessage(d2, snap(9)), { kind: 'ignored' });
  });

  it('asks for a resync on a gap, a patch before any snapshot, or a patch that does not apply', () => {
    const doc = applied(applyLiveMessage<Doc>(undefined, snap(10)));
    assert.equal(applyLiveMessage(doc, patch(12, 5)).kind, 'resync');
    assert.equal(applyLiveMessage<Doc>(undefined, patch(1, 5)).kind, 'resync');
    assert.equal(
      applyLiveMessage<Doc>({ seq: null, data: doc.data, receivedAt: 0 }, patch(11, 5)).kind,
      'resync',
    );
    const bad = { type: 'patch' as const, seq: 11, ops: [{ op: 'remove' as const, path: '/missing' }] };
    const r = applyLiveMessage(doc, bad);
    assert.equal(r.kind, 'resync');
    assert.match((r as { reason: string }).reason, /does not apply/);
  });

  it('a later snapshot replaces the document whatever came before (resync path)', () => {
    const doc = applied(applyLiveMessage<Doc>(undefined, snap(10, 1)));
    const d2 = applied(applyLiveMessage(doc, snap(50, 7)));
    assert.equal(d2.seq, 50);
    assert.equal(d2.data.a, 7);
  });

  it('heartbeats refresh liveness, and a heartbeat ahead of us reveals a lost patch', () => {
    const doc = applied(applyLiveMessage<Doc>(undefined, snap(10), 1));
    const hb = applied(applyLiveMessage(doc, { type: 'heartbeat', seq: 10, at: 'x' }, 99));
    assert.equal(hb.receivedAt, 99);
    assert.equal(hb.data, doc.data, 'heartbeat keeps the data identity');
    assert.equal(applyLiveMessage(doc, { type: 'heartbeat', seq: 11, at: 'x' }).kind, 'resync');
  });

  it('passes server errors through', () => {
    const r = applyLiveMessage<Doc>(undefined, {
      type: 'error',
      status: 502,
      title: 'Gateway unreachable',
      detail: 'ECONNREFUSED',
    });
    assert.deepEqual(r, { kind: 'error', status: 502, title: 'Gateway unreachable', detail: 'ECONNREFUSED' });
  });
});
