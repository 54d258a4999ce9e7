// The topology input the node model is built from, kept current: the host's NUMA layout (read once
// from sysfs), the kubelet's resource-manager settings and admission decisions (from the kubelet
// topology source, when there is one) and the plugins' recent preferred-allocation answers.
import type { Logger } from 'pino';
import type { NodeModel } from './node-model.js';
import type { KubeletControlState, PreferredRecord, TopologyInput } from './topology.js';
import { readSysfsTopology } from '../sources/sysfs-topology.js';

/** Preferred-allocation answers kept for "why here?" (newest win; older ones are forgotten). */
const MAX_PREFERRED_RECORDS = 256;

export class TopologyState {
  private input: TopologyInput;

  /** Reads the host layout from sysfs and hands the first topology to the model. */
  constructor(
    private readonly model: Pick<NodeModel, 'setTopology'>,
    options: { sysfsRoot: string; kubeletReason: string; logger: Logger },
  ) {
    const sysfs = readSysfsTopology(options.sysfsRoot);
    if (sysfs.reason) {
      options.logger.warn(
        { sysfsRoot: options.sysfsRoot, reason: sysfs.reason },
        'NUMA layout unknown: exclusive CPUs cannot be placed on NUMA nodes',
      );
    }
    this.input = {
      sysfsRoot: options.sysfsRoot,
      host: sysfs.topology,
      hostReason: sysfs.reason,
      kubelet: null,
      kubeletReason: options.kubeletReason,
      preferred: [],
    };
    model.setTopology(this.input);
  }

  /** The kubelet's settings and admissions, or null with the reason they are unknown. */
  setKubelet(kubelet: KubeletControlState | null, reason: string | null): void {
    this.set({ kubelet, kubeletReason: reason });
  }

  recordPreferred(record: PreferredRecord): void {
    this.set({ preferred: [...this.input.preferred.slice(-(MAX_PREFERRED_RECORDS - 1)), record] });
  }

  private set(patch: Partial<TopologyInput>): void {
    this.input = { ...this.input, ...patch };
    this.model.setTopology(this.input);
  }
}
