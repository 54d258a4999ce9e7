// EnhanceRuntimeError (k8s.io/dynamic-resource-allocation/cel/errors.go): a "no such key" error gets
// the hint that tells selector authors how to guard optional attributes. Idempotent.

const HINT =
  '. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields';

export function enhanceRuntimeError(message: string): string {
  if (message.includes(HINT)) return message;
  return message.includes('no such key:') ? message + HINT : message;
}
