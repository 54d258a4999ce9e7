import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ReactNode } from 'react';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import type { DraDeviceState, NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { DRA_CLASS, DRA_DRIVER, withDra } from '../../test/make-dra';
import { draTileKey } from '../../lib/dra-view';
import type { HistoryView } from '../../lib/history';
import { withHistory } from '../../test/with-history';
import { ClaimsTable } from './claims-table';
import { DraDeviceDrawer } from './dra-device-drawer';
import { DraDrivers } from './dra-drivers';

afterEach(() => cleanup());

const KEY1 = `${DRA_DRIVER}/node-a/gpu-1`;

function node(): NodeSnapshot {
  return withDra(makeSnapshot({ devices: 4, numaNodes: 2, pods: 1 }), {
    devices: 4,
    numaNodes: 2,
    claims: 2,
    pendingClaims: 1,
  });
}

function withDevice(n: NodeSnapshot, key: string, change: Partial<DraDeviceState>): NodeSnapshot {
  const dra = n.dra!;
  return { ...n, dra: { ...dra, devices: { ...dra.devices, [key]: { ...dra.devices[key]!, ...change } } } };
}

/** The drawer with the gateway's history of node-a's DRA devices already known. */
const withDraHistory = (
  children: ReactNode,
  draDevices: HistoryView['draDevices'] = {},
  draRecorded = true,
) => withHistory(children, 'node-a', { draDevices, draRecorded });

describe('ClaimsTable', () => {
  it('lists claims with requests, devices, pods, phase and health; a pending claim first, with why', () => {
    let opened: string | null = null;
    render(<ClaimsTable node={node()} onOpenDevice={(k) => (opened = k)} />);
    assert.match(screen.getByRole('status').textContent ?? '', /3 claims, 1 pending/);
    const table = screen.getByRole('table', { name: 'ResourceClaims on node-a' });
    const rows = within(table).getAllByRole('row').slice(1);
    // pending claim (2 rows: the claim, then why), then the two prepared ones.
    assert.equal(rows.length, 4);
    assert.match(rows[0]!.textContent ?? '', /waiting-0-gpu/);
    assert.match(rows[0]!.textContent ?? '', new RegExp(`gpu: 1 × ${DRA_CLASS.replaceAll('.', '\\.')}`));
    assert.match(
      rows[0]!.textContent ?? '',
      /where device\.attributes\["gpu\.plugboard\.example"\]\.model == "PB-200"/,
    );
    assert.match(rows[0]!.textContent ?? '', /none allocated/);
    assert.match(rows[0]!.textContent ?? '', /pending: not allocated/);
    assert.match(rows[0]!.textContent ?? '', /not reported/);
    assert.match(
      rows[1]!.textContent ?? '',
      /Why pending: 0\/1 nodes are available: 1 cannot allocate all claims/,
    );
    assert.match(
      rows[1]!.textContent ?? '',
      /Free on this node now: gpu\.plugboard\.example: 2 of 4 free \(2 allocated\)/,
    );
    const prepared = rows[2]!;
    assert.match(prepared.textContent ?? '', /worker-0-gpu/);
    assert.match(prepared.textContent ?? '', /dra\/worker-0 \(Running\)/);
    assert.match(prepared.textContent ?? '', /prepared by the kubelet/);
    assert.match(prepared.textContent ?? '', /Healthy/);
    fireEvent.click(within(prepared).getByRole('button', { name: `Open DRA device gpu-0 (${DRA_DRIVER})` }));
    assert.equal(opened, draTileKey(`${DRA_DRIVER}/node-a/gpu-0`));
  });

  it('says when the scheduler has not said why, and renders nothing for a gateway without DRA', () => {
    const n = node();
    const key = 'dra/waiting-0-gpu';
    n.dra!.claims[key] = { ...n.dra!.claims[key]!, pendingReason: null };
    render(<ClaimsTable node={n} onOpenDevice={() => {}} />);
    assert.match(document.body.textContent ?? '', /the scheduler has not said why yet/);
    cleanup();
    const view = render(
      <ClaimsTable node={makeSnapshot({ devices: 2, numaNodes: 1, pods: 0 })} onOpenDevice={() => {}} />,
    );
    assert.equal(view.container.textContent, '');
  });
});

describe('ClaimsTable at scale', () => {
  it('shows every pending claim and the first 100 others until asked; a filter finds any claim', () => {
    const n = withDra(makeSnapshot({ devices: 0, numaNodes: 1, pods: 0 }), {
      devices: 250,
      numaNodes: 2,
      claims: 250,
      pendingClaims: 3,
    });
    render(<ClaimsTable node={n} onOpenDevice={() => {}} />);
    const table = screen.getByRole('table', { name: 'ResourceClaims on node-a' });
    const claimRows = () => table.querySelectorAll('tr[data-claim]');
    assert.equal(claimRows().length, 103);
    assert.equal(table.querySelectorAll('tr[data-claim-why]').length, 3);
    assert.match(screen.getByRole('status').textContent ?? '', /253 claims, 3 pending · 103 shown/);
    fireEvent.change(screen.getByRole('searchbox', { name: 'Claim or pod' }), {
      target: { value: 'worker-249' },
    });
    assert.deepEqual(
      [...claimRows()].map((r) => r.getAttribute('data-claim')),
      ['dra/worker-249-gpu'],
    );
    fireEvent.change(screen.getByRole('searchbox', { name: 'Claim or pod' }), { target: { value: '' } });
    fireEvent.click(screen.getByRole('button', { name: 'Show all 253 claims' }));
    assert.equal(claimRows().length, 253);
    assert.equal(screen.queryByRole('button', { name: /Show all/ }), null);
  });
});

describe('DraDrivers', () => {
  it('shows the honest DRA counts and the driver’s registration, health streams and publication', () => {
    let n = node();
    n = withDevice(n, KEY1, {
      health: 'Unhealthy',
      taints: [{ key: 'k', value: null, effect: 'NoExecute', timeAdded: null, source: 'ResourceSlice' }],
    });
    const driver = n.dra!.drivers[DRA_DRIVER]!;
    n.dra!.drivers[DRA_DRIVER] = {
      ...driver,
      healthStreams: 0,
      counts: { published: 4, usable: 3, allocated: 2, free: 2, unhealthy: 1, tainted: 1 },
    };
    render(<DraDrivers dra={n.dra!} />);
    const region = screen.getByRole('region', { name: `${DRA_DRIVER} DRA devices published 4 allocated 2` });
    assert.match(
      region.textContent ?? '',
      /published 4\s*usable 3\s*allocated 2\s*free 2\s*unhealthy 1\s*tainted 1/,
    );
    assert.match(region.textContent ?? '', /1 unhealthy.*1 tainted.*no health stream/);
    assert.ok(
      screen.getByRole('img', {
        name: `${DRA_DRIVER}: 2 allocated, 2 free, 0 unusable and not allocated, of 4 published`,
      }),
    );
    assert.match(document.body.textContent ?? '', /Run by this gateway/);
    assert.match(document.body.textContent ?? '', /the kubelet does not receive this driver’s device health/);
    assert.match(document.body.textContent ?? '', /ResourceSlices: 1 \(generation 1\)/);
  });
});

describe('DraDeviceDrawer', () => {
  it('names driver, pool and device; health vs what the kubelet was told; taints with their source; the fault phase; allocations; attributes and capacity', () => {
    const n = withDevice(node(), KEY1, {
      health: 'Unhealthy',
      reason: 'simulated: ECC errors',
      kubeletHealth: 'Healthy',
      fault: 'pending',
      taints: [
        {
          key: 'gpu.plugboard.example/unhealthy',
          value: 'true',
          effect: 'NoExecute',
          timeAdded: '2026-01-01T00:00:00Z',
          source: 'ResourceSlice',
        },
        {
          key: 'maintenance',
          value: null,
          effect: 'NoSchedule',
          timeAdded: null,
          source: 'DeviceTaintRule drain-a',
        },
      ],
    });
    const now = Date.now();
    render(
      withDraHistory(<DraDeviceDrawer node={n} deviceKey={KEY1} onClose={() => {}} />, {
        [KEY1]: [
          { t: now - 600_000, health: 'Healthy', reason: null, taint: null },
          { t: now - 300_000, health: 'Unhealthy', reason: 'simulated: ECC errors', taint: null },
          { t: now - 120_000, health: 'Unhealthy', reason: 'simulated: ECC errors', taint: 'NoExecute' },
        ],
        [`${DRA_DRIVER}/node-a/gpu-2`]: [
          { t: now - 600_000, health: 'Unhealthy', reason: 'other', taint: null },
        ],
      }),
    );
    const drawer = screen.getByRole('dialog', { name: 'DRA device gpu-1' });
    const text = drawer.textContent ?? '';
    assert.match(text, /DRA \(resource\.k8s\.io ResourceSlice\), not a device plugin/);
    assert.match(text, /Driver\s*gpu\.plugboard\.example/);
    assert.match(text, /Pool\s*node-a/);
    assert.match(text, /The driver says\s*Unhealthy since .* — simulated: ECC errors/);
    assert.match(text, /The kubelet was told\s*Healthy/);
    assert.match(text, /The kubelet was last told Healthy; the driver says Unhealthy/);
    assert.match(text, /pending: the driver holds it, the kubelet has not been told yet/);
    const taints = within(drawer).getByRole('table', { name: 'Taints on gpu-1' });
    const taintRows = within(taints)
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.textContent);
    assert.match(taintRows[0] ?? '', /NoExecute\s*gpu\.plugboard\.example\/unhealthy=true\s*ResourceSlice/);
    assert.match(taintRows[1] ?? '', /NoSchedule\s*maintenance\s*DeviceTaintRule drain-a\s*never/);
    assert.match(
      within(drawer).getByRole('list', { name: 'Claims allocated gpu-1' }).textContent ?? '',
      /claim dra\/worker-1-gpu, request gpu → pod dra\/worker-1 \(Running\)/,
    );
    const attrs =
      within(drawer).getByRole('table', { name: 'Attributes and capacity of gpu-1' }).textContent ?? '';
    assert.match(attrs, /model\s*"PB-100"/);
    assert.match(attrs, /resource\.kubernetes\.io\/numaNode\s*0/);
    assert.match(attrs, /driverVersion\s*version 1\.0\.0/);
    assert.match(attrs, /capacity memory\s*80Gi/);
    // Its health strip from the gateway's history: this device's transitions only, taint included.
    const strip = within(drawer).getByRole('list', { name: 'Health history of gpu-1' });
    const spans = within(strip)
      .getAllByRole('listitem')
      .map((li) => li.textContent ?? '');
    assert.equal(spans.length, 3);
    assert.match(spans[0]!, /^Healthy from .+ to [^n]/);
    assert.match(spans[1]!, /^Unhealthy from .+ \(simulated: ECC errors\)$/);
    assert.match(spans[2]!, /^Unhealthy, tainted NoExecute from .+ to now \(simulated: ECC errors\)$/);
    assert.match(text, /gpu-1: unhealthy 1 time, tainted 1 time/);
    assert.doesNotMatch(text, /does not record/);
  });

  it('the health strip of a gateway that predates DRA history says it is not recorded', () => {
    render(withDraHistory(<DraDeviceDrawer node={node()} deviceKey={KEY1} onClose={() => {}} />, {}, false));
    assert.match(
      document.body.textContent ?? '',
      /history does not record DRA devices \(it predates DRA history\)/,
    );
    assert.equal(screen.queryByRole('list', { name: 'Health history of gpu-1' }), null);
  });

  it('a device without a health stream: the kubelet was told nothing; a gone device says so', () => {
    const n = withDevice(node(), KEY1, { kubeletHealth: null });
    render(withDraHistory(<DraDeviceDrawer node={n} deviceKey={KEY1} onClose={() => {}} />));
    assert.match(document.body.textContent ?? '', /nothing: no health stream \(NodeWatchResources\) is open/);
    cleanup();
    render(
      withDraHistory(<DraDeviceDrawer node={n} deviceKey={`${DRA_DRIVER}/node-a/gone`} onClose={() => {}} />),
    );
    assert.match(document.body.textContent ?? '', /no longer in the driver's ResourceSlices/);
  });
});
