#!/usr/bin/env node
// plugboard-kubelet-sim: the CLI (dist/ when built, else src/ under tsx); it runs on import.
import { loadCli } from '@plugboard/launcher';

await loadCli(import.meta.url);
