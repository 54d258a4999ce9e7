// A sysfs-style description of the simulated machine under `<stateDir>/sys`, laid out the way
// Linux exposes it (devices/system/node/node<N>/{cpulist,meminfo,hugepages}, devices/system/cpu/
// cpu<N>/topology/{thread_siblings_list,core_id,physical_package_id}, cpu<N>/node<M>, online lists). PodResources
// reports CPU IDs without their NUMA node, so a node agent learns the CPU↔NUMA mapping from sysfs
// on a real node; pointing it at this directory lets it do the same against the simulator.

import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HUGEPAGE_SIZES, formatCpuList, type HugepageResource, type NodeShape } from './node-shape.js';

/** Writes the fixture (replacing an old one) and returns its root, the stand-in for `/sys`. */
export function writeSysfs(stateDir: string, shape: NodeShape): string {
  const root = join(stateDir, 'sys');
  rmSync(root, { recursive: true, force: true });
  const nodeDir = join(root, 'devices', 'system', 'node');
  const cpuDir = join(root, 'devices', 'system', 'cpu');
  mkdirSync(nodeDir, { recursive: true });
  mkdirSync(cpuDir, { recursive: true });
  const ids = shape.numaNodes.map((n) => n.id);
  writeFileSync(join(nodeDir, 'online'), `${formatCpuList(ids)}\n`);
  writeFileSync(join(nodeDir, 'possible'), `${formatCpuList(ids)}\n`);
  for (const n of shape.numaNodes) {
    const dir = join(nodeDir, `node${n.id}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cpulist'), `${formatCpuList(n.cpus)}\n`);
    const hugeBytes = Object.values(n.hugepages).reduce((s, b) => s + b, 0);
    const kb = (bytes: number) => String(Math.floor(bytes / 1024)).padStart(8);
    const total = n.memoryBytes + hugeBytes;
    const pages2m = (n.hugepages['hugepages-2Mi'] ?? 0) / HUGEPAGE_SIZES['hugepages-2Mi'];
    writeFileSync(
      join(dir, 'meminfo'),
      [
        `Node ${n.id} MemTotal:       ${kb(total)} kB`,
        `Node ${n.id} MemFree:        ${kb(n.memoryBytes)} kB`,
        `Node ${n.id} MemUsed:        ${kb(hugeBytes)} kB`,
        `Node ${n.id} HugePages_Total: ${String(pages2m).padStart(5)}`,
        `Node ${n.id} HugePages_Free:  ${String(pages2m).padStart(5)}`,
        `Node ${n.id} HugePages_Surp:      0`,
        '',
      ].join('\n'),
    );
    for (const [name, page] of Object.entries(HUGEPAGE_SIZES) as [HugepageResource, number][]) {
      const hp = join(dir, 'hugepages', `hugepages-${page / 1024}kB`);
      mkdirSync(hp, { recursive: true });
      const count = (n.hugepages[name] ?? 0) / page;
      writeFileSync(join(hp, 'nr_hugepages'), `${count}\n`);
      writeFileSync(join(hp, 'free_hugepages'), `${count}\n`);
    }
  }
  const all = shape.cpus.map((c) => c.id);
  writeFileSync(join(cpuDir, 'online'), `${formatCpuList(all)}\n`);
  writeFileSync(join(cpuDir, 'possible'), `${formatCpuList(all)}\n`);
  for (const c of shape.cpus) {
    const dir = join(cpuDir, `cpu${c.id}`, 'topology');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'thread_siblings_list'), `${formatCpuList(c.siblings)}\n`);
    writeFileSync(join(dir, 'core_cpus_list'), `${formatCpuList(c.siblings)}\n`);
    writeFileSync(join(dir, 'core_id'), `${c.coreId}\n`);
    // One package (socket) per NUMA node in this model.
    writeFileSync(join(dir, 'physical_package_id'), `${c.numaNode}\n`);
    // As in Linux: cpu<N>/node<M> links to the CPU's NUMA node.
    symlinkSync(
      join('..', '..', 'node', `node${c.numaNode}`),
      join(cpuDir, `cpu${c.id}`, `node${c.numaNode}`),
    );
  }
  return root;
}
