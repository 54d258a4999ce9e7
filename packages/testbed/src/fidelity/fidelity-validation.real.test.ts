// Fidelity, measured — the scenarios about the API server refusing malformed objects (fidelity-suite.ts).
import { fidelitySuite } from './fidelity-suite.js';

fidelitySuite('validation');
