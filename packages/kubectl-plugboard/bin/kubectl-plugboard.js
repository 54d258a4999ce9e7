#!/usr/bin/env node
// kubectl-plugboard: the CLI (dist/ when built, else src/ under tsx), its exit code the process's.
// On PATH as `kubectl-plugboard`, kubectl finds it and runs it as `kubectl plugboard …`.
import { loadCli } from '@plugboard/launcher';

const cli = await loadCli(import.meta.url);
process.exitCode = await cli.main(process.argv.slice(2));
