import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { DraClaimState, NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { withDra } from '../../test/make-dra';
import { ClaimsTable } from './claims-table';
import { DraDeviceDrawer } from './dra-device-drawer';
import { withHistory } from '../../test/with-history';

afterEach(() => cleanup());

const status = {
  conditions: [
    {
      type: 'Ready',
      status: 'True' as const,
      reason: 'Prepared',
      message: 'prepared by gpu.plugboard.example on node-a',
      lastTransitionTime: '2026-11-29T05:00:00Z',
    },
  ],
  data: { slot: 3 },
  networkData: { interfaceName: 'eth1', ips: ['10.0.0.2/24'] },
};

/** node-a with two prepared claims; the first one's device carries the driver's status. */
function node(): { n: NodeSnapshot; reported: DraClaimState; silent: DraClaimState } {
  const n = withDra(makeSnapshot({ devices: 4, numaNodes: 2, pods: 1 }), {
    devices: 4,
    numaNodes: 2,
    claims: 2,
  });
  const dra = n.dra!;
  const [first, second] = Object.values(dra.claims).filter((c) => c.devices.length > 0);
  const reported: DraClaimState = { ...first!, devices: first!.devices.map((d) => ({ ...d, status })) };
  const key = reported.devices[0]!.deviceKey;
  const device = dra.devices[key]!;
  return {
    n: {
      ...n,
      dra: {
        ...dra,
        claims: { ...dra.claims, [reported.key]: reported },
        devices: {
          ...dra.devices,
          [key]: { ...device, allocations: device.allocations.map((a) => ({ ...a, status })) },
        },
      },
    },
    reported,
    silent: second!,
  };
}

describe('device status (KEP-4817) in the claims table and the device drawer', () => {
  it("shows each device's conditions, data and network data as the driver wrote them, and says when it wrote none", () => {
    const { n, reported, silent } = node();
    render(<ClaimsTable node={n} onOpenDevice={() => undefined} />);
    const row = (key: string) => document.querySelector(`tr[data-claim="${key}"]`) as HTMLElement;
    const shown = within(row(reported.key)).getByLabelText(
      `Status of ${reported.devices[0]!.device} as its driver reported it`,
    );
    assert.match(shown.textContent ?? '', /Ready: True \(Prepared\)/);
    assert.match(shown.textContent ?? '', /data \{"slot":3\}/);
    assert.match(shown.textContent ?? '', /network eth1 10\.0\.0\.2\/24/);
    assert.match(
      within(shown)
        .getByText(/Ready: True/)
        .getAttribute('title') ?? '',
      /prepared by gpu\.plugboard\.example on node-a, since 2026-11-29T05:00:00Z/,
    );
    assert.match(row(silent.key).textContent ?? '', /status not reported/);
  });

  it("the drawer of an allocated device shows its claim's status entry", () => {
    const { n, reported } = node();
    const key = reported.devices[0]!.deviceKey;
    render(
      withHistory(<DraDeviceDrawer node={n} deviceKey={key} onClose={() => undefined} />, 'node-a', {
        draRecorded: true,
      }),
    );
    const list = screen.getByRole('list', { name: `Claims allocated ${n.dra!.devices[key]!.name}` });
    assert.match(list.textContent ?? '', /Ready: True \(Prepared\)/);
  });
});
