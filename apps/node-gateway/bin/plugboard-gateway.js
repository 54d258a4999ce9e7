#!/usr/bin/env node
// plugboard-gateway: the gateway's CLI (dist/ when built, else src/ under tsx); it runs on import.
import { loadCli } from '@plugboard/launcher';

await loadCli(import.meta.url);
