// The Kubernetes CEL quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go) over the one
// resource.Quantity (@plugboard/apimachinery, k8s.io/apimachinery/pkg/api/resource).

import type { Environment } from '@marcbachmann/cel-js';
import { Quantity } from '@plugboard/apimachinery';

/** The CEL type name of Quantity values, as apiservercel.QuantityType declares it. */
export const QUANTITY_TYPE = 'kubernetes.Quantity';

/** Registers `quantity()`, `isQuantity()`, `sign()` and the Quantity member functions (Kubernetes 1.28+). */
export function registerQuantityLibrary(env: Environment, fail: (message: string) => never): void {
  const q = QUANTITY_TYPE;
  env
    .registerType(q, Quantity)
    .registerFunction(`quantity(string): ${q}`, (s: string) => {
      try {
        return Quantity.parse(s);
      } catch (err) {
        return fail(err instanceof Error ? err.message : String(err));
      }
    })
    .registerFunction('isQuantity(string): bool', (s: string) => {
      try {
        Quantity.parse(s);
        return true;
      } catch {
        return false;
      }
    })
    // Declared as a global overload upstream (cel.Overload, not cel.MemberOverload), so only
    // `sign(quantity(...))` type-checks there; the library's doc comment shows `.sign()`.
    .registerFunction(`sign(${q}): int`, (a: Quantity) => BigInt(a.sign()))
    .registerFunction(`${q}.isGreaterThan(${q}): bool`, (a: Quantity, b: Quantity) => a.cmp(b) === 1)
    .registerFunction(`${q}.isLessThan(${q}): bool`, (a: Quantity, b: Quantity) => a.cmp(b) === -1)
    .registerFunction(`${q}.compareTo(${q}): int`, (a: Quantity, b: Quantity) => BigInt(a.cmp(b)))
    .registerFunction(`${q}.asApproximateFloat(): double`, (a: Quantity) => a.asApproximateFloat64())
    .registerFunction(`${q}.asInteger(): int`, (a: Quantity) => {
      const v = a.asInt64();
      return v ?? fail('cannot convert value to integer');
    })
    .registerFunction(`${q}.isInteger(): bool`, (a: Quantity) => a.asInt64() !== undefined)
    .registerFunction(`${q}.add(${q}): ${q}`, (a: Quantity, b: Quantity) => a.add(b))
    .registerFunction(`${q}.add(int): ${q}`, (a: Quantity, b: bigint) => a.add(Quantity.fromInt(b)))
    .registerFunction(`${q}.sub(${q}): ${q}`, (a: Quantity, b: Quantity) => a.sub(b))
    .registerFunction(`${q}.sub(int): ${q}`, (a: Quantity, b: bigint) => a.sub(Quantity.fromInt(b)))
    // apiservercel.Quantity.Equal: Cmp == 0.
    .registerOperator(`${q} == ${q}`, (a: Quantity, b: Quantity) => a.cmp(b) === 0);
}
