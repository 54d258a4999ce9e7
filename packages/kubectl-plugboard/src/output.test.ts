// Table layout, durations and ages as the CLI prints and parses them; HTTP status → exit code.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliError, EXIT_CODES } from './errors.js';
import { age, parseDurationSeconds, registeredText, renderTable, until } from './output.js';

describe('renderTable', () => {
  it('pads columns three spaces apart, upper-cases headers, shows <none> for empty cells', () => {
    const text = renderTable(
      [
        { a: 'node-a', b: 4, c: null },
        { a: 'n', b: 12, c: 'two  words' },
      ],
      [
        { header: 'node', value: (r) => r.a },
        { header: 'count', value: (r) => r.b },
        { header: 'note', value: (r) => r.c },
      ],
    );
    assert.equal(
      text,
      ['NODE     COUNT   NOTE', 'node-a   4       <none>', 'n        12      two words', ''].join('\n'),
    );
  });
});

describe('registeredText', () => {
  it('yes, or the phase that says why not; a gateway without the phase field says no', () => {
    assert.equal(registeredText({ registered: true, registration: 'registered' }), 'yes');
    assert.equal(
      registeredText({ registered: false, registration: 'waiting-for-kubelet' }),
      'waiting-for-kubelet',
    );
    assert.equal(registeredText({ registered: false }), 'no');
  });
});

describe('durations', () => {
  const cases: [string, number | null][] = [
    ['90', 90],
    ['30s', 30],
    ['10m', 600],
    ['1h30m', 5400],
    ['2d', 172_800],
    ['500ms', 1],
    ['', null],
    ['10 m', null],
    ['5x', null],
    ['m5', null],
  ];
  for (const [text, seconds] of cases) {
    it(`"${text}" → ${seconds}`, () => assert.equal(parseDurationSeconds(text), seconds));
  }

  it('prints ages and time left the way kubectl does', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    assert.equal(age('2026-01-01T11:59:15Z', now), '45s');
    assert.equal(age('2026-01-01T11:30:00Z', now), '30m');
    assert.equal(age('2026-01-01T09:00:00Z', now), '3h');
    assert.equal(age('2025-12-29T12:00:00Z', now), '3d');
    assert.equal(age(null, now), '');
    assert.equal(until('2026-01-01T12:10:00Z', now), '10m');
  });
});

describe('exit codes', () => {
  const cases: [number, number][] = [
    [400, EXIT_CODES.rejected],
    [401, EXIT_CODES.unauthorized],
    [403, EXIT_CODES.forbidden],
    [404, EXIT_CODES['not-found']],
    [409, EXIT_CODES.rejected],
    [422, EXIT_CODES.rejected],
    [500, EXIT_CODES.error],
    [502, EXIT_CODES.unavailable],
    [503, EXIT_CODES.unavailable],
  ];
  for (const [status, code] of cases) {
    it(`HTTP ${status} → exit ${code}`, () => assert.equal(CliError.fromStatus(status, 'x').exitCode, code));
  }

  it('keeps the documented numbers stable', () => {
    assert.deepEqual(EXIT_CODES, {
      ok: 0,
      error: 1,
      usage: 2,
      'not-found': 3,
      unauthorized: 4,
      forbidden: 4,
      rejected: 5,
      unavailable: 6,
    });
  });
});
