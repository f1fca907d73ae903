/**
 * `npm test`'s test step: runs vitest (unit + integration) and then prints one closing line,
 * `N passed, N failed, N skipped`, counted from vitest's JSON report. Exits non-zero when anything failed.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const reportDir = join(process.cwd(), '.cache');
mkdirSync(reportDir, { recursive: true });
const report = join(reportDir, 'vitest-report.json');

const run = spawnSync(
  process.execPath,
  [join('node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);

let counts = { passed: 0, failed: 0, skipped: 0 };
try {
  const json = JSON.parse(readFileSync(report, 'utf8')) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
  counts = { passed: json.numPassedTests, failed: json.numFailedTests, skipped: json.numPendingTests + json.numTodoTests };
} catch (error) {
  console.error(`no vitest report at ${report}: ${(error as Error).message}`);
  counts.failed = Math.max(1, counts.failed);
}
console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
process.exit(run.status === 0 && counts.failed === 0 && counts.passed > 0 ? 0 : 1);
