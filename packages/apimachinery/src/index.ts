// @plugboard/apimachinery: the parts of k8s.io/apimachinery Plugboard re-implements, laid out like
// upstream (v0.37): pkg/util/wait's Backoff (one backoff shape for every retry), pkg/api/resource's
// Quantity (one exact quantity parser) and pkg/apis/meta/v1's ObjectMeta (for the wire types of
// @plugboard/k8s-api). No dependencies; safe in a browser bundle.
export { Backoff, jitter, type BackoffParameters } from './util/wait/backoff.ts';
export {
  ERR_FORMAT_WRONG,
  ERR_NUMERIC,
  ERR_SUFFIX,
  Quantity,
  QuantityError,
  type QuantityFormat,
} from './api/resource/quantity.ts';
export type { Condition, ObjectMeta, OwnerReference } from './apis/meta/v1/types.ts';
