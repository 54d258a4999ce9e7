// `npm run test:images`: builds both images (deploy/images/build.ts, the same code as `npm run
// images`) and checks them as an operator would use them. Named *.check.ts so that `npm test` does
// not pick it up (it needs root, buildah, containerd and podman: .ci/run installs them).
//
//  - the archives: one OCI layout each, named for containerd and podman; `ctr images import` (what
//    `kind load image-archive` and `k3s ctr images import` run) and `podman load` take them;
//  - the gateway image runs as the rendered DaemonSet starts it — its args, env, volume mounts,
//    root user with every capability dropped, read-only root — against a kubelet-sim on the host
//    through the mounted directories, and talks to the "API server" in-cluster (service-account
//    token and CA at the standard path, KUBERNETES_SERVICE_HOST/PORT; kubelet-sim's API slice behind
//    a TLS proxy); it registers its plugins and answers /readyz;
//  - the web image runs as the rendered Deployment starts it (user 65532, read-only root, its
//    emptyDirs), serves / and proxies the gateway above;
//  - non-root users, no shell and no package manager in the gateway image, labels;
//  - the gateway's RSS in its image at 1,024 devices / 250 pods beside the same bundle run outside
//    by the same node binary (dist/images/rss.json; docs/BENCHMARKS.md "Container images").
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createNetServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { startKubeletSim, type KubeletSim } from '@plugboard/kubelet-sim';
import { buildImages, imagesDir, sizes, type BuiltImage, type ImagesReport } from '../images/build.js';
import { WorkingContainer, type ContainerProcess, type Volume } from '../images/container.js';
import { capture } from '../images/exec.js';
import { CONTAINERD_NAME, OCI_REF_NAME } from '../images/oci-archive.js';
import { NONROOT } from '../images/pins.js';
import { asArray, at, chartDir, isObject, only, render, repoRoot, type K8sObject } from './helm.js';

const NODE_NAME = 'image-node';
const NAMESPACE = 'plugboard';
const GPU = 'plugboard.example/gpu';

let report: ImagesReport;
const image = (component: 'gateway' | 'web'): BuiltImage => {
  const found = report.images.find((i) => i.component === component);
  assert.ok(found, `${component} was built`);
  return found;
};

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls until `check` returns a value (not null/undefined/false), or fails after `ms`. */
async function waitFor<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  ms: number,
  proc?: ContainerProcess,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: string | undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== null && value !== undefined && value !== false) return value;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (proc && proc.child.exitCode !== null) {
      throw new Error(
        `${what}: the container exited (${proc.child.exitCode}) first:\n${proc.output().slice(-3000)}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: not within ${ms} ms${last ? ` (last error: ${last})` : ''}${proc ? `\n${proc.output().slice(-3000)}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Kubernetes' $(VAR) expansion of container args (unknown variables stay as written). */
function expand(arg: string, env: Record<string, string>): string {
  return arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string | undefined) =>
    m === '$$' ? '$' : name !== undefined && name in env ? env[name]! : m,
  );
}

interface PodContainer {
  args: string[];
  env: Record<string, string>;
  user: string | null;
  readOnlyRoot: boolean;
  capDrop: string[];
  volumes: Volume[];
}

/**
 * The container of a rendered pod template as a `buildah run` needs it: env (fieldRefs resolved as the
 * kubelet would), args with $(VAR) expanded, user, read-only root, dropped capabilities, and each
 * volume mount turned into a host directory under `dir` (hostPaths mapped by `hostPaths`, ConfigMap
 * and Secret contents written out, emptyDirs made), owned per the pod's fsGroup.
 */
