// The upstream versions the local cluster is built from, and where its Go module lives. The Go
// module's go.mod is generated from these (scripts/generate-go-mod.ts); change a version here, then
// run `npm run generate-go-mod -w @plugboard/local-cluster`.
import { fileURLToPath } from 'node:url';

/** The k8s.io/kubernetes release every binary is built from and reports. */
export const KUBERNETES_VERSION = 'v1.37.2';

/** The staging modules (k8s.io/api, k8s.io/client-go, …) are tagged v0.<minor>.<patch> alongside. */
export function stagingVersion(kubernetesVersion: string): string {
  const m = /^v1\.(\d+)\.(\d+)$/.exec(kubernetesVersion);
  if (!m) throw new Error(`not a Kubernetes release version: ${kubernetesVersion}`);
  return `v0.${m[1]}.${m[2]}`;
}

/** The Go module (go.mod, go.sum, tools.go, cmd/) inside this package. */
export const GO_MODULE_DIR = fileURLToPath(new URL('../go/', import.meta.url));

/** The Go module's path. */
export const GO_MODULE_PATH = 'plugboard.example/local-cluster';

/** The oldest Go that builds KUBERNETES_VERSION (its go.mod's `go` line). */
export const MIN_GO_VERSION = '1.26.0';
