import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { segmentRegExp } from './glob.js';

describe('device-node glob segments', () => {
  const table: [pattern: string, matches: string[], rejects: string[]][] = [
    ['ttyUSB*', ['ttyUSB0', 'ttyUSB12', 'ttyUSB'], ['ttyS0', 'xttyUSB0']],
    ['nvidia?', ['nvidia0', 'nvidia7'], ['nvidia10', 'nvidiactl']],
    ['nvidia[0-9]', ['nvidia3'], ['nvidiactl']],
    ['video[!0]', ['video1'], ['video0']],
    ['{fuse,kvm}', ['fuse', 'kvm'], ['fusex', 'tun']],
    ['renderD12.', ['renderD12.'], ['renderD128']],
    ['a+b(c)', ['a+b(c)'], ['aab(c)']],
  ];
  for (const [pattern, yes, no] of table) {
    it(pattern, () => {
      const re = segmentRegExp(pattern);
      for (const name of yes) assert.ok(re.test(name), `${pattern} should match ${name}`);
      for (const name of no) assert.ok(!re.test(name), `${pattern} should not match ${name}`);
    });
  }
});
