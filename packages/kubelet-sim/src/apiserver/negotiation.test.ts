import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { cacheDocument, ifNoneMatchHits, parseAccept, rangeMatches } from './negotiation.js';

describe('parseAccept', () => {
  const cases: { accept: string | undefined; want: string[] }[] = [
    { accept: undefined, want: ['*/*'] },
    { accept: '', want: ['*/*'] },
    { accept: 'application/json', want: ['application/json'] },
    { accept: '*', want: ['*/*'] },
    // q first, then concrete before wildcard, then as sent (goautoneg's order).
    { accept: 'application/json;q=0.5, application/yaml', want: ['application/yaml', 'application/json'] },
    { accept: '*/*, application/*, text/plain', want: ['text/plain', 'application/*', '*/*'] },
    { accept: 'application/json, application/yaml', want: ['application/json', 'application/yaml'] },
    { accept: 'application/json;q=0, text/plain', want: ['text/plain'] },
    { accept: 'garbage, /json, application/', want: [] },
  ];
  for (const { accept, want } of cases) {
    it(`${JSON.stringify(accept)} → ${want.join(', ') || 'nothing'}`, () => {
      assert.deepEqual(
        parseAccept(accept).map((r) => `${r.type}/${r.subtype}`),
        want,
      );
    });
  }

  it('keeps parameters (names lower-cased, values as sent) apart from q', () => {
    const [range] = parseAccept(
      'Application/JSON; g=apidiscovery.k8s.io ;V=v2;as="APIGroupDiscoveryList";q=0.9',
    );
    assert.deepEqual(range, {
      type: 'application',
      subtype: 'json',
      params: { g: 'apidiscovery.k8s.io', v: 'v2', as: 'APIGroupDiscoveryList' },
      q: 0.9,
    });
  });

  it('matches wildcards', () => {
    const [any, app, json] = parseAccept('*/*;q=0.1, application/*;q=0.2, application/json;q=0.3').reverse();
    for (const r of [any!, app!, json!]) assert.equal(rangeMatches(r, 'application', 'json'), true);
    assert.equal(rangeMatches(json!, 'application', 'yaml'), false);
    assert.equal(rangeMatches(app!, 'text', 'plain'), false);
  });
});

describe('cacheDocument and If-None-Match', () => {
  it('hashes the serialised bytes with SHA-512, upper-case hex (kube-apiserver ETags)', () => {
    const doc = cacheDocument({ b: 1, a: [true] });
    assert.equal(doc.serialized, '{"b":1,"a":[true]}');
    assert.equal(doc.hash, createHash('sha512').update(doc.serialized).digest('hex').toUpperCase());
    assert.match(doc.hash, /^[0-9A-F]{128}$/);
  });

  it('matches strong, weak, listed and * validators', () => {
    assert.equal(ifNoneMatchHits('"ABC"', 'ABC'), true);
    assert.equal(ifNoneMatchHits('W/"ABC"', 'ABC'), true);
    assert.equal(ifNoneMatchHits('"X", "ABC"', 'ABC'), true);
    assert.equal(ifNoneMatchHits('*', 'ABC'), true);
    assert.equal(ifNoneMatchHits('ABC', 'ABC'), false);
    assert.equal(ifNoneMatchHits('"abc"', 'ABC'), false);
    assert.equal(ifNoneMatchHits(undefined, 'ABC'), false);
  });
});
