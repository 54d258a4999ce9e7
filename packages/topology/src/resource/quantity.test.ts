// resource.Quantity parsing: decimal and binary suffixes, milli-units, exponents, integers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseInteger, parseMilliCpu, parseQuantity } from './quantity.js';

test('quantities', () => {
  const cases: [string, number | undefined][] = [
    ['1', 1],
    ['1.5', 1.5],
    ['500m', 0.5],
    ['1Ki', 1024],
    ['16Gi', 16 * 2 ** 30],
    ['1G', 1e9],
    ['2e3', 2000],
    ['abc', undefined],
    ['1 Gi', undefined],
  ];
  for (const [input, want] of cases) assert.equal(parseQuantity(input), want, input);
  assert.equal(parseMilliCpu('250m'), 250);
  assert.equal(parseMilliCpu('2'), 2000);
  assert.equal(parseMilliCpu('0.1'), 100);
  assert.equal(parseInteger('3'), 3);
  assert.equal(parseInteger('500m'), undefined);
});
