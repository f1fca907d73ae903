/**
 * The workstation under a kill: 16 streams with ~1,700-token prompts and 1,500-token answers on 2 replicas ×
 * 2 slots (so most wait in core's queue), replica 0 SIGKILLed while its first two requests are in prefill, within
 * 150 ms of sending (with first-in-first-out prefill, a first token can come sooner than 150 ms, and a request
 * that has sent tokens is not failed over: the kill waits for no token, only for the bindings) — against the same
 * load without the kill, on freshly started replicas each time (the `faults` benchmark's run, through the
 * real front and the `openai` client).
 *
 * The 1.3× bound is on the worst TTFT counted at each run's own decode pace (`paceNormalizedRatio`): the two
 * runs are a minute apart on a shared machine, and a CI run once measured the fault run 40% slower in
 * everything (1.48× raw). The raw ratio is printed, and `npm run bench -- faults` reports both.
 */
import { describe, expect, it } from 'vitest';
import { faultRun, paceNormalizedRatio, type FaultRunOptions } from '../../bench/faults.js';
import { testModelPath } from '../helpers/engines.js';

const options = (): FaultRunOptions => ({
  model: testModelPath(),
  streams: 16,
  promptTokens: 1700,
  answerTokens: 1500,
  killAfterMs: 150,
  slots: 2,
  contextSize: 4096,
});

describe('serving under a kill', () => {
  it('loses no request, fails bound requests over before their first token, and the healed replica takes queued work; the worst TTFT stays within 1.3× of the run without the kill', async () => {
    const calm = await faultRun(options(), false);
    const faulted = await faultRun(options(), true);
    const report = JSON.stringify({ calm: { ...calm, results: undefined }, faulted: { ...faulted, results: undefined } });
    expect(calm.lost, report).toBe(0);
    expect(faulted.lost, report).toBe(0);
    expect(faulted.killedAfterMs, report).toBeLessThanOrEqual(150 + 50);
    expect(faulted.failedOver, report).toBeGreaterThan(0);
    expect(faulted.servedByHealed, report).toBeGreaterThan(0);
    const normalized = paceNormalizedRatio(calm, faulted);
    console.log(
      `kill under load: worst TTFT ${Math.round(faulted.ttftMaxMs)} ms vs ${Math.round(calm.ttftMaxMs)} ms without (${(faulted.ttftMaxMs / calm.ttftMaxMs).toFixed(2)}×; ` +
        `decode ${faulted.decodeTokensPerSecond.toFixed(0)} vs ${calm.decodeTokensPerSecond.toFixed(0)} tok/s, so ${normalized.toFixed(2)}× at each run's pace); ` +
        `killed ${Math.round(faulted.killedAfterMs)} ms after sending; failed over ${faulted.failedOver}, served by the healed replica ${faulted.servedByHealed}`,
    );
    expect(normalized, report).toBeLessThanOrEqual(1.3);
  }, 900_000);
});
