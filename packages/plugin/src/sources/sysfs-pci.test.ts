import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { SysfsPciSource, type SysfsPciSourceOptions } from './sysfs-pci.js';

// A committed sysfs tree: two NVIDIA 3D controllers (NUMA 0 and 1), one NVIDIA VGA device
// without NUMA information, one Intel NIC VF bound to vfio-pci.
const root = fileURLToPath(new URL('../../test/fixtures/sys', import.meta.url));

const table: {
  name: string;
  options: Omit<SysfsPciSourceOptions, 'root'>;
  expect: { id: string; numaNodes: number[]; deviceNodes: string[] }[];
}[] = [
  {
    name: 'vendor + class prefix, NUMA from numa_node, nodes from the IOMMU group',
    options: { vendor: '0x10de', class: '0x0302', deviceNodePattern: '/dev/vfio/{iommuGroup}' },
    expect: [
      { id: '0000:3b:00.0', numaNodes: [0], deviceNodes: ['/dev/vfio/12'] },
      { id: '0000:86:00.0', numaNodes: [1], deviceNodes: ['/dev/vfio/13'] },
    ],
  },
  {
    name: 'vendor only; numa_node -1 means no NUMA preference',
    options: { vendor: '0x10DE' },
    expect: [
      { id: '0000:3b:00.0', numaNodes: [0], deviceNodes: [] },
      { id: '0000:86:00.0', numaNodes: [1], deviceNodes: [] },
      { id: '0000:af:00.0', numaNodes: [], deviceNodes: [] },
    ],
  },
  {
    name: 'device ID filter',
    options: { vendor: '0x10de', devices: ['0x1eb8'], deviceNodePattern: '/dev/x-{address}-{device}' },
    expect: [{ id: '0000:af:00.0', numaNodes: [], deviceNodes: ['/dev/x-0000:af:00.0-0x1eb8'] }],
  },
  {
    name: 'driver filter',
    options: { driver: 'vfio-pci', deviceNodePattern: '/dev/vfio/{iommuGroup}' },
    expect: [{ id: '0000:18:00.2', numaNodes: [0], deviceNodes: ['/dev/vfio/20'] }],
  },
  { name: 'nothing matches', options: { vendor: '0x1002' }, expect: [] },
];

describe('SysfsPciSource (fixture tree)', () => {
  for (const row of table) {
    it(row.name, async () => {
      const source = new SysfsPciSource({ root, pollIntervalMs: 0, ...row.options });
      await source.start();
      try {
        assert.deepEqual(
          source.list().map(({ id, numaNodes, deviceNodes }) => ({ id, numaNodes, deviceNodes })),
          row.expect,
        );
        assert.ok(source.list().every((d) => d.health === 'Healthy'));
      } finally {
        await source.stop();
      }
    });
  }

  it('a missing sysfs root fails start', async () => {
    const source = new SysfsPciSource({ root: '/nonexistent-sysfs', pollIntervalMs: 0 });
    await assert.rejects(source.start(), /ENOENT/);
  });
});
