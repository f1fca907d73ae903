/**
 * Playwright: the e2e tests drive the real UI served by `npm run serve` in Debian's Chromium
 * (/usr/bin/chromium, never a downloaded browser); screenshots of each screen land in test-results/.
 */
import { defineConfig } from '@playwright/test';

// The UI is tested on node-llama-cpp engines (the slot view's prefix-cache tiers are theirs), also where
// llama-server is installed and would be the default (core/engine-kinds/default-engine-kind.ts).
process.env.MANIFOLD_ENGINE_KIND ??= 'node-llama-cpp';

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results/e2e',
  timeout: 120_000,
  expect: { timeout: 30_000 },
  workers: 1,
  fullyParallel: false,
  reporter: [['list'], ['json', { outputFile: '.cache/playwright-report.json' }]],
  use: {
    viewport: { width: 1360, height: 900 },
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
  },
});
