// The Dockerfiles cannot be built here (no Docker engine), so their structure is checked instead:
// multi-stage, pinned bases, production-only dependencies, non-root runtime, every COPY source
// present in the build context (and not hidden by .dockerignore), every workspace manifest copied
// before `npm ci`, and the ports/entrypoints the chart relies on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { at, chartDir, repoRoot } from './helm.js';

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string | undefined;
  from: string;
  instructions: Instruction[];
}

/** Parses a Dockerfile into stages (line continuations joined, comments dropped). */
function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines) {
    const [op = '', ...rest] = line.split(/\s+/);
    const argText = rest.join(' ');
    if (op.toUpperCase() === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(argText);
      assert.ok(m, `FROM ${argText}`);
      stages.push({ name: m[2], from: m[1]!, instructions: [] });
    } else if (stages.length === 0 && op.toUpperCase() === 'ARG') {
      const [key = '', value = ''] = argText.split('=');
      args.set(key, value);
    } else {
      stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args: argText });
    }
  }
  return { args, stages };
}

/** Minimal .dockerignore matcher for the pattern forms we use (`**\/x`, `x`, `x/y`, `**\/*.ext`). */
function ignoredBy(patterns: string[], path: string): string | undefined {
  const segments = path.split('/');
  return patterns.find((p) => {
    const anyDepth = p.startsWith('**/');
    const pat = anyDepth ? p.slice(3) : p;
    const re = new RegExp(`^${pat.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
    const candidates = anyDepth
      ? segments.flatMap((_, i) => segments.slice(i).map((__, j) => segments.slice(i, i + j + 1).join('/')))
      : segments.map((_, i) => segments.slice(0, i + 1).join('/'));
    return candidates.some((c) => re.test(c));
  });
}

const dockerignore = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const rootPackage = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  workspaces: string[];
};
const values: unknown = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));

// The gateway image holds the self-contained bundle (no node_modules); the web image its built app
// with production dependencies.
const images = {
  gateway: {
    port: at(values, 'gateway', 'port'),
    entry: '/app/plugboard-gateway.mjs',
    runtime: { bundle: '/src/apps/node-gateway/dist/bundle/' },
  },
  web: { port: at(values, 'web', 'port'), entry: '/app/apps/web/server.mjs', runtime: 'node_modules' },
} as const;

describe('.dockerignore', () => {
  it('keeps installed and built artefacts, VCS data and caches out of the build context', () => {
    for (const path of [
      'node_modules',
      'apps/web/node_modules',
      'packages/plugin/dist',
      'apps/web/.next',
      '.git',
      '.cache',
    ]) {
      assert.ok(ignoredBy(dockerignore, path), `${path} is ignored`);
    }
    for (const path of [
      'package-lock.json',
      'packages/plugin/src/index.ts',
      'apps/web/server.ts',
      'tsconfig.json',
    ]) {
      assert.equal(ignoredBy(dockerignore, path), undefined, `${path} stays in the context`);
    }
  });
});

for (const [component, expected] of Object.entries(images)) {
  describe(`deploy/docker/${component}.Dockerfile`, () => {
    const file = join(repoRoot, `deploy/docker/${component}.Dockerfile`);
    const { args, stages } = parseDockerfile(readFileSync(file, 'utf8'));
    const final = stages.at(-1)!;
    const named = new Set(stages.map((s) => s.name).filter(Boolean));

    it('is multi-stage with pinned base images and a distinct runtime base', () => {
      assert.ok(stages.length >= 3, `${stages.length} stages`);
      const resolveImage = (from: string) =>
        from.replace(/^\$\{(\w+)\}$/, (_, k: string) => args.get(k) ?? from);
      for (const stage of stages) {
        const image = resolveImage(stage.from);
        if (named.has(image)) continue;
        assert.match(image, /:[\w.-]+$/, `${image} has a tag`);
        assert.doesNotMatch(image, /:latest$/, `${image} is not :latest`);
      }
      assert.notEqual(
        resolveImage(final.from),
        resolveImage(stages[0]!.from),
        'the runtime base is not the build base',
      );
      assert.match(resolveImage(final.from), /distroless|slim|alpine/, 'small runtime base');
    });

    if (typeof expected.runtime === 'object') {
      const { bundle } = expected.runtime;
      it('runs the bundle alone: no node_modules in the runtime, the bundle built in an earlier stage', () => {
        assert.ok(
          !final.instructions.some((i) => /node_modules/.test(i.args)),
          'the runtime stage copies no node_modules',
        );
        const copy = final.instructions.find((i) => i.op === 'COPY' && i.args.includes(bundle));
        assert.ok(copy, `the runtime copies ${bundle}`);
        const from = /--from=(\S+)/.exec(copy.args)?.[1];
        const builder = stages.find((s) => s.name === from);
        assert.ok(
          builder?.instructions.some(
            (i) => i.op === 'RUN' && /npm run build\b.*@plugboard\/node-gateway/.test(i.args),
          ),
          `stage ${from} builds the gateway (its build script bundles)`,
        );
        const pkg = JSON.parse(readFileSync(join(repoRoot, 'apps/node-gateway/package.json'), 'utf8')) as {
          scripts: Record<string, string>;
        };
        assert.match(pkg.scripts.build!, /scripts\/bundle\.mjs/, 'the build script writes dist/bundle');
      });
      it('the bundle it copies runs: --help from a fresh bundle, outside the repository', () => {
        const out = mkdtempSync(join(tmpdir(), 'plugboard-bundle-'));
        try {
          const built = spawnSync(
            process.execPath,
            ['apps/node-gateway/scripts/bundle.mjs', '--outdir', out],
            {
              cwd: repoRoot,
              encoding: 'utf8',
            },
          );
          assert.equal(built.status, 0, built.stderr);
          const help = spawnSync(process.execPath, [join(out, 'plugboard-gateway.mjs'), '--help'], {
            cwd: out,
            encoding: 'utf8',
          });
          assert.equal(help.status, 0, help.stderr);
          assert.match(help.stdout, /^Usage: plugboard-gateway \[--config FILE\]/);
        } finally {
          rmSync(out, { recursive: true, force: true });
        }
      });
    } else {
      it('installs production dependencies only for the runtime', () => {
        const prod = stages.find((s) =>
          s.instructions.some((i) => i.op === 'RUN' && /npm ci --omit=dev/.test(i.args)),
        );
        assert.ok(prod?.name, 'a stage runs npm ci --omit=dev');
        const nodeModules = final.instructions.filter(
          (i) => i.op === 'COPY' && /\/node_modules\s/.test(i.args),
        );
        assert.ok(nodeModules.length > 0);
        for (const copy of nodeModules)
          assert.ok(copy.args.includes(`--from=${prod.name}`), `${copy.args} comes from ${prod.name}`);
      });
    }

    it('runs as a non-root user with the entrypoint and port the chart expects', () => {
      const user = final.instructions.filter((i) => i.op === 'USER').at(-1);
      assert.ok(user, 'USER is set in the runtime stage');
      assert.doesNotMatch(user.args, /^(0|root)(:|$)/);
      const entrypoint = final.instructions.find((i) => i.op === 'ENTRYPOINT');
      assert.ok(entrypoint);
      assert.deepEqual(JSON.parse(entrypoint.args), ['/nodejs/bin/node', expected.entry]);
      assert.ok(final.instructions.some((i) => i.op === 'EXPOSE' && i.args === String(expected.port)));
      // The chart's helm test runs `node` from the gateway image: it must be on PATH.
      assert.ok(final.instructions.some((i) => i.op === 'ENV' && /PATH=\/nodejs\/bin:/.test(i.args)));
    });

    it('COPY --from names earlier stages only', () => {
      stages.forEach((stage, index) => {
        const earlier = new Set(stages.slice(0, index).map((s) => s.name));
        for (const copy of stage.instructions.filter((i) => i.op === 'COPY')) {
          const from = /--from=(\S+)/.exec(copy.args)?.[1];
          if (from) assert.ok(earlier.has(from), `${copy.args}: stage ${from} is defined before`);
        }
        if (!named.has(stage.from)) return;
        assert.ok(earlier.has(stage.from), `FROM ${stage.from} is an earlier stage`);
      });
    });

    it('copies only context paths that exist and that .dockerignore keeps', () => {
      for (const stage of stages) {
        for (const copy of stage.instructions.filter((i) => i.op === 'COPY' && !i.args.includes('--from='))) {
          const parts = copy.args.split(/\s+/).filter((p) => !p.startsWith('--'));
          for (const source of parts.slice(0, -1)) {
            if (source === '.') continue;
            assert.ok(existsSync(join(repoRoot, source)), `${source} exists`);
            assert.equal(
              ignoredBy(dockerignore, source),
              undefined,
              `${source} is not excluded by .dockerignore`,
            );
          }
        }
      }
    });

    it('extracts every workspace manifest and bin shim before npm ci (npm ci needs the whole tree)', () => {
      const context = stages.find((s) => s.name === 'context');
      const extract = context?.instructions.find((i) => i.op === 'RUN' && i.args.includes('/manifests'));
      assert.ok(extract, 'a `context` stage extracts the manifests');
      const manifests = stages.find((s) => s.name === 'manifests');
      assert.ok(
        manifests?.instructions.some(
          (i) => i.op === 'COPY' && i.args.startsWith('--from=context /manifests/'),
        ),
      );
      for (const stage of stages.filter((s) => s.instructions.some((i) => /npm ci/.test(i.args)))) {
        assert.equal(stage.from, 'manifests', `${stage.name ?? 'stage'} installs on top of the manifests`);
      }
      // Run the extraction itself on this checkout and check what it yields.
      const out = mkdtempSync(join(tmpdir(), 'plugboard-manifests-'));
      try {
        const script = extract.args.replaceAll('/manifests', out);
        const res = spawnSync('sh', ['-c', script], { cwd: repoRoot, encoding: 'utf8' });
        assert.equal(res.status, 0, res.stderr);
        for (const file of ['package.json', 'package-lock.json', '.npmrc'])
          assert.ok(existsSync(join(out, file)), file);
        for (const ws of rootPackage.workspaces) {
          assert.ok(existsSync(join(out, ws, 'package.json')), `${ws}/package.json is extracted`);
          const bin = join(repoRoot, ws, 'bin');
          for (const shim of existsSync(bin) ? readdirSync(bin) : []) {
            assert.ok(existsSync(join(out, ws, 'bin', shim)), `${ws}/bin/${shim} is extracted`);
          }
        }
        assert.ok(!existsSync(join(out, 'node_modules')), 'nothing but manifests');
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  });
}
