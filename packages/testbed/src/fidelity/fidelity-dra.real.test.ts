// Fidelity, measured — the scenarios about DRA: allocation, prepare, health, taints, partitions, consumable capacity, extended resources (fidelity-suite.ts).
import { fidelitySuite } from './fidelity-suite.js';

fidelitySuite('dra');
