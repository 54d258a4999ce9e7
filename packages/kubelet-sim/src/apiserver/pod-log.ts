// `GET /api/v1/namespaces/{ns}/pods/{name}/log` (the API server's log subresource, which the
// kubelet's containerLogs answers): plain text of the container's running instance or, with
// `previous=true`, of the one before; `follow`, `tailLines`, `timestamps`, `sinceSeconds` and
// `limitBytes` as PodLogOptions define them, and the API server's errors for a missing container
// name, an unknown container, a container still waiting and a missing previous instance.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ContainerRuntime } from '../pods/runtime.js';
import type { LogLine } from '../kuberuntime/container-log.js';
import { HttpError } from './http.js';
import { nanoTime } from '../util/kube-time.js';

export type PodContainers = (namespace: string, name: string) => ContainerRuntime[] | undefined;

function nonNegativeInt(params: URLSearchParams, name: string): number | null {
  const raw = params.get(name);
  if (raw === null || raw === '') return null;
  if (!/^\d+$/.test(raw))
    throw new HttpError(
      422,
      'Invalid',
      `PodLogOptions "" is invalid: ${name}: Invalid value: "${raw.slice(0, 40)}": must be a non-negative integer`,
    );
  return Number(raw);
}

export function servePodLog(
  req: IncomingMessage,
  res: ServerResponse,
  containersOf: PodContainers,
  namespace: string,
  name: string,
  params: URLSearchParams,
): void {
  const containers = containersOf(namespace, name);
  if (!containers) throw new HttpError(404, 'NotFound', `pods "${name}" not found`);
  let wanted = params.get('container') ?? '';
  if (wanted === '') {
    const app = containers.filter((c) => !c.spec.init);
    if (app.length !== 1 || containers.length !== 1) {
      throw new HttpError(
        400,
        'BadRequest',
        `a container name must be specified for pod ${name}, choose one of: [${app.map((c) => c.spec.name).join(' ')}]${
          containers.length > app.length
            ? ` or one of the init containers: [${containers
                .filter((c) => c.spec.init)
                .map((c) => c.spec.name)
                .join(' ')}]`
            : ''
        }`,
      );
    }
    wanted = app[0]!.spec.name;
  }
  const c = containers.find((x) => x.spec.name === wanted);
  if (!c) throw new HttpError(400, 'BadRequest', `container ${wanted} is not valid for pod ${name}`);
  const previous = params.get('previous') === 'true';
  const follow = params.get('follow') === 'true' && !previous;
  const timestamps = params.get('timestamps') === 'true';
  const tail = nonNegativeInt(params, 'tailLines');
  const since = nonNegativeInt(params, 'sinceSeconds');
  const limit = nonNegativeInt(params, 'limitBytes');

  let lines: readonly LogLine[];
  if (previous) {
    const prev = c.log.previous();
    if (!prev) {
      throw new HttpError(
        400,
        'BadRequest',
        `previous terminated container "${wanted}" in pod "${name}" not found`,
      );
    }
    lines = prev;
  } else {
    if (c.containerId === null) {
      const reason = c.state.kind === 'waiting' ? c.state.reason : 'ContainerCreating';
      throw new HttpError(
        400,
        'BadRequest',
        `container "${wanted}" in pod "${name}" is waiting to start: ${reason}`,
      );
    }
    lines = c.log.current();
  }
  const cutoff = since === null ? null : Date.now() - since * 1000;
  let selected = cutoff === null ? [...lines] : lines.filter((l) => l.time.getTime() >= cutoff);
  if (tail !== null) selected = tail === 0 ? [] : selected.slice(-tail);
  const format = (l: LogLine) => `${timestamps ? `${nanoTime(l.time)} ` : ''}${l.text}\n`;

  res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
  let written = 0;
  /** Writes within limitBytes; false once the limit is reached. */
  const write = (text: string): boolean => {
    if (limit === null) {
      res.write(text);
      return true;
    }
    const room = limit - written;
    if (room <= 0) return false;
    const chunk = Buffer.from(text).subarray(0, room);
    written += chunk.length;
    res.write(chunk);
    return written < limit;
  };
  for (const l of selected) if (!write(format(l))) return void res.end();
  if (!follow) return void res.end();
  const stop = c.log.follow((line) => {
    if (line === null || !write(format(line))) {
      stop();
      res.end();
    }
  });
  req.on('close', stop);
}
