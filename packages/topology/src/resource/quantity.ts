// Kubernetes resource.Quantity parsing (k8s.io/apimachinery/pkg/api/resource), limited to what
// pod specs and node shapes need: decimal and binary suffixes, milli-units and exponents. Values
// are exact up to 2^53.

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E))?$/;

/** Parses a quantity to a number of base units (cores for cpu, bytes for memory). */
export function parseQuantity(input: string | number): number | undefined {
  if (typeof input === 'number') return Number.isFinite(input) ? input : undefined;
  const m = QUANTITY.exec(input.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2]) return base * (BINARY[m[2]] ?? 1);
  if (m[3]) return base * 10 ** Number(m[3].slice(1));
  return base * (DECIMAL[m[4] ?? ''] ?? 1);
}

/** CPU quantity in millicores, rounded up as the API server does for sub-milli values. */
export function parseMilliCpu(input: string | number): number | undefined {
  const v = parseQuantity(input);
  return v === undefined ? undefined : Math.ceil(Math.round(v * 1e6) / 1e3);
}

/** Integer quantity (extended resources must be whole numbers); undefined if not an integer. */
export function parseInteger(input: string | number): number | undefined {
  const v = parseQuantity(input);
  return v !== undefined && Number.isInteger(v) ? v : undefined;
}
