/**
 * `npm test`'s test step: runs vitest (unit + integration), then Playwright (e2e against the built UI in
 * Debian's Chromium), and prints one closing line, `N passed, N failed, N skipped`, summed from both
 * JSON reports. Exits non-zero when anything failed. `--no-e2e` runs vitest alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const reportDir = join(process.cwd(), '.cache');
mkdirSync(reportDir, { recursive: true });
const vitestReport = join(reportDir, 'vitest-report.json');
const playwrightReport = join(reportDir, 'playwright-report.json');
const args = process.argv.slice(2).filter((a) => a !== '--no-e2e');
const e2e = !process.argv.includes('--no-e2e');

type Counts = { passed: number; failed: number; skipped: number };
const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const add = (c: Counts): void => {
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
};

function readReport(path: string, count: (json: never) => Counts, what: string): void {
  try {
    add(count(JSON.parse(readFileSync(path, 'utf8')) as never));
  } catch (error) {
    console.error(`no ${what} report at ${path}: ${(error as Error).message}`);
    total.failed = Math.max(1, total.failed);
  }
}

for (const stale of [vitestReport, playwrightReport]) rmSync(stale, { force: true });
const vitest = spawnSync(
  process.execPath,
  [join('node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestReport}`, ...args],
  { stdio: 'inherit' },
);
readReport(
  vitestReport,
  (json: { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number }) => ({
    passed: json.numPassedTests,
    failed: json.numFailedTests,
    skipped: json.numPendingTests + json.numTodoTests,
  }),
  'vitest',
);

let playwrightOk = true;
if (e2e) {
  if (!existsSync('/usr/bin/chromium')) {
    console.error('e2e: /usr/bin/chromium is missing (apt-get install -y chromium); the e2e tests did not run');
    total.failed += 1;
    playwrightOk = false;
  } else {
    const playwright = spawnSync(process.execPath, [join('node_modules', '@playwright', 'test', 'cli.js'), 'test'], { stdio: 'inherit' });
    playwrightOk = playwright.status === 0;
    readReport(
      playwrightReport,
      (json: { stats: { expected: number; unexpected: number; flaky: number; skipped: number } }) => ({
        passed: json.stats.expected + json.stats.flaky,
        failed: json.stats.unexpected,
        skipped: json.stats.skipped,
      }),
      'playwright',
    );
  }
}

console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(vitest.status === 0 && playwrightOk && total.failed === 0 && total.passed > 0 ? 0 : 1);
