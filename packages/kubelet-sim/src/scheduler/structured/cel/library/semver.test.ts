// blang/semver/v4 Parse and Compare, and semverlib.go's normalization.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Semver } from './semver.js';

describe('semver.Parse', () => {
  const invalid: [string, string][] = [
    ['', 'Version string empty'],
    ['1.0', 'No Major.Minor.Patch elements found'],
    ['v1.0.0', 'Invalid character(s) found in major number "v1"'],
    ['01.0.0', 'Major number must not contain leading zeroes "01"'],
    ['1.01.0', 'Minor number must not contain leading zeroes "01"'],
    ['1.0.01', 'Patch number must not contain leading zeroes "01"'],
    ['1.0.0-', 'Prerelease is empty'],
    ['1.0.0-01', 'Numeric PreRelease version must not contain leading zeroes "01"'],
    ['1.0.0-a_b', 'Invalid character(s) found in prerelease "a_b"'],
    ['1.0.0+', 'Build meta data is empty'],
    ['1..0', 'strconv.ParseUint: parsing "": invalid syntax'],
  ];
  for (const [input, message] of invalid) {
    test(`${JSON.stringify(input)}: ${message}`, () => assert.throws(() => Semver.parse(input), { message }));
  }

  const order: [string, string, number][] = [
    ['1.2.3', '1.2.3', 0],
    ['1.2.3', '2.0.0', -1],
    ['1.2.3', '0.1.2', 1],
    ['1.0.0-alpha', '1.0.0', -1],
    ['1.0.0-alpha', '1.0.0-alpha.1', -1],
    ['1.0.0-alpha.1', '1.0.0-alpha.beta', -1],
    ['1.0.0-beta.2', '1.0.0-beta.11', -1],
    ['1.0.0-rc.1', '1.0.0-beta.11', 1],
    ['1.0.0+build.1', '1.0.0+build.2', 0],
  ];
  for (const [a, b, want] of order) {
    test(`compare(${a}, ${b}) = ${want}`, () => assert.equal(Semver.parse(a).compare(Semver.parse(b)), want));
  }
});

describe('semver normalization (semver(s, true))', () => {
  const cases: [string, string][] = [
    ['v1.0.0', '1.0.0'],
    ['1.0', '1.0.0'],
    ['1', '1.0.0'],
    ['01.01.01', '1.1.1'],
  ];
  for (const [input, want] of cases) {
    test(`${input} → ${want}`, () => assert.equal(Semver.parseNormalized(input).toString(), want));
  }
  test('a short version with pre-release data is refused', () =>
    assert.throws(() => Semver.parseNormalized('1.0-alpha'), {
      message: 'short version cannot contain PreRelease/Build meta data',
    }));
});
