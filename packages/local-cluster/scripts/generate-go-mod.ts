// Writes go/go.mod from k8s.io/kubernetes's own go.mod (see src/go-mod.ts for why), then lets
// `go mod tidy` add the indirect requirements and go.sum.
//   npm run generate-go-mod -w @plugboard/local-cluster
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateGoMod, parseUpstreamGoMod } from '../src/go-mod.js';
import { checkGo, downloadedGoMod, goCommand } from '../src/go-toolchain.js';
import { GO_MODULE_DIR, GO_MODULE_PATH, KUBERNETES_VERSION } from '../src/versions.js';

await checkGo();
const upstream = parseUpstreamGoMod(await downloadedGoMod('k8s.io/kubernetes', KUBERNETES_VERSION));
writeFileSync(
  join(GO_MODULE_DIR, 'go.mod'),
  generateGoMod({ modulePath: GO_MODULE_PATH, kubernetesVersion: KUBERNETES_VERSION, upstream }),
);
execFileSync(goCommand(), ['mod', 'tidy'], { cwd: GO_MODULE_DIR, stdio: 'inherit' });
console.log(
  `go/go.mod: k8s.io/kubernetes ${KUBERNETES_VERSION}, ${upstream.staging.length} staging modules replaced`,
);
