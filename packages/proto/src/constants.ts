// Constants of k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/constants.go and the PodResources API.

/** The only device-plugin API version the kubelet accepts. */
export const DEVICE_PLUGIN_API_VERSION = 'v1beta1';

export type DeviceHealth = 'Healthy' | 'Unhealthy';
export const HEALTHY: DeviceHealth = 'Healthy';
export const UNHEALTHY: DeviceHealth = 'Unhealthy';

/** Directory the kubelet watches for device-plugin sockets (and deletes every socket in on start). */
export const DEVICE_PLUGIN_PATH = '/var/lib/kubelet/device-plugins/';
/** The kubelet's Registration socket. */
export const KUBELET_SOCKET = '/var/lib/kubelet/device-plugins/kubelet.sock';
export const KUBELET_SOCKET_NAME = 'kubelet.sock';
/** The kubelet's PodResources socket (mount the directory, not the file). */
export const POD_RESOURCES_SOCKET = '/var/lib/kubelet/pod-resources/kubelet.sock';
/** The kubelet plugin watcher's directory (pluginregistration.v1). */
export const PLUGINS_REGISTRY_PATH = '/var/lib/kubelet/plugins_registry/';
/** PluginInfo.type for device plugins registered through the plugin watcher. */
export const DEVICE_PLUGIN_TYPE = 'DevicePlugin';
/** The checkpoint file that survives kubelet restarts in the device-plugin directory. */
export const KUBELET_CHECKPOINT_FILE = 'kubelet_internal_checkpoint';
