import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import type { NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { DRA_DRIVER, withDra } from '../../test/make-dra';
import { draTileKey } from '../../lib/dra-view';
import { FaultDialog, type FaultRequest } from './fault-dialog';

afterEach(() => cleanup());

const KEY0 = `${DRA_DRIVER}/node-a/gpu-0`;

function node(): NodeSnapshot {
  return withDra(makeSnapshot({ devices: 4, numaNodes: 1, pods: 1 }), {
    devices: 4,
    numaNodes: 1,
    claims: 1,
  });
}

function open(n: NodeSnapshot, tileKey: string) {
  const sent: FaultRequest[] = [];
  let cancelled = 0;
  render(
    <FaultDialog
      node={n}
      tileKey={tileKey}
      pending={false}
      error={null}
      onSubmit={(r) => sent.push(r)}
      onCancel={() => (cancelled += 1)}
    />,
  );
  return { sent, cancelled: () => cancelled };
}

describe('FaultDialog on a DRA device', () => {
  it('offers no taint / NoSchedule / NoExecute; NoExecute names the pods that would be evicted before confirm', () => {
    const { sent } = open(node(), draTileKey(KEY0));
    const dialog = screen.getByRole('dialog', {
      name: `Inject a simulated fault on gpu-0 (DRA, ${DRA_DRIVER})?`,
    });
    assert.equal(document.activeElement, within(dialog).getByRole('button', { name: 'Cancel' }));
    const group = within(dialog).getByRole('group', { name: 'Taint the device' });
    const none = within(group).getByRole('radio', { name: 'No taint (health only)' });
    assert.equal((none as HTMLInputElement).checked, true, 'health only unless asked');
    assert.ok(within(group).getByRole('radio', { name: 'NoSchedule' }));
    assert.equal(
      within(dialog).getByRole('list', { name: 'Affected pods' }).textContent,
      'dra/worker-0 (Running)',
    );

    fireEvent.click(within(group).getByRole('radio', { name: 'NoExecute' }));
    assert.match(
      within(group).getByRole('radio', { name: 'NoExecute' }).getAttribute('aria-describedby') ?? '',
      /fault-taint-NoExecute/,
    );
    assert.equal(
      within(dialog).getByRole('list', { name: 'Pods that will be evicted' }).textContent,
      'dra/worker-0 (Running)',
    );
    fireEvent.change(within(dialog).getByLabelText('Reason'), { target: { value: 'test: Xid 79' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Inject simulated fault and evict 1 pod' }));
    assert.deepEqual(sent, [
      {
        kind: 'inject',
        tileKey: draTileKey(KEY0),
        resource: DRA_DRIVER,
        deviceId: 'gpu-0',
        reason: 'test: Xid 79',
        ttlSeconds: null,
        taint: 'NoExecute',
      },
    ]);
  });

  it('health only sends taint null (never left to a default); a free device evicts nobody', () => {
    const { sent } = open(node(), draTileKey(`${DRA_DRIVER}/node-a/gpu-3`));
    const dialog = screen.getByRole('dialog');
    assert.match(dialog.textContent ?? '', /No pod uses this device\./);
    fireEvent.click(within(dialog).getByRole('radio', { name: 'NoExecute' }));
    assert.match(dialog.textContent ?? '', /No pod uses this device: nothing is evicted\./);
    fireEvent.click(within(dialog).getByRole('radio', { name: 'No taint (health only)' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Inject simulated fault' }));
    assert.equal(sent[0]?.taint, null);
    assert.equal(sent[0]?.deviceId, 'gpu-3');
  });

  it('a faulted device is cleared by driver + source ID; the ResourceSlice name when the source ID is unknown', () => {
    const n = node();
    n.dra!.devices[KEY0] = { ...n.dra!.devices[KEY0]!, fault: 'active', sourceId: null, name: 'gpu-0-abc' };
    const { sent } = open(n, draTileKey(KEY0));
    const dialog = screen.getByRole('dialog', {
      name: `Clear the simulated fault on gpu-0-abc (DRA, ${DRA_DRIVER})?`,
    });
    assert.equal(within(dialog).queryByRole('group'), null);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Clear simulated fault' }));
    assert.equal(sent[0]?.kind, 'clear');
    assert.equal(sent[0]?.resource, DRA_DRIVER);
    assert.equal(sent[0]?.deviceId, 'gpu-0-abc');
  });

  it('a device-plugin device keeps its dialog: no taint choice, no taint in the request', () => {
    const { sent } = open(node(), 'plugboard.example/gpu/dev-0');
    const dialog = screen.getByRole('dialog', { name: 'Inject a simulated fault on dev-0?' });
    assert.equal(within(dialog).queryByRole('group'), null);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Inject simulated fault' }));
    assert.equal('taint' in sent[0]!, false);
  });
});
