import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  REGISTRATION_TRANSITIONS,
  registrationTransition,
  type RegistrationAction,
  type RegistrationSignal,
} from './registration-transitions.js';
import type { RegistrationPhase } from './types.js';

type Row = [
  phase: RegistrationPhase,
  signal: RegistrationSignal,
  to: RegistrationPhase | null,
  actions?: RegistrationAction[],
];

const LIVE: RegistrationPhase[] = ['starting', 'registering', 'registered', 'waiting-for-kubelet', 'failed'];

// The README's "The kubelet holds the registration" and "Kubelet restarts", row by row.
const rows: Row[] = [
  // Serve first, then register.
  ['starting', 'start', 'registering', ['register']],
  ['registering', 'registered', 'registered', ['record-registered']],
  // Before a first registration an absent kubelet is still "registering"; after one it is waited for.
  ['registering', 'kubelet-absent', 'registering', ['record-error']],
  ['registering', 'kubelet-lost', 'waiting-for-kubelet', ['record-error']],
  ['registering', 'register-failed', 'failed', ['record-error']],
  ['failed', 'registered', 'registered', ['record-registered']],
  // The kubelet holds the registration only while it holds the stream.
  ['registered', 'stream-closed', 'waiting-for-kubelet', ['not-held', 'await-restart-signals']],
  ['registered', 'stream-open-timeout', 'waiting-for-kubelet', ['not-held', 'register']],
  ['registered', 'kubelet-sock-removed', 'waiting-for-kubelet', ['not-held']],
  ['waiting-for-kubelet', 'stream-opened', 'registered', ['record-registered']],
  ['waiting-for-kubelet', 'stream-closed-unexplained', 'waiting-for-kubelet', ['restart']],
  // Signals that do not apply in a phase change nothing.
  ['registering', 'stream-closed', null],
  ['waiting-for-kubelet', 'stream-closed', null],
  ['registering', 'stream-open-timeout', null],
  ['registered', 'stream-opened', null],
  ['registered', 'stream-closed-unexplained', null],
  ['registering', 'kubelet-sock-removed', null],
  ['waiting-for-kubelet', 'kubelet-sock-removed', null],
  ['registered', 'start', null],
  // Kubelet restarts: our socket deleted, whatever the phase; a new kubelet.sock once registered.
  ['registering', 'socket-deleted', 'registering', ['restart']],
  ['registered', 'socket-deleted', 'registered', ['restart']],
  ['waiting-for-kubelet', 'socket-deleted', 'waiting-for-kubelet', ['restart']],
  ['failed', 'socket-deleted', 'failed', ['restart']],
  ['registered', 'kubelet-sock-created', 'registered', ['restart']],
  ['waiting-for-kubelet', 'kubelet-sock-created', 'waiting-for-kubelet', ['restart']],
  // Not registered yet: kubelet.sock showing up only means "try now".
  ['starting', 'kubelet-sock-created', 'starting', ['retry-now']],
  ['registering', 'kubelet-sock-created', 'registering', ['retry-now']],
  ['failed', 'kubelet-sock-created', 'failed', ['retry-now']],
  // The recovery: registering, then register again once served; a failure to serve is `failed`.
  ['registered', 'restart-begun', 'registering', []],
  ['waiting-for-kubelet', 'restart-begun', 'registering', []],
  ['registering', 'served-again', 'registering', ['register']],
  ['registering', 'restart-failed', 'failed', ['record-error']],
  // The plugin watcher: GetInfo starts a registration, NotifyRegistrationStatus ends it.
  ['registered', 'get-info', 'registering', []],
  ['waiting-for-kubelet', 'get-info', 'registering', []],
  ['registering', 'register-failed', 'failed', ['record-error']],
  // A Register loop starting after a lost stream.
  ['waiting-for-kubelet', 'register-attempt', 'registering', []],
];

describe('device-plugin registration transitions', () => {
  for (const [phase, signal, to, actions] of rows) {
    it(`${phase} × ${signal} → ${to === null ? 'no change' : `${to} [${actions?.join(', ')}]`}`, () => {
      const t = registrationTransition(phase, signal);
      if (to === null) assert.equal(t, null);
      else assert.deepEqual(t, { to, actions: actions ?? [] });
    });
  }

  it('every live phase stops; nothing leaves stopped', () => {
    for (const phase of LIVE)
      assert.deepEqual(registrationTransition(phase, 'stop'), { to: 'stopped', actions: [] });
    for (const signal of Object.keys(REGISTRATION_TRANSITIONS.registered) as RegistrationSignal[]) {
      assert.equal(registrationTransition('stopped', signal), null, signal);
    }
  });

  it('a registration succeeding lands in registered from every live phase', () => {
    for (const phase of LIVE) assert.equal(registrationTransition(phase, 'registered')?.to, 'registered');
  });
});
