// The fault dialog on a DRA device of a driver this gateway does not run: a DeviceTaintRule drill —
// dry run first, then the rule's observed status and the pods using the device, and only then
// NoSchedule/NoExecute (a new POST) or deleting the rule (DELETE).
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import type { FaultState, FaultTaintRuleStatus, NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { DRA_DRIVER, withDra } from '../../test/make-dra';
import { draTaintRulePhase, draTileKey } from '../../lib/dra-view';
import { tileFaultHeld } from '../../lib/node-view';
import { unsettledTiles } from '../node/use-node-faults';
import { FaultDialog, type FaultRequest } from './fault-dialog';
import { ActiveFaults } from '../node/active-faults';

afterEach(() => cleanup());

const KEY0 = `${DRA_DRIVER}/node-a/gpu-0`;
const TILE0 = draTileKey(KEY0);
const RULE = 'plugboard-fault-0123456789abcdef0123';
const DRY_RUN_MESSAGE =
  '1 published device selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update.';

/** A node whose DRA driver is not run by this gateway; gpu-0 is held by dra/worker-0. */
function node(): NodeSnapshot {
  const n = withDra(makeSnapshot({ devices: 2, numaNodes: 1, pods: 0 }), {
    devices: 2,
    numaNodes: 1,
    claims: 1,
  });
  n.dra!.drivers[DRA_DRIVER] = { ...n.dra!.drivers[DRA_DRIVER]!, inProcess: false };
  for (const d of Object.values(n.dra!.devices)) n.dra!.devices[d.key] = { ...d, sourceId: null };
  return n;
}

function withRuleFault(
  n: NodeSnapshot,
  taint: 'None' | 'NoSchedule' | 'NoExecute',
  status: Partial<FaultTaintRuleStatus>,
  state: FaultState['state'] = 'active',
): NodeSnapshot {
  const f: FaultState = {
    id: `f-${taint}`,
    resource: DRA_DRIVER,
    deviceId: 'gpu-0',
    reason: 'would a drain evict anything? (drill)',
    createdAt: taint === 'None' ? '2026-01-01T00:01:00.000Z' : '2026-01-01T00:02:00.000Z',
    expiresAt: null,
    scenarioId: null,
    simulated: true,
    taint,
    taintRule: { name: RULE, driver: DRA_DRIVER, pool: 'node-a', device: 'gpu-0' },
    state,
    stateReason: null,
    taintRuleStatus: {
      observed: true,
      effect: taint,
      condition: null,
      podsUsingDevice: ['dra/worker-0'],
      ...status,
    },
  };
  return { ...n, faults: { ...n.faults, [f.id]: f } };
}

const dryRunWritten = {
  condition: {
    status: 'False' as const,
    reason: 'NoEffect',
    message: DRY_RUN_MESSAGE,
    lastTransitionTime: '2026-01-01T00:01:01.000Z',
    current: true,
  },
};

function open(n: NodeSnapshot) {
  const sent: FaultRequest[] = [];
  render(
    <FaultDialog
      node={n}
      tileKey={TILE0}
      pending={false}
      error={null}
      onSubmit={(r) => sent.push(r)}
      onCancel={() => {}}
    />,
  );
  return sent;
}

describe('FaultDialog on a DRA device of a driver this gateway does not run', () => {
  it('offers the dry run first: a DeviceTaintRule (cluster-wide) with effect None, nothing stronger', () => {
    const sent = open(node());
    const dialog = screen.getByRole('dialog', {
      name: `Dry-run a DeviceTaintRule on gpu-0 (DRA, ${DRA_DRIVER})?`,
    });
    assert.equal(document.activeElement, within(dialog).getByRole('button', { name: 'Cancel' }));
    assert.match(dialog.textContent ?? '', /DeviceTaintRule — a cluster-wide API object/);
    assert.equal(within(dialog).queryByRole('radio', { name: /NoExecute/ }), null);
    assert.equal(
      within(dialog).getByRole('list', { name: 'Pods using this device' }).textContent,
      'dra/worker-0 (Running)',
    );
    fireEvent.click(
      within(dialog).getByRole('button', { name: 'Create the rule as a dry run (effect None)' }),
    );
    assert.deepEqual(sent, [
      {
        kind: 'inject',
        tileKey: TILE0,
        resource: DRA_DRIVER,
        deviceId: 'node-a/gpu-0',
        reason: 'simulated fault from the dashboard',
        ttlSeconds: null,
        taint: 'None',
        ruleEffect: 'None',
      },
    ]);
  });

  it('while the status is not written: names the rule, says so, offers only deleting it', () => {
    open(withRuleFault(node(), 'None', {}));
    const dialog = screen.getByRole('dialog', {
      name: `DeviceTaintRule ${RULE} on gpu-0 (DRA, ${DRA_DRIVER})`,
    });
    assert.match(dialog.textContent ?? '', new RegExp(`a cluster-wide API object\\) named ${RULE}`));
    assert.match(within(dialog).getByTestId('taint-rule-status').textContent ?? '', /Not written yet/);
    assert.deepEqual(
      within(dialog)
        .getAllByRole('radio')
        .map((r) => (r as HTMLInputElement).value),
      ['clear'],
    );
  });

  it("shows the dry run's status message and the pods, then offers NoSchedule/NoExecute as a new POST", () => {
    const sent = open(withRuleFault(node(), 'None', dryRunWritten));
    const dialog = screen.getByRole('dialog');
    assert.match(
      within(dialog).getByTestId('taint-rule-status').textContent ?? '',
      /1 pod would be evicted in 1 namespace if the effect was NoExecute/,
    );
    assert.equal(
      within(dialog).getByRole('list', { name: 'Pods using this device' }).textContent,
      'dra/worker-0 (Running)',
    );
    assert.match(dialog.textContent ?? '', /Effect as the API server reports it: None/);
    fireEvent.click(within(dialog).getByRole('radio', { name: 'Set the effect to NoExecute' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Set NoExecute and evict 1 pod' }));
    assert.equal(sent[0]?.kind, 'inject');
    assert.equal(sent[0]?.taint, 'NoExecute');
    assert.equal(sent[0]?.ruleEffect, 'NoExecute');
    assert.equal(sent[0]?.deviceId, 'node-a/gpu-0');
  });

  it("after NoExecute: no stronger effect left; deleting sends a clear naming the fault's device", () => {
    const n = withRuleFault(withRuleFault(node(), 'None', dryRunWritten), 'NoExecute', {
      condition: {
        ...dryRunWritten.condition,
        status: 'True',
        reason: 'Completed',
        message: '1 pod evicted since starting the controller.',
      },
      podsUsingDevice: [],
    });
    const sent = open(n);
    const dialog = screen.getByRole('dialog');
    assert.match(
      within(dialog).getByTestId('taint-rule-status').textContent ?? '',
      /1 pod evicted since starting the controller\./,
    );
    assert.match(dialog.textContent ?? '', /No pod uses this device\./);
    assert.deepEqual(
      within(dialog)
        .getAllByRole('radio')
        .map((r) => (r as HTMLInputElement).value),
      ['clear'],
    );
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete the DeviceTaintRule' }));
    assert.equal(sent[0]?.kind, 'clear');
    assert.equal(sent[0]?.resource, DRA_DRIVER);
    assert.equal(sent[0]?.deviceId, 'gpu-0');
  });

  it('the tile is "waiting…" until the stream shows the rule with the asked effect', () => {
    const dry = withRuleFault(node(), 'None', dryRunWritten);
    assert.equal(tileFaultHeld(dry, TILE0), true);
    assert.equal(draTaintRulePhase(dry, dry.dra!.devices[KEY0]!), 'active');
    const awaiting = new Map([
      [TILE0, { expectFaulted: true, expectRuleEffect: 'NoExecute' as const, at: 0 }],
    ]);
    assert.equal(unsettledTiles(dry, awaiting).size, 1, 'the rule still has effect None');
    const asked = withRuleFault(dry, 'NoExecute', { effect: 'None' }, 'pending');
    assert.equal(draTaintRulePhase(asked, asked.dra!.devices[KEY0]!), 'pending');
    assert.equal(unsettledTiles(asked, awaiting).size, 1);
    const done = withRuleFault(dry, 'NoExecute', { effect: 'NoExecute' });
    assert.equal(unsettledTiles(done, awaiting).size, 0);
  });

  it('the active faults list says the rule is observed, not that the kubelet was told', () => {
    render(<ActiveFaults node={withRuleFault(node(), 'None', dryRunWritten)} />);
    const item = screen.getByRole('listitem');
    assert.match(item.textContent ?? '', new RegExp(`DeviceTaintRule ${RULE} observed`));
    assert.doesNotMatch(item.textContent ?? '', /kubelet told/);
  });
});
