// A device plugin's registration with the kubelet as an explicit transition table: phase × signal →
// phase and actions, pure, with no timers or I/O (RegistrationRunner, registration-runner.ts, turns
// what happens into signals and runs the actions). After the kubelet's plugin manager (pkg/kubelet/pluginmanager), which keeps
// registration as states and the transitions between them rather than flags; the phases are the ones
// `registration().phase` reports (packages/plugin/README.md, "The kubelet holds the registration").
import type { RegistrationPhase } from './types.js';

export type RegistrationSignal =
  /** Served: register (kubelet mode) or wait for the plugin watcher. */
  | 'start'
  /** A Register loop begins (kubelet mode). */
  | 'register-attempt'
  /** Register returned OK, or the plugin watcher's NotifyRegistrationStatus said registered. */
  | 'registered'
  /** Register: no kubelet.sock, and the plugin was never registered. */
  | 'kubelet-absent'
  /** Register: no kubelet.sock or nothing answered, after a registration (a kubelet to wait for). */
  | 'kubelet-lost'
  /** Register refused (or nothing answered before any registration), or the plugin watcher refused. */
  | 'register-failed'
  /** The plugin watcher called GetInfo. */
  | 'get-info'
  /** The kubelet opened the ListAndWatch stream of the registration in force. */
  | 'stream-opened'
  /** The kubelet closed the last ListAndWatch stream of the registration in force. */
  | 'stream-closed'
  /** No ListAndWatch stream within streamOpenGraceMs of a registration. */
  | 'stream-open-timeout'
  /** A grace after a closed stream, no filesystem signal explained it and kubelet.sock is there. */
  | 'stream-closed-unexplained'
  /** Our socket (or registration socket) was deleted or replaced: only a (re)starting kubelet does that. */
  | 'socket-deleted'
  /** kubelet.sock went away: a kubelet stopping. */
  | 'kubelet-sock-removed'
  /** kubelet.sock was created again (or appeared): a kubelet that knows nothing of us, or one to try now. */
  | 'kubelet-sock-created'
  /** The recovery from a kubelet restart runs (re-serve what is gone, then register). */
  | 'restart-begun'
  /** The recovery served again what was gone: register again. */
  | 'served-again'
  /** That recovery failed (a socket could not be served again). */
  | 'restart-failed'
  | 'stop';

export type RegistrationAction =
  /** kubelet mode: run the Register loop; plugin-watcher mode: nothing, the watcher comes to us. */
  | 'register'
  /** Record the registration; wait (streamOpenGraceMs) for its ListAndWatch stream. */
  | 'record-registered'
  /** Record and report the error (the Register loop retries after its backoff). */
  | 'record-error'
  /** The kubelet let go: record since when and why, report `waiting-for-kubelet`. */
  | 'not-held'
  /** kubelet mode: after a grace, see whether a restart explains a closed stream. */
  | 'await-restart-signals'
  /** A kubelet restart: count it, re-serve what is gone, register again. */
  | 'restart'
  /** Cut the Register backoff short. */
  | 'retry-now';

export interface RegistrationTransition {
  to: RegistrationPhase;
  actions: readonly RegistrationAction[];
}

type Row = Partial<Record<RegistrationSignal, RegistrationTransition>>;

const go = (to: RegistrationPhase, ...actions: RegistrationAction[]): RegistrationTransition => ({
  to,
  actions,
});

/** Signals that move any live phase to the same place. */
const fromAnyLivePhase: Row = {
  'register-attempt': go('registering'),
  registered: go('registered', 'record-registered'),
  'kubelet-absent': go('registering', 'record-error'),
  'kubelet-lost': go('waiting-for-kubelet', 'record-error'),
  'register-failed': go('failed', 'record-error'),
  'get-info': go('registering'),
  'restart-begun': go('registering'),
  'served-again': go('registering', 'register'),
  'restart-failed': go('failed', 'record-error'),
  stop: go('stopped'),
};

/** Phase × signal. A pair that is not listed changes nothing (the signal does not apply). */
export const REGISTRATION_TRANSITIONS: Readonly<Record<RegistrationPhase, Row>> = {
  starting: {
    ...fromAnyLivePhase,
    start: go('registering', 'register'),
    'socket-deleted': go('starting', 'restart'),
    'kubelet-sock-created': go('starting', 'retry-now'),
  },
  registering: {
    ...fromAnyLivePhase,
    'socket-deleted': go('registering', 'restart'),
    'kubelet-sock-created': go('registering', 'retry-now'),
  },
  registered: {
    ...fromAnyLivePhase,
    'stream-closed': go('waiting-for-kubelet', 'not-held', 'await-restart-signals'),
    'stream-open-timeout': go('waiting-for-kubelet', 'not-held', 'register'),
    'socket-deleted': go('registered', 'restart'),
    'kubelet-sock-removed': go('waiting-for-kubelet', 'not-held'),
    'kubelet-sock-created': go('registered', 'restart'),
  },
  'waiting-for-kubelet': {
    ...fromAnyLivePhase,
    'stream-opened': go('registered', 'record-registered'),
    'stream-closed-unexplained': go('waiting-for-kubelet', 'restart'),
    'socket-deleted': go('waiting-for-kubelet', 'restart'),
    'kubelet-sock-created': go('waiting-for-kubelet', 'restart'),
  },
  failed: {
    ...fromAnyLivePhase,
    'socket-deleted': go('failed', 'restart'),
    'kubelet-sock-created': go('failed', 'retry-now'),
  },
  stopped: {},
};

/** Where `signal` takes a registration in `phase`, or null when it does not apply there. */
export function registrationTransition(
  phase: RegistrationPhase,
  signal: RegistrationSignal,
): RegistrationTransition | null {
  return REGISTRATION_TRANSITIONS[phase][signal] ?? null;
}
