// The mutation authorizer: the bearer token is taken from Authorization or, behind the API server's
// pod proxy (which consumes Authorization), from X-Plugboard-Authorization — verified the same way
// (static token in constant time, or TokenReview + SubjectAccessReview through the reviewer).
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { GatewayError } from '../errors.js';
import { createAuthorizer, PROXY_AUTH_HEADER, type KubeReviewer } from './auth.js';

const TOKEN = 'static-token-0123456789abcdef';
const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return { code: err.code, message: err.message };
  }
  assert.fail('expected a refusal');
}

/** Answers reviews from a table of tokens (the API server's decisions), recording what it was asked. */
function reviewer(decisions: Record<string, { user: string; allowed: boolean }>) {
  const asked: string[] = [];
  const r: KubeReviewer = {
    review(token) {
      asked.push(token);
      const d = decisions[token];
      return Promise.resolve(
        d
          ? {
              authenticated: true,
              user: d.user,
              allowed: d.allowed,
              reason: d.allowed ? '' : 'RBAC: no rule',
            }
          : { authenticated: false, user: 'unknown', allowed: false, reason: 'invalid token' },
      );
    },
  };
  return { reviewer: r, asked };
}

describe('X-Plugboard-Authorization (the credential that crosses the pod proxy)', () => {
  it('is the header name the kubectl plugin sends', () => {
    assert.equal(PROXY_AUTH_HEADER, 'x-plugboard-authorization');
  });

  it('accepts the static token in either header', async () => {
    const auth = createAuthorizer({ token: TOKEN, reviewer: null });
    assert.equal(await auth.authorize(req({ authorization: `Bearer ${TOKEN}` })), 'static-token');
    assert.equal(await auth.authorize(req({ [PROXY_AUTH_HEADER]: `Bearer ${TOKEN}` })), 'static-token');
  });

  it('is the one verified when both are present (the proxy never forwards Authorization)', async () => {
    const auth = createAuthorizer({ token: TOKEN, reviewer: null });
    const r = await refusal(
      auth.authorize(req({ authorization: `Bearer ${TOKEN}`, [PROXY_AUTH_HEADER]: 'Bearer wrong-token' })),
    );
    assert.equal(r.code, 'unauthorized');
  });

  it('goes through TokenReview + SubjectAccessReview like Authorization: 401 unknown, 403 denied', async () => {
    const { reviewer: rv, asked } = reviewer({
      'alice-token': { user: 'alice', allowed: true },
      'bob-token': { user: 'bob', allowed: false },
    });
    const auth = createAuthorizer({ token: null, reviewer: rv });
    assert.equal(await auth.authorize(req({ [PROXY_AUTH_HEADER]: 'Bearer alice-token' })), 'alice');
    const bob = await refusal(auth.authorize(req({ [PROXY_AUTH_HEADER]: 'Bearer bob-token' })));
    assert.deepEqual(bob, { code: 'forbidden', message: 'bob may not do this: RBAC: no rule' });
    const nobody = await refusal(auth.authorize(req({ [PROXY_AUTH_HEADER]: 'Bearer mallory' })));
    assert.equal(nobody.code, 'unauthorized');
    assert.deepEqual(asked, ['alice-token', 'bob-token', 'mallory']);
  });

  it('names the header when it is malformed, and asks for a token when neither is sent', async () => {
    const auth = createAuthorizer({ token: TOKEN, reviewer: null });
    const malformed = await refusal(auth.authorize(req({ [PROXY_AUTH_HEADER]: `Basic ${TOKEN}` })));
    assert.deepEqual(malformed, {
      code: 'unauthorized',
      message: 'X-Plugboard-Authorization header must be "Bearer <token>"',
    });
    const twice = await refusal(
      auth.authorize(req({ [PROXY_AUTH_HEADER]: `Bearer ${TOKEN}, Bearer ${TOKEN}` })),
    );
    assert.equal(twice.code, 'unauthorized');
    const none = await refusal(auth.authorize(req({})));
    assert.match(none.message, /Authorization: Bearer <token> \(or X-Plugboard-Authorization/);
  });
});
