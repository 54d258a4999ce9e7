// parseCount: an extended resource's capacity/allocatable as the Node reports it, through the exact
// resource.Quantity (the old hand-written regex read "1Ki", "1.5" and "100m" as 0).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCount } from './build.js';

test('parseCount reads a Node capacity quantity exactly, rounding a fraction up as Quantity.Value()', () => {
  const cases: [string | undefined, number, string][] = [
    [undefined, 0, 'absent'],
    ['0', 0, 'zero'],
    ['4', 4, 'plain integer'],
    [' 8 ', 8, 'trimmed like Quantity.UnmarshalJSON'],
    ['1k', 1000, 'decimal SI'],
    ['2M', 2_000_000, 'decimal SI, mega'],
    ['1G', 1_000_000_000, 'decimal SI, giga'],
    ['1Ki', 1024, 'binary SI'],
    ['1Mi', 1_048_576, 'binary SI, mebi'],
    ['1e3', 1000, 'decimal exponent'],
    ['1.5k', 1500, 'a fraction with a suffix that makes it whole'],
    ['1.5', 2, 'a fraction rounds up (Value: ceil)'],
    ['100m', 1, 'milli: rounds up to one'],
    ['2000m', 2, 'milli that is whole'],
    ['0.5Ki', 512, 'binary fraction that is whole'],
    ['abc', 0, 'not a quantity'],
    ['1 Gi', 0, 'a space inside'],
    ['200K', 0, 'upper-case K is not a suffix'],
    ['', 0, 'empty'],
  ];
  for (const [input, want, why] of cases) assert.equal(parseCount(input), want, `${String(input)}: ${why}`);
});
