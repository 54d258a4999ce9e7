#!/usr/bin/env node
// plugboard-cluster: the CLI (dist/ when built, else src/ under tsx), its exit code the process's.
// A real Kubernetes on this machine (see src/cli.ts).
import { loadCli } from '@plugboard/launcher';

const cli = await loadCli(import.meta.url);
process.exitCode = await cli.main(process.argv.slice(2));
