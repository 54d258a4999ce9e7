// A complete device plugin: four "widgets" on two NUMA nodes. A widget is unhealthy while
// $WIDGET_FLAG_DIR/<id>.broken exists (default /tmp), and healthy again once it is removed.
import { existsSync } from 'node:fs';
import { ResourcePlugin, createLogger, type DeviceSource, type SourceDevice } from '@plugboard/plugin';

const flagDir = process.env.WIDGET_FLAG_DIR ?? '/tmp';

class WidgetSource implements DeviceSource {
  readonly kind = 'widgets';
  #devices: SourceDevice[] = [];
  #listeners = new Set<() => void>();
  #timer: NodeJS.Timeout | undefined;

  start(): Promise<void> {
    this.#probe();
    this.#timer = setInterval(() => this.#probe(), 200);
    return Promise.resolve();
  }
  list(): readonly SourceDevice[] {
    return this.#devices;
  }
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  stop(): Promise<void> {
    clearInterval(this.#timer);
    return Promise.resolve();
  }
  #probe(): void {
    const next = [0, 1, 2, 3].map((i): SourceDevice => {
      const broken = existsSync(`${flagDir}/widget-${i}.broken`);
      return {
        id: `widget-${i}`,
        health: broken ? 'Unhealthy' : 'Healthy',
        reason: broken ? 'marked broken' : null,
        numaNodes: [i % 2],
        deviceNodes: [],
      };
    });
    const changed = JSON.stringify(next) !== JSON.stringify(this.#devices);
    this.#devices = next;
    if (changed) for (const listener of this.#listeners) listener();
  }
}

const plugin = new ResourcePlugin({
  resourceName: 'example.com/widget',
  source: new WidgetSource(),
  devicePluginDir: process.env.DEVICE_PLUGIN_DIR ?? '/var/lib/kubelet/device-plugins',
  allocate: { env: { WIDGETS: '{{ids}}' } },
  logger: createLogger('info'),
});
await plugin.start(); // serves, then registers with the kubelet (retrying until it is there)
process.once('SIGTERM', () => void plugin.stop().then(() => process.exit(0)));
process.once('SIGINT', () => void plugin.stop().then(() => process.exit(0)));
