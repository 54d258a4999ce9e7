// Builds one ContainerAllocateResponse from the resource's allocation template: env, device specs
// (each device's own nodes plus static ones), mounts, annotations and fully qualified CDI names.
import type { deviceplugin } from '@plugboard/proto';
import type { PluginDevice } from '../types.js';
import { compileTemplate, type CompiledTemplate, type TemplateValues } from './template.js';

export interface DeviceSpecTemplate {
  hostPath: string;
  containerPath?: string;
  permissions?: string;
}

export interface MountTemplate {
  hostPath: string;
  containerPath: string;
  readOnly?: boolean;
}

export interface CdiOptions {
  /** Write a CDI spec and return CDI names from Allocate. */
  enabled: boolean;
  vendor: string;
  class: string;
  /** Where the spec file is written; default /var/run/cdi. */
  specDir?: string;
}

export interface AllocateTemplate {
  /** Env vars; values may use {{ids}}, {{physicalIds}}, {{count}}, {{resource}}, {{deviceNodes}}. */
  env?: Record<string, string>;
  /** Hand each allocated device's own device nodes to the container (default true). */
  deviceNodes?: boolean;
  /** cgroup permissions for those nodes (default "rw"). */
  deviceNodePermissions?: string;
  /** Extra device specs added to every allocation (templated). */
  devices?: DeviceSpecTemplate[];
  mounts?: MountTemplate[];
  annotations?: Record<string, string>;
  cdi?: CdiOptions;
}

export const DEFAULT_ENV: Record<string, string> = { PLUGBOARD_VISIBLE_DEVICES: '{{physicalIds}}' };

type Compiled<T> = { [K in keyof T]: T[K] extends string ? CompiledTemplate : T[K] };

function compileMap(map: Record<string, string>): [string, CompiledTemplate][] {
  return Object.entries(map).map(([k, v]) => [k, compileTemplate(v)]);
}

export type AllocateResponseBuilder = (
  devices: readonly PluginDevice[],
) => deviceplugin.ContainerAllocateResponse;

/** Compiles the template once; the returned function builds a response per container request. */
export function allocateResponseBuilder(
  resourceName: string,
  template: AllocateTemplate = {},
): AllocateResponseBuilder {
  const env = compileMap(template.env ?? DEFAULT_ENV);
  const annotations = compileMap(template.annotations ?? {});
  const devices: Compiled<Required<DeviceSpecTemplate>>[] = (template.devices ?? []).map((d) => ({
    hostPath: compileTemplate(d.hostPath),
    containerPath: compileTemplate(d.containerPath ?? d.hostPath),
    permissions: compileTemplate(d.permissions ?? 'rw'),
  }));
  const mounts = (template.mounts ?? []).map((m) => ({
    hostPath: compileTemplate(m.hostPath),
    containerPath: compileTemplate(m.containerPath),
    readOnly: m.readOnly ?? false,
  }));
  const withDeviceNodes = template.deviceNodes ?? true;
  const nodePermissions = template.deviceNodePermissions ?? 'rw';
  const cdi = template.cdi?.enabled ? `${template.cdi.vendor}/${template.cdi.class}=` : null;

  return (allocated) => {
    const physical = [...new Set(allocated.map((d) => d.replicaOf ?? d.id))];
    const nodes = [...new Set(allocated.flatMap((d) => d.deviceNodes))];
    const values: TemplateValues = {
      ids: allocated.map((d) => d.id).join(','),
      physicalIds: physical.join(','),
      count: String(allocated.length),
      resource: resourceName,
      deviceNodes: nodes.join(','),
    };
    const response: deviceplugin.ContainerAllocateResponse = {
      envs: {},
      mounts: mounts.map((m) => ({
        hostPath: m.hostPath(values),
        containerPath: m.containerPath(values),
        readOnly: m.readOnly,
      })),
      devices: [
        ...(withDeviceNodes
          ? nodes.map((path) => ({ hostPath: path, containerPath: path, permissions: nodePermissions }))
          : []),
        ...devices.map((d) => ({
          hostPath: d.hostPath(values),
          containerPath: d.containerPath(values),
          permissions: d.permissions(values),
        })),
      ],
      annotations: {},
      cdiDevices: cdi === null ? [] : physical.map((id) => ({ name: cdi + id })),
    };
    for (const [k, v] of env) response.envs[k] = v(values);
    for (const [k, v] of annotations) response.annotations[k] = v(values);
    return response;
  };
}
