// A device plugin's socket against a kubelet that dials it the way kubelets before 1.26 (grpc-go <
// 1.57) do: with the raw socket path as `:authority`. Node's HTTP/2 layer resets such a stream, and
// the plugin leaves it so unless asked (acceptRawPathAuthority, the CLI's
// --accept-raw-path-authority): then @plugboard/grpc-authority serves it as a grpc-go server would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect as http2Connect } from 'node:http2';
import { connect } from 'node:net';
import { parsePluginConfig, startPlugins, type PluginRuntime } from '../src/index.js';
import { TestKubelet } from './test-kubelet.js';

const GET_OPTIONS = '/v1beta1.DevicePlugin/GetDevicePluginOptions';

/** GetDevicePluginOptions as an old kubelet sends it: the socket path as :authority. */
async function callWithRawPath(socketPath: string): Promise<string> {
  const session = http2Connect('http://localhost', { createConnection: () => connect(socketPath) });
  session.on('error', () => undefined);
  try {
    const stream = session.request({
      ':method': 'POST',
      ':path': GET_OPTIONS,
      ':authority': socketPath,
      'content-type': 'application/grpc',
      te: 'trailers',
      'user-agent': 'grpc-go/1.33.0',
    });
    stream.on('error', () => undefined);
    stream.end(Buffer.alloc(5)); // an empty Empty message
    stream.resume();
    return await new Promise<string>((resolve) => {
      stream.on('trailers', (trailers: Record<string, unknown>) =>
        resolve(`grpc-status ${String(trailers['grpc-status'])}`),
      );
      stream.on('close', () => resolve(`RST_STREAM ${stream.rstCode}`));
    });
  } finally {
    session.destroy();
  }
}

describe('a kubelet that sends the socket path as :authority', () => {
  let kubelet: TestKubelet;
  const runtimes: PluginRuntime[] = [];
  before(async () => {
    kubelet = await TestKubelet.create();
  });
  after(async () => {
    for (const r of runtimes) await r.stop();
    await kubelet.stop();
  });

  async function start(name: string, acceptRawPathAuthority?: boolean): Promise<string> {
    const config = parsePluginConfig({ resources: [{ name, simulated: { count: 1 } }] });
    const runtime = await startPlugins(config, {
      devicePluginDir: kubelet.dir,
      ...(acceptRawPathAuthority !== undefined ? { acceptRawPathAuthority } : {}),
    });
    runtimes.push(runtime);
    return runtime.resources.get(name)!.socketPath;
  }

  it('is reset by default (PROTOCOL_ERROR), as by any Node gRPC server', async () => {
    const socketPath = await start('plugboard.example/default');
    assert.equal(await callWithRawPath(socketPath), 'RST_STREAM 1');
  });

  it('is served with acceptRawPathAuthority', async () => {
    const socketPath = await start('plugboard.example/raw-path', true);
    assert.equal(await callWithRawPath(socketPath), 'grpc-status 0');
  });
});
