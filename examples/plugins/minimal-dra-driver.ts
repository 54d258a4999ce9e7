// A complete DRA driver: four "widgets" on two NUMA nodes, published as this node's ResourceSlices,
// prepared for claims with one CDI device each, and reset before a pod gets them. A widget is
// unhealthy (and tainted NoSchedule) while $WIDGET_FLAG_DIR/<id>.broken exists (default /tmp).
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { DraDriver, SimulatedSource, createLogger, kubeApiFromKubeConfig } from '@plugboard/plugin';

const flagDir = process.env.WIDGET_FLAG_DIR ?? '/tmp';
const widgets = new SimulatedSource({ count: 4, numaNodes: [0, 1], idPrefix: 'widget' });
setInterval(() => {
  for (const { id } of widgets.list()) {
    if (existsSync(`${flagDir}/${id}.broken`)) widgets.markUnhealthy(id, 'marked broken');
    else widgets.heal(id);
  }
}, 200);

const driver = new DraDriver({
  driverName: 'widget.example.com',
  nodeName: process.env.NODE_NAME ?? 'node-a',
  source: widgets,
  kube: await kubeApiFromKubeConfig(
    process.env.KUBECONFIG ? { kubeconfig: process.env.KUBECONFIG } : { inCluster: true },
  ),
  pluginsDir: process.env.PLUGINS_DIR, // default /var/lib/kubelet/plugins
  pluginsRegistryDir: process.env.PLUGINS_REGISTRY_DIR, // default /var/lib/kubelet/plugins_registry
  cdiDir: process.env.CDI_DIR, // default /var/run/cdi
  attributes: (widget) => ({ model: { string: 'W-1000' }, serial: { string: `SN-${widget.id}` } }),
  capacity: () => ({ memory: '16Gi' }),
  taints: { effect: 'NoSchedule' },
  containerEdits: (widget, claim) => ({ env: [`WIDGET=${widget.id}`, `WIDGET_CLAIM=${claim.name}`] }),
  prepare: async ({ devices }) => {
    for (const { device } of devices) await writeFile(`${flagDir}/${device.id}.reset`, 'reset\n');
  },
  logger: createLogger('info'),
});
await driver.start(); // serves dra.sock, registers with the kubelet, publishes ResourceSlices
process.once('SIGTERM', () => void driver.stop().then(() => process.exit(0)));
process.once('SIGINT', () => void driver.stop().then(() => process.exit(0)));
