import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UNIX_SOCKET_PATH_MAX_BYTES } from '@plugboard/proto';
import { DRIVER_NAME_ROOM_BYTES, nodeSocketPathProblem } from './node.js';

describe('nodeSocketPathProblem', () => {
  // <dir>/nodes/<node>/kubelet/plugins_registry/<driver>-reg.sock, with room for the driver's name.
  const overhead = (node: string): number =>
    `/nodes/${node}/kubelet/plugins_registry/`.length + DRIVER_NAME_ROOM_BYTES + '-reg.sock'.length;

  it('accepts a directory whose longest socket path fits exactly, and refuses one byte more', () => {
    const fits = '/' + 'd'.repeat(UNIX_SOCKET_PATH_MAX_BYTES - overhead('node-1') - 1);
    assert.equal(nodeSocketPathProblem(fits, 'node-1'), null);
    const problem = nodeSocketPathProblem(`${fits}x`, 'node-1');
    assert.ok(problem);
    assert.match(problem, /^--dir \/d+x is too long for node node-1's sockets/);
    assert.match(problem, /plugins_registry\/<driver>-reg\.sock/);
    assert.match(problem, /leaves 20 bytes for the driver's name \(21 needed\): use a shorter --dir/);
  });

  it('counts the node name and bytes, not characters', () => {
    const dir = '/tmp/pb-real-cluster-abcdef';
    assert.equal(nodeSocketPathProblem(dir, 'dra-1a2b3c'), null);
    assert.ok(nodeSocketPathProblem(dir, 'a-much-longer-node-name-than-the-test-bed-uses'));
    const multibyte = '/tmp/' + 'é'.repeat(14); // 28 bytes, 19 characters
    assert.equal(nodeSocketPathProblem('/tmp/' + 'e'.repeat(14), 'dra-1a2b3c'), null);
    assert.ok(nodeSocketPathProblem(multibyte + '/longer', 'dra-1a2b3c'));
  });
});
