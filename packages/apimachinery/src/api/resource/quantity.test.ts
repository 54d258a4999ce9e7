// resource.Quantity as apimachinery parses and compares it (k8s.io/apimachinery/pkg/api/resource
// quantity_test.go, and the cases of k8s.io/apiserver/pkg/cel/library/quantity_test.go).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ERR_FORMAT_WRONG, ERR_SUFFIX, Quantity } from './quantity.js';

describe('ParseQuantity', () => {
  const valid: [string, string, boolean][] = [
    // input, exact value, held as inf.Dec
    ['0', '0', false],
    ['100m', '0.1', false],
    ['1.5k', '1500', false],
    ['12Mi', '12582912', false],
    ['1Gi', '1073741824', false],
    ['1.5Gi', '1610612736', true],
    ['1Ei', '1152921504606846976', true],
    ['1e3', '1000', false],
    ['1E3', '1000', false],
    ['1E', '1000000000000000000', false],
    ['-3.01e-3', '-0.00301', false],
    ['.5', '0.5', false],
    ['007', '7', false],
    ['0.1n', '0.000000001', true],
    ['1.0000000001', '1.000000001', true],
    ['9999999999999999999999999999999999999G', '9999999999999999999999999999999999999000000000', true],
  ];
  for (const [input, value, dec] of valid) {
    test(`${input} = ${value}`, () => {
      const q = Quantity.parse(input);
      assert.equal(q.toString(), value);
      assert.equal(q.dec, dec);
    });
  }

  const invalid: [string, string][] = [
    ['', ERR_FORMAT_WRONG],
    ['10Mo', ERR_FORMAT_WRONG],
    ['10Mm', ERR_SUFFIX],
    ['200K', ERR_SUFFIX],
    ['Three', ERR_FORMAT_WRONG],
    ['1.1.M', ERR_FORMAT_WRONG],
    ['0.1mi', ERR_SUFFIX],
    ['1i', ERR_SUFFIX],
    ['-3.01e-', ERR_SUFFIX],
    [' 1', ERR_FORMAT_WRONG],
    ['1 ', ERR_FORMAT_WRONG],
  ];
  for (const [input, message] of invalid) {
    test(`${JSON.stringify(input)} is refused`, () =>
      assert.throws(() => Quantity.parse(input), { message }));
  }
});

describe('Quantity arithmetic and conversions', () => {
  const cmp: [string, string, number][] = [
    ['200M', '0.2G', 0],
    ['50M', '50Mi', -1],
    ['50Mi', '50M', 1],
    ['100m', '50m', 1],
    ['2000k', '2M', 0],
    ['1Ki', '1024', 0],
  ];
  for (const [a, b, want] of cmp) {
    test(`cmp(${a}, ${b}) = ${want}`, () => assert.equal(Quantity.parse(a).cmp(Quantity.parse(b)), want));
  }

  const asInt: [string, bigint | undefined][] = [
    ['50k', 50000n],
    ['50', 50n],
    // apimachinery's AsInt64 refuses a negative scale and inf.Dec values, whole or not.
    ['1000m', undefined],
    ['1.5Gi', undefined],
    ['9999999999999999999999999999999999999G', undefined],
    // 18 digits take the int64 fast path, 19 do not.
    ['922337203685477580', 922337203685477580n],
    ['9223372036854775807', undefined],
    ['9.3E18', undefined],
  ];
  for (const [input, want] of asInt) {
    test(`asInt64(${input}) = ${String(want)}`, () => assert.equal(Quantity.parse(input).asInt64(), want));
  }

  test('add and sub keep apimachinery semantics', () => {
    const q = (s: string): Quantity => Quantity.parse(s);
    assert.equal(q('50k').add(q('20')).cmp(q('50.02k')), 0);
    assert.equal(q('50k').sub(q('20')).cmp(q('49.98k')), 0);
    assert.equal(q('50k').add(Quantity.fromInt(20n)).sub(q('100k')).asInt64(), -49980n);
    assert.equal(
      q('50k').add(Quantity.fromInt(20n)).sub(q('100k')).sub(Quantity.fromInt(-50000n)).asInt64(),
      20n,
    );
    assert.equal(q('50.703k').asApproximateFloat64(), 50703);
    const big = q('9999999999999999999999999999999999999');
    assert.equal(big.add(q('1')).cmp(big.add(q('2'))), -1);
    assert.equal(q('-1').sign(), -1);
    assert.equal(q('0').sign(), 0);
  });
});

describe('Quantity canonicalString (String, CanonicalizeBytes)', () => {
  const cases: [string, string][] = [
    ['20Gi', '20Gi'],
    ['21474836480', '21474836480'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['512', '512'],
    ['1.5Gi', '1536Mi'],
    ['0.5Ki', '512'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['2000', '2k'],
    ['10', '10'],
    ['1e3', '1e3'],
    ['1000m', '1'],
    ['0', '0'],
    ['-2Gi', '-2Gi'],
  ];
  for (const [input, want] of cases) {
    test(`${input} → ${want}`, () => {
      assert.equal(Quantity.parse(input).canonicalString(), want);
    });
  }
});
