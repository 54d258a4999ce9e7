// Who serves a resource, as a small label in words (docs/API.md "Who serves a resource"): this
// gateway's plugin, another device plugin the gateway only observes, or the Node status alone.
import type { ResourceServedBy } from '@plugboard/api';
import { SERVED_BY_LABEL } from '../lib/node-view';

export function ServedByLabel({ servedBy }: { servedBy: ResourceServedBy }) {
  return (
    <span className={`badge ${servedBy === 'plugin' ? 'ok' : 'info'} served-by`} data-served-by={servedBy}>
      {SERVED_BY_LABEL[servedBy]}
    </span>
  );
}