function podContainer(
  workload: K8sObject,
  objects: K8sObject[],
  dir: string,
  hostPaths: Record<string, string>,
): PodContainer {
  const pod = at(workload, 'spec', 'template', 'spec');
  const container = asArray(at(pod, 'containers'))[0];
  const fieldRefs: Record<string, string> = { 'spec.nodeName': NODE_NAME, 'metadata.namespace': NAMESPACE };
  const env: Record<string, string> = {};
  for (const e of asArray(at(container, 'env'))) {
    const name = String(at(e, 'name'));
    const value = at(e, 'value');
    const fieldPath = at(e, 'valueFrom', 'fieldRef', 'fieldPath');
    if (typeof value === 'string') env[name] = expand(value, env);
    else if (typeof fieldPath === 'string' && fieldPath in fieldRefs) env[name] = fieldRefs[fieldPath]!;
    else throw new Error(`env ${name}: no value this test can give`);
  }
  const podSc = at(pod, 'securityContext');
  const sc = at(container, 'securityContext');
  const uid = at(sc, 'runAsUser') ?? at(podSc, 'runAsUser');
  const gid = at(sc, 'runAsGroup') ?? at(podSc, 'runAsGroup') ?? uid;
  const fsGroup = at(podSc, 'fsGroup');
  const volumesByName = new Map(asArray(at(pod, 'volumes')).map((v) => [String(at(v, 'name')), v]));
  const volumes: Volume[] = [];
  for (const mount of asArray(at(container, 'volumeMounts'))) {
    const name = String(at(mount, 'name'));
    const volume = volumesByName.get(name);
    assert.ok(volume, `volume ${name} is declared`);
    let host: string;
    const hostPath = at(volume, 'hostPath', 'path');
    const configMap = at(volume, 'configMap', 'name');
    const secret = at(volume, 'secret', 'secretName');
    if (typeof hostPath === 'string') {
      assert.ok(hostPath in hostPaths, `hostPath ${hostPath} has a test directory`);
      host = hostPaths[hostPath]!;
    } else if (typeof configMap === 'string' || typeof secret === 'string') {
      host = join(dir, 'volumes', name);
      mkdirSync(host, { recursive: true });
      const source = objects.find(
        (o) => o.kind === (configMap ? 'ConfigMap' : 'Secret') && o.metadata.name === (configMap ?? secret),
      );
      assert.ok(source, `${String(configMap ?? secret)} is rendered`);
      for (const [key, text] of Object.entries((source.data ?? {}) as Record<string, string>)) {
        writeFileSync(join(host, key), secret ? Buffer.from(text, 'base64') : text);
        const mode = at(volume, 'secret', 'defaultMode') ?? at(volume, 'configMap', 'defaultMode') ?? 0o644;
        chmodSync(join(host, key), Number(mode));
      }
    } else if (isObject(at(volume, 'emptyDir'))) {
      host = join(dir, 'volumes', name);
      mkdirSync(host, { recursive: true });
      if (typeof fsGroup === 'number') {
        chownSync(host, 0, fsGroup);
        chmodSync(host, 0o2775);
      }
    } else {
      throw new Error(`volume ${name}: a kind this test does not map`);
    }
    const subPath = at(mount, 'subPath');
    if (typeof subPath === 'string') host = join(host, subPath);
    volumes.push({
      host,
      container: String(at(mount, 'mountPath')),
      readOnly: at(mount, 'readOnly') === true,
    });
  }
  return {
    args: asArray(at(container, 'args')).map((a) => expand(String(a), env)),
    env,
    user: typeof uid === 'number' ? `${uid}:${typeof gid === 'number' ? gid : uid}` : null,
    readOnlyRoot: at(sc, 'readOnlyRootFilesystem') === true,
    capDrop: asArray(at(sc, 'capabilities', 'drop')).map(String),
    volumes,
  };
}

