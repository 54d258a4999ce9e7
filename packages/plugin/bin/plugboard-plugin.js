#!/usr/bin/env node
// plugboard-plugin: the CLI (dist/ when built, else src/ under tsx), started by its run().
import { loadCli } from '@plugboard/launcher';

const { run } = await loadCli(import.meta.url);
await run();
