// The numbers the kubelet's resource managers compute with, read from resource.Quantity values
// (parsed by @plugboard/apimachinery's Quantity, the one exact parser): base units (cores for cpu,
// bytes for memory), millicores, and the whole numbers extended resources must be. A quantity's JSON
// form may be a string or a number, and is trimmed as Quantity.UnmarshalJSON trims it.
import { Quantity } from '@plugboard/apimachinery';

function parse(input: string | number): Quantity | undefined {
  try {
    return Quantity.parse(String(input).trim());
  } catch {
    return undefined;
  }
}

/** Parses a quantity to a number of base units (cores for cpu, bytes for memory). */
export function parseQuantity(input: string | number): number | undefined {
  if (typeof input === 'number') return Number.isFinite(input) ? input : undefined;
  return parse(input)?.toNumber();
}

/** CPU quantity in millicores, rounded up as the API server does for sub-milli values (MilliValue). */
export function parseMilliCpu(input: string | number): number | undefined {
  if (typeof input === 'number' && !Number.isFinite(input)) return undefined;
  const q = parse(input);
  return q === undefined ? undefined : Number(q.milliValue());
}

/** Integer quantity (extended resources must be whole numbers); undefined if not an integer. */
export function parseInteger(input: string | number): number | undefined {
  const v = parseQuantity(input);
  return v !== undefined && Number.isInteger(v) ? v : undefined;
}