/** kubelet-sim's plain-HTTP API slice behind TLS, as in-cluster clients need (https, the pod's CA). */
async function tlsProxy(
  dir: string,
  target: string,
): Promise<{ port: number; ca: string; connections: () => number; close: () => Promise<void> }> {
  const key = join(dir, 'apiserver.key');
  const cert = join(dir, 'apiserver.crt');
  capture('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=kubernetes',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  const { hostname, port: targetPort } = new URL(target);
  let count = 0;
  const server: TlsServer = createTlsServer(
    { key: readFileSync(key), cert: readFileSync(cert) },
    (socket) => {
      count++;
      const upstream = connect(Number(targetPort), hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ca: readFileSync(cert, 'utf8'),
    connections: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}

/** Sends SIGTERM to the container's process, as the kubelet stops a container, and waits for its exit. */
async function stopContainer(proc: ContainerProcess, pid: number | null): Promise<number | null> {
  if (proc.child.exitCode !== null) return proc.child.exitCode;
  if (pid !== null) process.kill(pid, 'SIGTERM');
  else proc.child.kill('SIGTERM');
  return proc.exited;
}

const MB = (bytes: number) => Math.round(bytes / 1e5) / 10;

before(
  async () => {
    report = await buildImages();
  },
  { timeout: 60 * 60_000 },
);

describe('image archives (dist/images/*.tar)', () => {
  it('are OCI layouts whose index names the image for containerd and for podman', () => {
    for (const built of report.images) {
      const archive = join(repoRoot, built.archive);
      const listing = capture('tar', ['-tf', archive]).split('\n');
      assert.ok(
        listing.includes('oci-layout') && listing.includes('index.json'),
        `${built.archive} is an OCI layout`,
      );
      const index = JSON.parse(capture('tar', ['-xOf', archive, 'index.json'])) as {
        manifests: { annotations?: Record<string, string> }[];
      };
      assert.equal(index.manifests.length, 1);
      assert.equal(index.manifests[0]!.annotations?.[CONTAINERD_NAME], built.name);
      assert.equal(index.manifests[0]!.annotations?.[OCI_REF_NAME], built.name);
      assert.match(built.name, /^docker\.io\/plugboard\/(gateway|web):\d+\.\d+\.\d+/);
      const inspected = JSON.parse(capture('skopeo', ['inspect', `oci-archive:${archive}`])) as {
        Digest: string;
      };
      assert.equal(inspected.Digest, built.manifestDigest, 'skopeo reads the same manifest');
    }
  });

  it('`ctr images import` takes them under their chart names, as kind and k3s run it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugboard-containerd-'));
    const address = join(dir, 'containerd.sock');
    writeFileSync(
      join(dir, 'config.toml'),
      `version = 2\nroot = "${dir}/root"\nstate = "${dir}/state"\n` +
        `disabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "${address}"\n`,
    );
    const containerd: ChildProcess = spawn('containerd', ['--config', join(dir, 'config.toml')], {
      stdio: 'ignore',
    });
    try {
      await waitFor(
        'containerd',
        () =>
          Promise.resolve(
            existsSync(address) && spawnSync('ctr', ['--address', address, 'version']).status === 0,
          ),
        30_000,
      );
      const ctr = (...args: string[]) =>
        capture('ctr', ['--address', address, '--namespace', 'k8s.io', ...args]);
      const [gateway, web] = [image('gateway'), image('web')];
      // kind load image-archive: `ctr --namespace=k8s.io images import --all-platforms --digests --snapshotter=… -`
      const kind = spawnSync(
        'ctr',
        [
          '--address',
          address,
          '--namespace',
          'k8s.io',
          'images',
          'import',
          '--all-platforms',
          '--digests',
          '--snapshotter',
          'overlayfs',
          '-',
        ],
        { input: readFileSync(join(repoRoot, gateway.archive)), encoding: 'utf8', maxBuffer: 64 << 20 },
      );
      assert.equal(kind.status, 0, kind.stderr);
      // k3s ctr images import FILE
      ctr('images', 'import', join(repoRoot, web.archive));
      const names = ctr('images', 'ls', '--quiet').split('\n');
      for (const built of [gateway, web])
        assert.ok(names.includes(built.name), `${built.name} in ${names.join(', ')}`);
      // Imported and unpacked: the image's layers are in the snapshotter.
      assert.match(ctr('images', 'check', `name==${gateway.name}`), /complete/);
    } finally {
      containerd.kill('SIGTERM');
      await new Promise((resolve) => containerd.once('exit', resolve));
      spawnSync('umount', ['-R', join(dir, 'root')], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('`podman load` takes them under their chart names', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugboard-podman-'));
    const podman = (...args: string[]) =>
      capture('podman', [
        '--root',
        join(dir, 'root'),
        '--runroot',
        join(dir, 'run'),
        '--storage-driver',
        'vfs',
        ...args,
      ]);
    try {
      for (const built of report.images) {
        const out = podman('load', '--input', join(repoRoot, built.archive));
        assert.match(out, new RegExp(`Loaded image: ${built.name.replace(/[.]/g, '\\.')}`));
      }
      const names = podman('images', '--format', '{{.Repository}}:{{.Tag}}').split('\n');
      for (const built of report.images) assert.ok(names.includes(built.name), names.join(', '));
    } finally {
      spawnSync('umount', ['-R', join(dir, 'root')], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('image contents', () => {
  it('label both images with title, description, licence, version and revision', () => {
    for (const built of report.images) {
      const labels = built.config.config.Labels ?? {};
      assert.equal(labels['org.opencontainers.image.title'], `plugboard-${built.component}`);
      assert.ok(labels['org.opencontainers.image.description']);
      assert.equal(labels['org.opencontainers.image.licenses'], 'Apache-2.0');
      assert.match(labels['org.opencontainers.image.version'] ?? '', /^\d+\.\d+\.\d+/);
      assert.match(labels['org.opencontainers.image.revision'] ?? '', /^[0-9a-f]{40}$/);
    }
  });

  it('run as the non-root user 65532 by default, node from /nodejs/bin', () => {
    for (const built of report.images) {
      assert.equal(built.config.config.User, `${NONROOT.uid}:${NONROOT.uid}`);
      assert.equal(built.config.config.Entrypoint?.[0], '/nodejs/bin/node');
    }
  });

  it('the gateway image has no shell, no package manager and no node_modules', () => {
    const ctr = new WorkingContainer(image('gateway').name);
    try {
      const root = ctr.mountPoint;
      /** Present as any kind of entry, a dangling symlink included. */
      const exists = (p: string) => {
        try {
          lstatSync(join(root, p));
          return true;
        } catch {
          return false;
        }
      };
      for (const path of [
        'bin/sh',
        'usr/bin/sh',
        'bin/bash',
        'bin/dash',
        'bin/busybox',
        'usr/bin/apt',
        'usr/bin/dpkg',
        'usr/bin/env',
        'bin/ls',
      ])
        assert.equal(exists(path), false, `/${path} is absent`);
      assert.ok(existsSync(join(root, 'nodejs/bin/node')), '/nodejs/bin/node is there');
      assert.ok(existsSync(join(root, 'app/plugboard-gateway.mjs')), 'the bundle is there');
      assert.equal(existsSync(join(root, 'app/node_modules')), false);
      const passwd = readFileSync(join(root, 'etc/passwd'), 'utf8');
      assert.match(passwd, new RegExp(`^${NONROOT.name}:x:${NONROOT.uid}:${NONROOT.uid}:`, 'm'));
    } finally {
      ctr.remove();
    }
  });

  it('each adds at most 20 MB (compressed) to its Node runtime base layers', () => {
    for (const built of report.images) {
      const s = sizes(built);
      assert.ok(
        s.added.compressed <= 20e6,
        `${built.component} adds ${MB(s.added.compressed)} MB compressed`,
      );
    }
  });
});

describe('the images run as the chart runs them', () => {
  let dir: string;
  let sim: KubeletSim;
  let proxy: Awaited<ReturnType<typeof tlsProxy>>;
  let objects: K8sObject[];
  let gatewayCtr: WorkingContainer;
  let gateway: ContainerProcess;
  let gatewayPid: number | null = null;
  let gatewayUrl: string;
  let gatewayStop: number | null | undefined;
  let webCtr: WorkingContainer | undefined;
  let web: ContainerProcess | undefined;
  let webPid: number | null = null;
  let webUrl: string;
  let spec: PodContainer;

  before(
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'plugboard-images-'));
      const [gatewayPort, webPort] = [await freePort(), await freePort()];
      // The chart's default gateway is an observer; its simulated-GPU example gives it a plugin of
      // its own, whose registration with the kubelet this suite follows through the image.
      objects = render({
        valuesFiles: [join(chartDir, 'examples/simulated-gpus.values.yaml')],
        values: { gateway: { port: gatewayPort }, web: { port: webPort } },
      });
      const hostPaths = {
        '/var/lib/kubelet/device-plugins': join(dir, 'device-plugins'),
        '/var/lib/kubelet/pod-resources': join(dir, 'pod-resources'),
        '/var/lib/plugboard': join(dir, 'state'),
      };
      for (const path of Object.values(hostPaths)) mkdirSync(path, { recursive: true });
      sim = await startKubeletSim({
        devicePluginDir: hostPaths['/var/lib/kubelet/device-plugins'],
        podResourcesSocket: join(hostPaths['/var/lib/kubelet/pod-resources'], 'kubelet.sock'),
        stateDir: join(dir, 'kubelet'),
        nodeName: NODE_NAME,
      });
      proxy = await tlsProxy(dir, sim.url);
      // What a pod with automountServiceAccountToken gets, and the variables the kubelet always sets.
      const serviceAccount = join(dir, 'serviceaccount');
      mkdirSync(serviceAccount);
      writeFileSync(join(serviceAccount, 'token'), 'image-test-token');
      writeFileSync(join(serviceAccount, 'ca.crt'), proxy.ca);
      writeFileSync(join(serviceAccount, 'namespace'), NAMESPACE);
      const ds = only(objects, 'DaemonSet', '-gateway');
      assert.equal(at(ds, 'spec', 'template', 'spec', 'automountServiceAccountToken'), true);
      spec = podContainer(ds, objects, dir, hostPaths);
      gatewayCtr = new WorkingContainer(image('gateway').name);
      gateway = gatewayCtr.start([...(image('gateway').config.config.Entrypoint ?? []), ...spec.args], {
        ...(spec.user ? { user: spec.user } : {}),
        env: {
          ...spec.env,
          KUBERNETES_SERVICE_HOST: '127.0.0.1',
          KUBERNETES_SERVICE_PORT: String(proxy.port),
        },
        volumes: [
          ...spec.volumes,
          {
            host: serviceAccount,
            container: '/var/run/secrets/kubernetes.io/serviceaccount',
            readOnly: true,
          },
        ],
        readOnlyRoot: spec.readOnlyRoot,
        capDrop: spec.capDrop,
      });
      gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
      await waitFor(
        'gateway /readyz',
        async () => (await fetch(`${gatewayUrl}/readyz`)).status === 200,
        60_000,
        gateway,
      );
      gatewayPid = gateway.findPid('/nodejs/bin/node');
    },
    { timeout: 5 * 60_000 },
  );

  after(async () => {
    if (web) await stopContainer(web, webPid);
    webCtr?.remove();
    if (gateway && gatewayStop === undefined) await stopContainer(gateway, gatewayPid);
    gatewayCtr?.remove();
    await proxy?.close();
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the gateway runs as the DaemonSet says: root without capabilities, read-only root, its args', () => {
    assert.equal(spec.user, '0:0', 'the chart runs the gateway as root (kubelet directories)');
    assert.deepEqual(spec.capDrop, ['ALL']);
    assert.equal(spec.readOnlyRoot, true);
    assert.ok(spec.args.includes('--in-cluster'));
    assert.ok(spec.args.includes(`--node-name=${NODE_NAME}`), 'NODE_NAME from the downward API');
    assert.ok(gatewayPid, 'the gateway process is found');
    const status = readFileSync(`/proc/${gatewayPid}/status`, 'utf8');
    assert.match(status, /^Uid:\s+0\s/m);
    assert.match(status, /^CapEff:\s+0+$/m, 'no effective capabilities');
    const rootMount = readFileSync(`/proc/${gatewayPid}/mountinfo`, 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === '/');
    assert.match(rootMount ?? '', /^\S+ \S+ \S+ \S+ \/ ro[, ]/, `root is mounted read-only: ${rootMount}`);
    const env = readFileSync(`/proc/${gatewayPid}/environ`, 'utf8').split('\0');
    for (const name of ['NODE_OPTIONS', 'MALLOC_ARENA_MAX', 'NODE_NAME', 'POD_NAMESPACE'])
      assert.ok(env.includes(`${name}=${spec.env[name]}`), `${name} as rendered`);
  });

  it('registers every resource of the chart config with the kubelet and answers /readyz', async () => {
    const state = sim.state();
    assert.ok(state.resources[GPU], `${GPU} registered with kubelet-sim`);
    const res = await fetch(`${gatewayUrl}/readyz`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /all plugins registered/);
    assert.ok(
      readdirSync(join(dir, 'device-plugins')).some((f) => f.endsWith('.sock') && f !== 'kubelet.sock'),
      'plugin sockets in the mounted directory',
    );
  });

  it('reads PodResources through the mounted directory and the API server in-cluster', async () => {
    const sources = await waitFor(
      'PodResources and Kubernetes sources ok',
      async () => {
        const { body } = await getJson<{ sources: Record<string, { status: string }> }>(
          `${gatewayUrl}/api/v1/node`,
        );
        const { podResources, kubernetes } = body.sources;
        return podResources?.status === 'ok' && kubernetes?.status === 'ok' ? body.sources : null;
      },
      30_000,
      gateway,
    );
    assert.ok(sources);
    assert.ok(proxy.connections() > 0, 'the gateway reached the API server over TLS');
  });

  it('the web image serves / and proxies the gateway, as the Deployment runs it', async () => {
    const deployment = only(objects, 'Deployment', '-web');
    const webSpec = podContainer(deployment, objects, dir, {});
    // No pod network here: the chart's kubernetes discovery becomes a static entry for the one gateway.
    const env: Record<string, string> = {
      ...webSpec.env,
      PLUGBOARD_GATEWAY_DISCOVERY: 'static',
      PLUGBOARD_GATEWAYS: `${NODE_NAME}=${gatewayUrl}`,
    };
    delete env.PLUGBOARD_GATEWAY_SELECTOR;
    assert.ok(env.PORT, 'PORT is rendered');
    assert.equal(webSpec.user, `${NONROOT.uid}:${NONROOT.uid}`);
    webCtr = new WorkingContainer(image('web').name);
    web = webCtr.start([...(image('web').config.config.Entrypoint ?? []), ...webSpec.args], {
      ...(webSpec.user ? { user: webSpec.user } : {}),
      env,
      volumes: webSpec.volumes,
      readOnlyRoot: webSpec.readOnlyRoot,
      capDrop: webSpec.capDrop,
    });
    webUrl = `http://127.0.0.1:${env.PORT}`;
    const w = web;
    await waitFor('web /api/healthz', async () => (await fetch(`${webUrl}/api/healthz`)).ok, 60_000, w);
    webPid = w.findPid('/nodejs/bin/node');
    assert.ok(webPid);
    assert.match(
      readFileSync(`/proc/${webPid}/status`, 'utf8'),
      new RegExp(`^Uid:\\s+${NONROOT.uid}\\s`, 'm'),
    );
    const page = await fetch(`${webUrl}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await page.text(), /Plugboard/);
    const summary = await getJson<Record<string, unknown>>(`${webUrl}/api/nodes/${NODE_NAME}/summary`);
    assert.equal(summary.status, 200, JSON.stringify(summary.body));
    assert.equal(
      JSON.stringify(summary.body).includes(GPU),
      true,
      'the gateway summary came through the proxy',
    );
  });

  it('wrote nothing outside the mounted volumes (read-only root) and the gateway stops cleanly on SIGTERM', async () => {
    assert.deepEqual(gateway.runDirFiles(), [], 'the gateway wrote nothing to /run');
    if (web) assert.deepEqual(web.runDirFiles(), [], 'the web server wrote nothing to /run');
    gatewayStop = await stopContainer(gateway, gatewayPid);
    assert.equal(gatewayStop, 0, gateway.output().slice(-2000));
    const left = readdirSync(join(dir, 'device-plugins')).filter(
      (f) => f !== 'kubelet.sock' && !f.startsWith('kubelet_internal'),
    );
    assert.deepEqual(left, [], 'the plugins removed their sockets');
  });
});

/** RSS and anonymous memory of a process (the gateway benchmark's measure, /proc/PID/smaps_rollup). */
function rssOf(pid: number): { rss: number; anon: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)![1]) * 1024;
  return { rss: kb('Rss'), anon: kb('Anonymous') };
}

describe('gateway RSS at 1,024 devices / 250 pods: in its image and outside', () => {
  const DEVICES = 1024;
  const PODS = 250;
  const results: Record<string, { rss: number; anon: number }> = {};

  async function measure(
    label: string,
    start: (
      dir: string,
      sim: KubeletSim,
      port: number,
    ) => { proc: ChildProcess; pid: () => number | null; output: () => string; stop: () => Promise<unknown> },
  ) {
    const dir = mkdtempSync(join(tmpdir(), 'plugboard-rss-'));
    const sim = await startKubeletSim({
      devicePluginDir: join(dir, 'device-plugins'),
      podResourcesSocket: join(dir, 'pod-resources', 'kubelet.sock'),
      stateDir: join(dir, 'kubelet'),
      nodeName: NODE_NAME,
      maxPods: PODS + 10,
      podResourcesRateLimit: false,
    });
    const port = await freePort();
    const run = start(dir, sim, port);
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitFor(`${label}: /readyz`, async () => (await fetch(`${url}/readyz`)).status === 200, 60_000);
      for (let i = 0; i < PODS; i++) {
        await sim.admitPod({
          metadata: { name: `pod-${i}`, namespace: `ns-${i % 10}` },
          spec: {
            restartPolicy: 'Always',
            containers: [{ name: 'main', resources: { limits: { [GPU]: String(1 + (i % 3)) } } }],
          },
        });
      }
      await waitFor(
        `${label}: all pods in the snapshot`,
        async () => {
          const { body } = await getJson<{ pods: Record<string, unknown> }>(`${url}/api/v1/node`);
          return Object.keys(body.pods).length === PODS;
        },
        60_000,
      );
      const pid = run.pid();
      assert.ok(pid, `${label}: the gateway process is found`);
      // Five samples a quarter second apart, after the last pod arrived; the median is kept.
      const samples: { rss: number; anon: number }[] = [];
      for (let i = 0; i < 5; i++) {
        samples.push(rssOf(pid));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      samples.sort((a, b) => a.rss - b.rss);
      results[label] = samples[2]!;
    } finally {
      await run.stop();
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** The gateway config of the chart at this scale. */
  function chartAt(dir: string, port: number) {
    const objects = render({
      values: {
        gateway: { port, listenAddress: '127.0.0.1' },
        config: { resources: [{ name: GPU, simulated: { count: DEVICES, numaNodes: [0, 1, 2, 3] } }] },
      },
    });
    const ds = only(objects, 'DaemonSet', '-gateway');
    const hostPaths = {
      '/var/lib/kubelet/device-plugins': join(dir, 'device-plugins'),
      '/var/lib/kubelet/pod-resources': join(dir, 'pod-resources'),
      '/var/lib/plugboard': join(dir, 'state'),
    };
    for (const path of Object.values(hostPaths)) mkdirSync(path, { recursive: true });
    return podContainer(ds, objects, dir, hostPaths);
  }

  it('in the image, as the chart runs it (with --kubeconfig instead of in-cluster, as outside)', async () => {
    await measure('image', (dir, sim, port) => {
      const s = chartAt(dir, port);
      const args = s.args.map((a) =>
        a === '--in-cluster' ? '--kubeconfig=/var/lib/kubelet-sim/kubeconfig' : a,
      );
      const ctr = new WorkingContainer(image('gateway').name);
      const proc = ctr.start([...(image('gateway').config.config.Entrypoint ?? []), ...args], {
        ...(s.user ? { user: s.user } : {}),
        env: s.env,
        volumes: [
          ...s.volumes,
          { host: dirname(sim.kubeconfigPath), container: '/var/lib/kubelet-sim', readOnly: true },
        ],
        readOnlyRoot: true,
        capDrop: s.capDrop,
      });
      return {
        proc: proc.child,
        pid: () => proc.findPid('/nodejs/bin/node'),
        output: () => proc.output(),
        stop: async () => {
          await stopContainer(proc, proc.findPid('/nodejs/bin/node'));
          ctr.remove();
        },
      };
    });
    assert.ok(results.image);
  });

  it('outside: the same bundle and node binary, copied out of the image, run on the host', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'plugboard-bundle-'));
    const ctr = new WorkingContainer(image('gateway').name);
    try {
      cpSync(join(ctr.mountPoint, 'app'), join(copy, 'app'), { recursive: true });
      cpSync(join(ctr.mountPoint, 'nodejs/bin/node'), join(copy, 'node'));
    } finally {
      ctr.remove();
    }
    /** The gateway as its own host process, with the chart's args and env mapped to the test's paths. */
    const onHost = (label: string, node: string) =>
      measure(label, (dir, sim, port) => {
        const s = chartAt(dir, port);
        const mapPath = (p: string) => {
          const v = s.volumes.find((vol) => p === vol.container || p.startsWith(`${vol.container}/`));
          return v ? v.host + p.slice(v.container.length) : p;
        };
        const args = s.args.map((a) => {
          if (a === '--in-cluster') return `--kubeconfig=${sim.kubeconfigPath}`;
          const m = /^(--[a-z-]+=)(\/.*)$/.exec(a);
          return m ? m[1]! + mapPath(m[2]!) : a;
        });
        const child = spawn(node, [join(copy, 'app/plugboard-gateway.mjs'), ...args], {
          env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...s.env },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let output = '';
        child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
        return {
          proc: child,
          pid: () => child.pid ?? null,
          output: () => output,
          stop: async () => {
            if (child.exitCode !== null) return;
            child.kill('SIGTERM');
            await new Promise((resolve) => child.once('exit', resolve));
          },
        };
      });
    try {
      await onHost('outside', join(copy, 'node'));
      // For the record only: the same bundle on the host's own Node (the gateway benchmark's runtime).
      await onHost('host node', process.execPath);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
    const inImage = results.image!;
    const outside = results.outside!;
    const limit = 256 * 1024 * 1024;
    assert.ok(inImage.rss < limit, `in-image RSS ${MB(inImage.rss)} MB is under the chart's 256Mi limit`);
    // Same bytes, same flags: the container adds no memory of its own (a namespace costs none).
    assert.ok(
      Math.abs(inImage.rss - outside.rss) / outside.rss < 0.25,
      `in image ${MB(inImage.rss)} MB vs outside ${MB(outside.rss)} MB`,
    );
    mkdirSync(imagesDir, { recursive: true });
    writeFileSync(
      join(imagesDir, 'rss.json'),
      `${JSON.stringify({ devices: DEVICES, pods: PODS, image: inImage, outside, hostNode: { version: process.version, ...results['host node'] } }, null, 2)}\n`,
    );
    process.stderr.write(
      `[images] gateway RSS at ${DEVICES} devices / ${PODS} pods: in image ${MB(inImage.rss)} MB (anon ${MB(inImage.anon)}), ` +
        `outside ${MB(outside.rss)} MB (anon ${MB(outside.anon)}), ` +
        `the same bundle on the host's Node ${process.version} ${MB(results['host node']!.rss)} MB\n`,
    );
  });
});
