// Kubelet restarts and registration retries against a test kubelet over real Unix sockets: the
// plugin notices its socket being deleted, kubelet.sock being re-created and its ListAndWatch
// stream being closed, then re-serves and re-registers in-process with its device state intact.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import {
  parsePluginConfig,
  startPlugins,
  type PluginRuntime,
  type ResourcePlugin,
  type ResourcePluginEvents,
} from '../src/index.js';
import { healthOf, TestKubelet } from './test-kubelet.js';

const GPU = 'plugboard.example/gpu';
const config = parsePluginConfig({ resources: [{ name: GPU, simulated: { count: 4, numaNodes: [0, 1] } }] });

describe('kubelet restarts', () => {
  let kubelet: TestKubelet | undefined;
  let runtime: PluginRuntime | undefined;

  afterEach(async () => {
    await runtime?.stop();
    await kubelet?.stop();
    runtime = undefined;
    kubelet = undefined;
  });

  async function start(
    options: { kubeletUp?: boolean } = {},
  ): Promise<{ k: TestKubelet; gpu: ResourcePlugin }> {
    kubelet = await TestKubelet.create({ start: options.kubeletUp ?? true });
    const registered = options.kubeletUp === false ? null : kubelet.nextRegistration(GPU);
    runtime = await startPlugins(config, {
      devicePluginDir: kubelet.dir,
      registrationRetry: { initialMs: 20, maxMs: 200 },
      restartPollIntervalMs: 200,
    });
    const gpu = runtime.resources.get(GPU)!;
    if (registered) {
      await registered;
      if (gpu.registration().phase !== 'registered') await once(gpu, 'registered');
    }
    return { k: kubelet, gpu };
  }

  it('retries Register until kubelet.sock appears', async () => {
    const { k, gpu } = await start({ kubeletUp: false });
    assert.equal(gpu.registration().phase, 'registering');
    const [failure] = (await once(gpu, 'registration-error')) as ResourcePluginEvents['registration-error'];
    assert.match(failure.error, /kubelet\.sock not found/);
    const registered = once(gpu, 'registered');
    await k.start();
    await registered;
    assert.equal(gpu.registration().phase, 'registered');
    assert.equal(gpu.registration().error, null);
    await k.waitForDevices(GPU, (d) => d.length === 4);
  });

  it('keeps retrying after the kubelet rejects Register, and reports the reason', async () => {
    kubelet = await TestKubelet.create();
    kubelet.rejectWith = 'Unsupported API version';
    runtime = await startPlugins(config, {
      devicePluginDir: kubelet.dir,
      registrationRetry: { initialMs: 20, maxMs: 50 },
    });
    const gpu = runtime.resources.get(GPU)!;
    const [failure] = (await once(gpu, 'registration-error')) as ResourcePluginEvents['registration-error'];
    assert.match(failure.error, /Unsupported API version/);
    assert.equal(gpu.registration().phase, 'failed');
    kubelet.rejectWith = null;
    await once(gpu, 'registered');
    assert.equal(gpu.registration().phase, 'registered');
  });

  it('re-serves and re-registers after the kubelet deletes the sockets; the stream resumes with the same state', async () => {
    const { k, gpu } = await start();
    gpu.injectFault('gpu-1', 'before restart');
    await k.waitForDevices(GPU, (d) => healthOf(d, 'gpu-1') === 'Unhealthy');
    const restart = once(gpu, 'kubelet-restart');
    const registered = k.nextRegistration(GPU);
    await k.restart();
    const [event] = (await restart) as ResourcePluginEvents['kubelet-restart'];
    assert.equal(event.detectedBy, 'socket-deleted');
    const registration = await registered;
    assert.equal(registration.socketExistedAtRegister, true);
    const devices = await k.waitForDevices(GPU, (d) => d.length === 4);
    assert.equal(healthOf(devices, 'gpu-1'), 'Unhealthy');
    if (gpu.registration().phase !== 'registered') await once(gpu, 'registered');
    assert.equal(gpu.registration().kubeletRestartsSeen, 1);
    // One server: exactly our socket and kubelet.sock in the directory, one open stream.
    assert.deepEqual((await readdir(k.dir)).sort(), ['kubelet.sock', 'plugboard.example-gpu.sock']);
    assert.equal(gpu.listAndWatchStreams, 1);
    // And it keeps working after the restart.
    gpu.clearFault('gpu-1');
    await k.waitForDevices(GPU, (d) => healthOf(d, 'gpu-1') === 'Healthy');
  });

  it('re-registers when only kubelet.sock is re-created', async () => {
    const { k, gpu } = await start();
    const restart = once(gpu, 'kubelet-restart');
    const registered = k.nextRegistration(GPU);
    await k.restart({ deleteSockets: false });
    const [event] = (await restart) as ResourcePluginEvents['kubelet-restart'];
    assert.equal(event.detectedBy, 'kubelet-sock-recreated');
    await registered;
    await k.waitForDevices(GPU, (d) => d.length === 4);
    assert.equal(gpu.registration().kubeletRestartsSeen, 1);
  });

  it('re-registers when the kubelet closes the ListAndWatch stream', async () => {
    const { k, gpu } = await start();
    const restart = once(gpu, 'kubelet-restart');
    const registered = k.nextRegistration(GPU);
    k.endpoint(GPU).stream.cancel();
    const [event] = (await restart) as ResourcePluginEvents['kubelet-restart'];
    assert.equal(event.detectedBy, 'stream-closed');
    await registered;
    await k.waitForDevices(GPU, (d) => d.length === 4);
  });

  it('survives two restarts in a row without duplicate servers', async () => {
    const { k, gpu } = await start();
    for (let i = 1; i <= 2; i++) {
      const registered = k.nextRegistration(GPU);
      await k.restart();
      await registered;
      if (gpu.registration().phase !== 'registered') await once(gpu, 'registered');
    }
    await k.waitForDevices(GPU, (d) => d.length === 4);
    assert.equal(gpu.registration().kubeletRestartsSeen, 2);
    assert.deepEqual((await readdir(k.dir)).sort(), ['kubelet.sock', 'plugboard.example-gpu.sock']);
  });
});
