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

// Dynamic Resource Allocation (k8s.io/kubelet/pkg/apis/{pluginregistration/v1,dra/*,dra-health/*}
// and k8s.io/dynamic-resource-allocation/kubeletplugin).

/** PluginInfo.type of a DRA driver registered through the plugin watcher. */
export const DRA_PLUGIN_TYPE = 'DRAPlugin';
/** PluginInfo.supported_versions entries naming the DRAPlugin services a driver serves. */
export const DRA_PLUGIN_SERVICE_V1 = 'v1.DRAPlugin';
export const DRA_PLUGIN_SERVICE_V1BETA1 = 'v1beta1.DRAPlugin';
/**
 * supported_versions entries naming the DRAResourceHealth services (KEP-4680). The kubelet calls
 * the health service only when one is listed, and prefers v1 over v1alpha1.
 */
export const DRA_RESOURCE_HEALTH_SERVICE_V1 = 'v1.DRAResourceHealth';
export const DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1 = 'v1alpha1.DRAResourceHealth';
/** Where DRA drivers keep their data directory and dra.sock: <dir>/<driver name>/dra.sock. */
export const KUBELET_PLUGINS_PATH = '/var/lib/kubelet/plugins';
/** The DRA service socket's file name in a driver's data directory. */
export const DRA_SOCKET_NAME = 'dra.sock';
