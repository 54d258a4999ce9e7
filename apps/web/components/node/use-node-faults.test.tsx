import { after, afterEach, before, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { notifyManager, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { FaultPhase, NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { FaultDialog } from '../faults/fault-dialog';
import { ActiveFaults } from './active-faults';
import { NumaMap } from './numa-map';
import {
  AWAIT_STREAM_MS,
  expiredTiles,
  unsettledTiles,
  useNodeFaults,
  type AwaitingTiles,
} from './use-node-faults';

// React Query tells observers on a setTimeout(0) by default; on a microtask here, so that `until`
// (event-loop turns, no clock) also covers the test that mocks setTimeout.
before(() => notifyManager.setScheduler(queueMicrotask));
after(() => notifyManager.setScheduler((cb) => setTimeout(cb, 0)));

afterEach(() => {
  cleanup();
  mock.restoreAll();
  mock.timers.reset();
});

const R = 'plugboard.example/gpu';
const TILE = `${R}/dev-1`;

/** The snapshot the stream would send with dev-1's fault in `phase` (null: no fault). */
function nodeWith(phase: FaultPhase | null): NodeSnapshot {
  const node = makeSnapshot({ devices: 2, numaNodes: 1, pods: 0 });
  if (phase === null) return node;
  const told = phase === 'active';
  node.devices[TILE] = {
    ...node.devices[TILE]!,
    health: 'Unhealthy',
    reason: 'drill',
    kubeletHealth: told ? 'Unhealthy' : null,
    fault: told ? 'active' : 'pending',
    faulted: told,
  };
  node.faults = {
    f1: {
      id: 'f1',
      resource: R,
      deviceId: 'dev-1',
      reason: 'drill',
      createdAt: '2026-01-01T00:00:01.000Z',
      expiresAt: null,
      scenarioId: null,
      simulated: true,
      state: phase,
      stateReason: told ? null : 'the kubelet has no ListAndWatch stream open',
    },
  };
  return node;
}

/** The node page's fault parts as node-detail composes them, fed snapshots by the test (the stream). */
function FaultHarness({ node }: { node: NodeSnapshot }) {
  const f = useNodeFaults('node-a', node, 'secret');
  return (
    <>
      {f.notice && <p role="alert">{f.notice}</p>}
      <NumaMap
        node={node}
        faultControl={{ mode: 'enabled' }}
        pendingTiles={f.pendingTiles}
        onOpen={() => {}}
        onToggleFault={f.openDialog}
      />
      <ActiveFaults node={node} />
      {f.dialogTile && (
        <FaultDialog
          node={node}
          tileKey={f.dialogTile}
          pending={f.sending}
          error={f.error}
          onSubmit={f.submit}
          onCancel={f.cancelDialog}
        />
      )}
    </>
  );
}

function renderHarness(node: NodeSnapshot) {
  const client = new QueryClient({
    defaultOptions: { queries: { gcTime: Infinity }, mutations: { gcTime: Infinity } },
  });
  const ui = (n: NodeSnapshot) => (
    <QueryClientProvider client={client}>
      <FaultHarness node={n} />
    </QueryClientProvider>
  );
  const r = render(ui(node));
  return { stream: (n: NodeSnapshot) => r.rerender(ui(n)) };
}

interface Sent {
  method: string;
  url: string;
  body: unknown;
  authorization: string | null;
}

/** fetch answered by the test: each call waits until `answer` is called for it. */
function gateway() {
  const sent: Sent[] = [];
  const waiting: ((res: Response) => void)[] = [];
  mock.method(globalThis, 'fetch', (url: string, init: RequestInit) => {
    sent.push({
      method: init.method ?? 'GET',
      url,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : null,
      authorization: new Headers(init.headers).get('authorization'),
    });
    return new Promise<Response>((resolve) => waiting.push(resolve));
  });
  return {
    sent,
    answer(res: Response) {
      const resolve = waiting.shift();
      assert.ok(resolve, 'a request is waiting for its answer');
      resolve(res);
    },
  };
}

/** Turns the event loop (inside act) until `done` holds: no clock, so it needs no timers. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 200; turn++) {
    if (done()) return;
    await act(() => new Promise<void>((resolve) => setImmediate(resolve)));
  }
  assert.fail(`still not: ${what}`);
}

const theSwitch = () => screen.getByRole<HTMLButtonElement>('switch', { name: 'Fault dev-1' });
const faultsList = () => screen.getByRole('region', { name: /Active simulated faults/ });

describe('unsettledTiles and expiredTiles', () => {
  const inject: AwaitingTiles = new Map([[TILE, { expectFaulted: true, at: 1_000 }]]);
  const clear: AwaitingTiles = new Map([[TILE, { expectFaulted: false, at: 1_000 }]]);

  it('an inject settles once the snapshot holds the fault, pending or active; a clear once it does not', () => {
    assert.equal(unsettledTiles(nodeWith(null), inject), inject, 'nothing settled: the same map');
    assert.equal(unsettledTiles(nodeWith('pending'), inject).size, 0);
    assert.equal(unsettledTiles(nodeWith('active'), inject).size, 0);
    assert.equal(unsettledTiles(nodeWith('active'), clear), clear);
    assert.equal(unsettledTiles(nodeWith(null), clear).size, 0);
  });

  it('a tile expires AWAIT_STREAM_MS after the gateway accepted it, not before', () => {
    assert.deepEqual(expiredTiles(inject, 1_000 + AWAIT_STREAM_MS - 1), []);
    assert.deepEqual(expiredTiles(inject, 1_000 + AWAIT_STREAM_MS), [TILE]);
  });
});

describe('useNodeFaults: the switch follows the stream, never the request', () => {
  it('inject: waiting… through the request and after it, until the stream holds the fault; pending → active → cleared', async () => {
    const gw = gateway();
    const { stream } = renderHarness(nodeWith(null));
    assert.equal(theSwitch().textContent, 'fault off');

    fireEvent.click(theSwitch());
    const dialog = screen.getByRole('dialog', { name: 'Inject a simulated fault on dev-1?' });
    fireEvent.change(within(dialog).getByLabelText('Reason'), { target: { value: 'drill' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Inject simulated fault' }));
    await until(() => gw.sent.length === 1, 'sent');
    assert.deepEqual(gw.sent, [
      {
        method: 'POST',
        url: '/api/nodes/node-a/faults',
        body: { resource: R, deviceId: 'dev-1', reason: 'drill' },
        authorization: 'Bearer secret',
      },
    ]);
    assert.equal(theSwitch().textContent, 'waiting…', 'in flight');
    assert.equal(theSwitch().getAttribute('aria-checked'), 'false');
    assert.equal(theSwitch().getAttribute('aria-busy'), 'true');
    assert.ok(screen.getByRole('dialog'), 'the dialog stays open until the gateway answers');

    gw.answer(new Response(JSON.stringify({ id: 'f1' }), { status: 201 }));
    await until(() => screen.queryByRole('dialog') === null, 'the dialog closed');
    assert.equal(theSwitch().textContent, 'waiting…', 'accepted, but the stream has not shown it');
    assert.equal(theSwitch().getAttribute('aria-checked'), 'false', 'not flipped ahead of the stream');
    assert.equal(theSwitch().disabled, true);

    // A snapshot without the change (another device's patch) settles nothing.
    stream(nodeWith(null));
    assert.equal(theSwitch().textContent, 'waiting…');

    stream(nodeWith('pending'));
    assert.equal(theSwitch().textContent, 'fault pending', 'held by the gateway, the kubelet not told');
    assert.equal(theSwitch().getAttribute('aria-checked'), 'true');
    assert.equal(theSwitch().getAttribute('aria-busy'), 'false');
    assert.match(within(faultsList()).getByRole('listitem').textContent ?? '', /pending/);

    stream(nodeWith('active'));
    assert.equal(theSwitch().textContent, 'fault on');
    assert.match(
      within(faultsList()).getByRole('listitem').textContent ?? '',
      /dev-1 \(plugboard\.example\/gpu\) — drill; .*, until cleared\. kubelet told Unhealthy$/,
    );

    fireEvent.click(theSwitch());
    const clear = screen.getByRole('dialog', { name: 'Clear the simulated fault on dev-1?' });
    fireEvent.click(within(clear).getByRole('button', { name: 'Clear simulated fault' }));
    await until(() => gw.sent.length === 2, 'sent');
    assert.equal(gw.sent[1]?.method, 'DELETE');
    assert.equal(
      gw.sent[1]?.url,
      `/api/nodes/node-a/faults?resource=${encodeURIComponent(R)}&deviceId=dev-1`,
    );
    gw.answer(new Response(null, { status: 204 }));
    await until(() => screen.queryByRole('dialog') === null, 'the dialog closed');
    assert.equal(theSwitch().textContent, 'waiting…', 'cleared by the gateway, still held in the stream');
    assert.equal(theSwitch().getAttribute('aria-checked'), 'true');

    stream(nodeWith(null));
    assert.equal(theSwitch().textContent, 'fault off');
    assert.equal(theSwitch().getAttribute('aria-checked'), 'false');
    assert.equal(within(faultsList()).getByText('None.').tagName, 'P');
    assert.equal(screen.queryByRole('alert'), null);
  });

  it('a stream that showed the fault before the gateway answered settles the tile at once', async () => {
    const gw = gateway();
    const { stream } = renderHarness(nodeWith(null));
    fireEvent.click(theSwitch());
    fireEvent.click(screen.getByRole('button', { name: 'Inject simulated fault' }));
    await until(() => gw.sent.length === 1, 'sent');
    stream(nodeWith('active'));
    assert.equal(theSwitch().textContent, 'waiting…', 'the request is still in flight');
    gw.answer(new Response('{}', { status: 201 }));
    await until(() => theSwitch().textContent === 'fault on', 'the switch reads fault on');
    assert.equal(screen.queryByRole('dialog'), null);
  });

  it('a failed request: the dialog says why, nothing waits, the switch is as the stream has it; Cancel forgets the error', async () => {
    const gw = gateway();
    renderHarness(nodeWith(null));
    fireEvent.click(theSwitch());
    fireEvent.click(screen.getByRole('button', { name: 'Inject simulated fault' }));
    await until(() => gw.sent.length === 1, 'sent');
    gw.answer(
      new Response(JSON.stringify({ title: 'Forbidden', detail: 'token lacks faults:write' }), {
        status: 403,
        headers: { 'content-type': 'application/problem+json' },
      }),
    );
    await until(() => /Forbidden/.test(screen.getByRole('dialog').textContent ?? ''), 'the error shown');
    const dialog = screen.getByRole('dialog', { name: 'Inject a simulated fault on dev-1?' });
    assert.match(
      dialog.textContent ?? '',
      /Forbidden: token lacks faults:write — your token may not inject faults on this gateway\./,
    );
    assert.equal(theSwitch().textContent, 'fault off');
    assert.equal(theSwitch().getAttribute('aria-busy'), 'false');

    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    assert.equal(screen.queryByRole('dialog'), null);
    fireEvent.click(theSwitch());
    assert.doesNotMatch(screen.getByRole('dialog').textContent ?? '', /Forbidden/);
  });

  it('says so when the stream has not shown an accepted change after 30 s, and stops waiting', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2026-01-01T00:00:10Z') });
    const gw = gateway();
    renderHarness(nodeWith(null));
    fireEvent.click(theSwitch());
    fireEvent.click(screen.getByRole('button', { name: 'Inject simulated fault' }));
    await until(() => gw.sent.length === 1, 'sent');
    gw.answer(new Response('{}', { status: 201 }));
    await until(() => screen.queryByRole('dialog') === null, 'the dialog closed');
    act(() => mock.timers.tick(AWAIT_STREAM_MS - 1));
    assert.equal(screen.queryByRole('alert'), null);
    assert.equal(theSwitch().textContent, 'waiting…');
    act(() => mock.timers.tick(1));
    assert.equal(
      screen.getByRole('alert').textContent,
      `The gateway accepted the request, but after 30 s the stream still does not show the change for ${TILE}.`,
    );
    assert.equal(theSwitch().textContent, 'fault off', 'the stream never showed it');
  });
});
