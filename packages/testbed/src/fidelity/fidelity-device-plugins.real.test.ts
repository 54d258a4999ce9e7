// Fidelity, measured — the scenarios about device plugins, the kubelet restarting, the Topology Manager (fidelity-suite.ts).
import { fidelitySuite } from './fidelity-suite.js';

fidelitySuite('device-plugins');
