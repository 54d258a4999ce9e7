// The sysfs reader against small trees laid out like Linux's: NUMA nodes with cpulists and
// meminfo, SMT siblings, and the reasons it gives when the tree is missing or malformed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseKernelCpuList, readSysfsTopology } from './sysfs-topology.js';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pb-sysfs-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

test('cpulists', () => {
  const cases: [string, number[] | null][] = [
    ['0-3,8,10-11\n', [0, 1, 2, 3, 8, 10, 11]],
    ['7', [7]],
    ['', []],
    ['2-1', null],
    ['x', null],
  ];
  for (const [text, want] of cases) assert.deepEqual(parseKernelCpuList(text), want, JSON.stringify(text));
});

test('reads NUMA nodes, their CPUs and memory, and SMT siblings', () => {
  const root = tree({
    'devices/system/node/node0/cpulist': '0-3\n',
    'devices/system/node/node0/meminfo': 'Node 0 MemTotal:        1048576 kB\nNode 0 MemFree: 1 kB\n',
    'devices/system/node/node1/cpulist': '4-7\n',
    'devices/system/node/online': '0-1\n',
    'devices/system/cpu/cpu0/topology/thread_siblings_list': '0-1\n',
    'devices/system/cpu/cpu1/topology/thread_siblings_list': '0-1\n',
    'devices/system/cpu/cpu4/topology/thread_siblings_list': '4,6\n',
  });
  try {
    const r = readSysfsTopology(root);
    assert.equal(r.reason, null);
    const t = r.topology;
    assert.deepEqual(t.nodes, [
      { id: 0, cpuIds: [0, 1, 2, 3], memTotalBytes: 2 ** 30 },
      { id: 1, cpuIds: [4, 5, 6, 7], memTotalBytes: null },
    ]);
    assert.equal(t.numaOfCpu.get(6), 1);
    assert.deepEqual(t.siblings.get(1), [0, 1]);
    assert.deepEqual(t.siblings.get(4), [4, 6]);
    assert.equal(t.siblings.has(2), false, 'no topology directory: no known siblings');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a missing or malformed tree is a reason, not an error', () => {
  const missing = readSysfsTopology('/nonexistent/sys');
  assert.match(missing.reason ?? '', /^cannot read \/nonexistent\/sys\/devices\/system\/node: ENOENT$/);
  const bad = tree({ 'devices/system/node/node0/cpulist': 'zero\n' });
  const empty = tree({ 'devices/system/node/online': '\n' });
  try {
    assert.match(readSysfsTopology(bad).reason ?? '', /node0\/cpulist is missing or malformed$/);
    assert.match(readSysfsTopology(empty).reason ?? '', /^no NUMA nodes under /);
  } finally {
    rmSync(bad, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  }
});
