// A DRA driver that prepares claims its own way: DraDriver's Helper keeps the plumbing (sockets,
// registration, health, ResourceSlices) and this DRAPlugin replaces the default CDI + checkpoint
// preparer. The widgets come with a CDI spec their vendor installs (widget.example.com/widget=<id>),
// so preparing writes nothing: it hands out those CDI devices and refuses a widget another claim holds.
import {
  DraDriver,
  SimulatedSource,
  createLogger,
  kubeApiFromKubeConfig,
  type ClaimRef,
  type ClaimToPrepare,
  type DRAPlugin,
  type PrepareResult,
  type UnprepareResult,
} from '@plugboard/plugin';

const driverName = 'widget.example.com';
const nodeName = process.env.NODE_NAME ?? 'node-a';

class VendorCdiPreparer implements DRAPlugin {
  readonly #held = new Map<string, string[]>(); // claim UID → its widgets

  prepareResourceClaims(claims: readonly ClaimToPrepare[]): Promise<Map<string, PrepareResult>> {
    const results = new Map<string, PrepareResult>();
    for (const { ref, claim } of claims) {
      const ours = (claim?.status?.allocation?.devices?.results ?? []).filter(
        (r) => r.driver === driverName && r.pool === nodeName,
      );
      const inUse = ours.filter((r) =>
        [...this.#held].some(([uid, widgets]) => uid !== ref.uid && widgets.includes(r.device)),
      );
      if (inUse.length > 0) {
        results.set(ref.uid, { error: `${inUse.map((r) => r.device).join(', ')} held by another claim` });
        continue;
      }
      this.#held.set(
        ref.uid,
        ours.map((r) => r.device),
      );
      results.set(ref.uid, {
        devices: ours.map((r) => ({
          requests: [r.request],
          poolName: r.pool,
          deviceName: r.device,
          cdiDeviceIds: [`${driverName}/widget=${r.device}`],
        })),
      });
    }
    return Promise.resolve(results);
  }

  unprepareResourceClaims(claims: readonly ClaimRef[]): Promise<Map<string, UnprepareResult>> {
    const results = new Map<string, UnprepareResult>();
    for (const { uid } of claims) {
      results.set(uid, { error: null, devices: this.#held.get(uid) ?? [] });
      this.#held.delete(uid);
    }
    return Promise.resolve(results);
  }
}

const driver = new DraDriver({
  driverName,
  nodeName,
  source: new SimulatedSource({ count: 4, numaNodes: [0, 1], idPrefix: 'widget' }),
  kube: await kubeApiFromKubeConfig(
    process.env.KUBECONFIG ? { kubeconfig: process.env.KUBECONFIG } : { inCluster: true },
  ),
  pluginsDir: process.env.PLUGINS_DIR, // default /var/lib/kubelet/plugins
  pluginsRegistryDir: process.env.PLUGINS_REGISTRY_DIR, // default /var/lib/kubelet/plugins_registry
  preparer: new VendorCdiPreparer(),
  logger: createLogger('info'),
});
await driver.start(); // serves dra.sock, registers with the kubelet, publishes ResourceSlices
process.once('SIGTERM', () => void driver.stop().then(() => process.exit(0)));
process.once('SIGINT', () => void driver.stop().then(() => process.exit(0)));
