// PCI devices from sysfs (<root>/bus/pci/devices/*), filtered by vendor, device ID, class prefix
// and driver. NUMA node from `numa_node` (-1 = none), IOMMU group from the `iommu_group` link,
// device nodes from a pattern. ID = the PCI address.
import { readFile, readdir, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SourceDevice } from '../types.js';
import { naturalCompare } from './listeners.js';
import { ScanningSource, type ScanningWatchOptions } from './scanning.js';

export interface SysfsPciSourceOptions extends ScanningWatchOptions {
  /** sysfs mount point; default /sys. */
  root?: string;
  /** Vendor ID, e.g. '0x10de'. */
  vendor?: string;
  /** Device IDs, e.g. ['0x20b0']. */
  devices?: string[];
  /** Class prefix, e.g. '0x0302' (3D controller) matches class 0x030200. */
  class?: string;
  /** Bound driver name, e.g. 'vfio-pci'. */
  driver?: string;
  /**
   * Device node template: {address}, {iommuGroup}, {vendor}, {device} are replaced,
   * e.g. '/dev/vfio/{iommuGroup}'. Omit for none.
   */
  deviceNodePattern?: string;
  pollIntervalMs?: number;
}

async function readTrimmed(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return null;
  }
}

async function linkName(path: string): Promise<string | null> {
  try {
    return basename(await readlink(path));
  } catch {
    return null;
  }
}

const lower = (s: string | undefined): string | undefined => s?.toLowerCase();

export class SysfsPciSource extends ScanningSource {
  readonly kind = 'sysfs-pci';
  readonly #options: SysfsPciSourceOptions;
  readonly #devicesDir: string;

  constructor(options: SysfsPciSourceOptions) {
    super(options.pollIntervalMs ?? 5000, options);
    this.#options = options;
    this.#devicesDir = join(options.root ?? '/sys', 'bus/pci/devices');
  }

  protected async scan(): Promise<SourceDevice[]> {
    const addresses = (await readdir(this.#devicesDir)).sort(naturalCompare);
    const wantVendor = lower(this.#options.vendor);
    const wantDevices = this.#options.devices?.map((d) => d.toLowerCase());
    const wantClass = lower(this.#options.class);
    const found: SourceDevice[] = [];
    for (const address of addresses) {
      const dir = join(this.#devicesDir, address);
      const [vendor, device, klass, numa] = await Promise.all([
        readTrimmed(join(dir, 'vendor')),
        readTrimmed(join(dir, 'device')),
        readTrimmed(join(dir, 'class')),
        readTrimmed(join(dir, 'numa_node')),
      ]);
      if (vendor === null || device === null) continue;
      if (wantVendor && vendor.toLowerCase() !== wantVendor) continue;
      if (wantDevices && !wantDevices.includes(device.toLowerCase())) continue;
      if (wantClass && !(klass ?? '').toLowerCase().startsWith(wantClass)) continue;
      if (this.#options.driver && (await linkName(join(dir, 'driver'))) !== this.#options.driver) continue;
      const numaNode = numa === null ? -1 : Number.parseInt(numa, 10);
      const iommuGroup = (await linkName(join(dir, 'iommu_group'))) ?? '';
      const pattern = this.#options.deviceNodePattern;
      found.push({
        id: address,
        health: 'Healthy',
        reason: null,
        numaNodes: Number.isInteger(numaNode) && numaNode >= 0 ? [numaNode] : [],
        deviceNodes: pattern
          ? [
              pattern
                .replaceAll('{address}', address)
                .replaceAll('{iommuGroup}', iommuGroup)
                .replaceAll('{vendor}', vendor)
                .replaceAll('{device}', device),
            ]
          : [],
      });
    }
    return found;
  }

  protected watchedDirs(): string[] {
    return [this.#devicesDir];
  }
}
