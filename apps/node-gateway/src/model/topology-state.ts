// The topology input the node model is built from, kept current: the host's NUMA layout (read once
// from sysfs), the kubelet's resource-manager settings (its configz; kubelet-sim's control API when
// configz cannot be read), the admission decisions and the admit path (kubelet-sim's control API
// only) and the plugins' recent preferred-allocation answers. "Try to place" reads the same input.
import type { Logger } from 'pino';
import type { NodeModel } from './node-model.js';
import type { KubeletControlState, KubeletSettings, PreferredRecord, TopologyInput } from './topology.js';
import { readSysfsTopology } from '../sources/sysfs-topology.js';

/** Preferred-allocation answers kept for "why here?" (newest win; older ones are forgotten). */
const MAX_PREFERRED_RECORDS = 256;

export interface TopologyStateOptions {
  sysfsRoot: string;
  /** Why the kubelet's settings are unknown until a source answers (or for good, without one). */
  configzReason: string;
  /** Why admitting a previewed pod is not possible until kubelet-sim's control API answers. */
  controlReason: string;
  /** Why "try to place" cannot predict at all (PodResources turned off), else null. */
  predictionBlocked: string | null;
  logger: Logger;
}

export class TopologyState {
  private input: TopologyInput;
  private configz: { settings: KubeletSettings | null; reason: string | null };
  private control: { state: KubeletControlState | null; reason: string | null };

  /** Reads the host layout from sysfs and hands the first topology to the model. */
  constructor(
    private readonly model: Pick<NodeModel, 'setTopology'>,
    options: TopologyStateOptions,
  ) {
    const sysfs = readSysfsTopology(options.sysfsRoot);
    if (sysfs.reason) {
      options.logger.warn(
        { sysfsRoot: options.sysfsRoot, reason: sysfs.reason },
        'NUMA layout unknown: exclusive CPUs cannot be placed on NUMA nodes',
      );
    }
    this.configz = { settings: null, reason: options.configzReason };
    this.control = { state: null, reason: options.controlReason };
    this.input = {
      sysfsRoot: options.sysfsRoot,
      host: sysfs.topology,
      hostReason: sysfs.reason,
      kubelet: null,
      kubeletReason: options.configzReason,
      admissions: new Map(),
      predictionBlocked: options.predictionBlocked,
      admit: { available: false, reason: options.controlReason },
      preferred: [],
    };
    model.setTopology(this.input);
  }

  /** The input as it stands (what "try to place" predicts with). */
  current(): TopologyInput {
    return this.input;
  }

  /** The kubelet's settings from its configz, or null with the reason they could not be read. */
  setConfigz(settings: KubeletSettings | null, reason: string | null): void {
    this.configz = { settings, reason };
    this.update();
  }

  /** kubelet-sim's control API: settings and admissions, or null with the reason it is not there. */
  setControl(state: KubeletControlState | null, reason: string | null): void {
    this.control = { state, reason };
    this.update();
  }

  recordPreferred(record: PreferredRecord): void {
    this.set({ preferred: [...this.input.preferred.slice(-(MAX_PREFERRED_RECORDS - 1)), record] });
  }

  private update(): void {
    const c = this.control.state;
    const fromControl: KubeletSettings | null = c && {
      source: 'kubelet-sim',
      topologyManagerPolicy: c.topologyManagerPolicy,
      topologyManagerScope: c.topologyManagerScope,
      cpuManagerPolicy: c.cpuManagerPolicy,
      memoryManagerPolicy: c.memoryManagerPolicy,
      reservedCpuIds: c.reservedCpuIds,
    };
    const kubelet = this.configz.settings ?? fromControl;
    this.set({
      kubelet,
      kubeletReason: kubelet ? null : this.configz.reason,
      admissions: c?.admissions ?? new Map(),
      admit: c
        ? { available: true, reason: null }
        : { available: false, reason: this.control.reason ?? 'no kubelet-sim control API' },
    });
  }

  private set(patch: Partial<TopologyInput>): void {
    this.input = { ...this.input, ...patch };
    this.model.setTopology(this.input);
  }
}
