// The parts of metav1 (k8s.io/apimachinery/pkg/apis/meta/v1/types.go, v0.37) Plugboard's wire types
// use, in their JSON form. Structural: an object keeps its other fields untouched.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** ObjectMeta: every field may be left out (the API server fills name, uid, resourceVersion…). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  /** RFC 3339, whole seconds. */
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** metav1.Condition: the standard condition of an object's status. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  /** RFC 3339, whole seconds. */
  lastTransitionTime: string;
  reason: string;
  message: string;
}
