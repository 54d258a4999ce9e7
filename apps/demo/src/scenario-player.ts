// Replays a scenario timeline (examples/scenarios/*.yaml) across the demo cluster. Every gateway is
// sent the same document over its real REST API (POST /api/v1/scenarios) and runs the steps aimed at
// its node; the steps a gateway cannot perform (restart-kubelet) are done here on the node's kubelet.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { scenarioDocumentSchema, type ScenarioDocument } from '@plugboard/api';
import type { DemoCluster } from './cluster.js';
import { DemoError } from './errors.js';

export interface ScenarioPlayback {
  document: ScenarioDocument;
  /** Scenario ID per node, as answered by each gateway. */
  ids: Map<string, string>;
  stop(): Promise<void>;
}

export function loadScenario(file: string): { text: string; document: ScenarioDocument } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new DemoError('scenario', `${file}: cannot read: ${(err as Error).message}`, { cause: err });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new DemoError('scenario', `${file}: invalid YAML: ${(err as Error).message}`, { cause: err });
  }
  const parsed = scenarioDocumentSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${file}: ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new DemoError('scenario', lines.join('\n'));
  }
  return { text, document: parsed.data };
}

export async function playScenario(
  cluster: DemoCluster,
  scenario: { text: string; document: ScenarioDocument },
  log: (line: string) => void,
): Promise<ScenarioPlayback> {
  const { document } = scenario;
  const known = new Set(cluster.nodes.map((n) => n.name));
  for (const step of document.steps) {
    if (step.node !== undefined && !known.has(step.node)) {
      throw new DemoError(
        'scenario',
        `step "${step.action}" at ${step.at} ms names node "${step.node}", which is not in the demo`,
      );
    }
  }
  const ids = new Map<string, string>();
  for (const node of cluster.nodes) {
    const res = await fetch(`${node.gateway.url}/api/v1/scenarios`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: scenario.text,
    });
    const body = (await res.json()) as { id?: string; detail?: string };
    if (res.status !== 201 || !body.id) {
      throw new DemoError(
        'scenario',
        `gateway of ${node.name} refused the scenario (${res.status}): ${body.detail ?? 'no detail'}`,
      );
    }
    ids.set(node.name, body.id);
  }
  const timers: NodeJS.Timeout[] = [];
  for (const step of document.steps) {
    const targets = step.node ? [step.node] : [...known];
    const label = `${step.action}${'numaNode' in step ? ` ${step.numaNode}` : ''}`;
    timers.push(
      setTimeout(() => {
        log(`scenario ${document.name} t+${Math.round(step.at / 1000)}s: ${label} on ${targets.join(', ')}`);
        if (step.action !== 'restart-kubelet') return;
        for (const name of targets) {
          cluster
            .node(name)
            .restartKubelet()
            .catch((err: unknown) => log(`restart of ${name}'s kubelet failed: ${(err as Error).message}`));
        }
      }, step.at),
    );
  }
  return {
    document,
    ids,
    async stop() {
      for (const t of timers) clearTimeout(t);
      await Promise.allSettled(
        [...ids].map(([name, id]) =>
          fetch(`${cluster.node(name).gateway.url}/api/v1/scenarios/${id}`, { method: 'DELETE' }),
        ),
      );
    },
  };
}
