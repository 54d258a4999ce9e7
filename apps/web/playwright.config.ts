// Browser tests against the production build (next build + server.ts) fed by real gateways on
// kubelet-sim (e2e/global-setup.ts starts them). Debian's Chromium, no browser download.
import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_EXECUTABLE } from './e2e/chromium';

export const playwrightConfig = defineConfig({
  testDir: 'e2e',
  testMatch: '*.spec.ts',
  outputDir: 'test-results/artifacts',
  globalSetup: './e2e/global-setup.ts',
  globalTeardown: './e2e/global-teardown.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // A test's whole budget catches a hang, each expectation's 10 s a missing change. The longest specs
  // (numa.spec.ts: a dozen steps) took over 45 s at load average 25 (a fresh-clone npm test with two
  // busy loops and three builds beside it), every step within its own 10 s.
  timeout: 120_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    headless: true,
    viewport: { width: 1440, height: 900 },
    screenshot: 'only-on-failure',
    trace: 'off',
    launchOptions: {
      executablePath: CHROMIUM_EXECUTABLE,
      args: CHROMIUM_ARGS,
    },
  },
});

// Playwright reads its config from the default export; this is one of the tool's own files.
export default playwrightConfig;
