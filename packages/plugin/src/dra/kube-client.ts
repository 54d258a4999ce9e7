// The @kubernetes/client-node classes kube-api.ts uses at run time, as static named re-exports, so
// that a bundler keeps only these: `import('@kubernetes/client-node')` is the package's whole
// namespace, and the gateway's bundle then carried and evaluated every generated API class (67
// instead of 5: +1.9 MB of chunk, ~+8 MB RSS). kube-api.ts loads this module on first use.
export {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  ResourceV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
