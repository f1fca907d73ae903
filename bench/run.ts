/**
 * `npm run bench [-- <name>…] [--quick]`: runs the benchmarks (route, simulate, multiturn, overhead, scaling, rebuild, faults,
 * remote, peer, gpu, families), writes `bench/results/<name>.json` and prints a table for each. Full runs use the `bench` test model; `--quick`
 * is a one-minute smoke on the `tiny` model that CI runs to keep the benchmarks from rotting.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureTestModel, TEST_MODEL_SIZES, type TestModelSize } from '../build/test-model.js';
import { FAMILY_MODELS, type FamilyName } from '../build/family-models.js';
import { runFaults } from './faults.js';
import { runFamilies } from './families.js';
import { runGpu } from './gpu.js';
import { runMultiTurn } from './multiturn.js';
import { runOverhead } from './overhead.js';
import { runPeer } from './peer.js';
import { runRebuild } from './rebuild.js';
import { runRemote } from './remote.js';
import { runRoute } from './route.js';
import { runScaling } from './scaling.js';
import { runSimulate } from './simulate.js';

// The benchmarks measure node-llama-cpp engines unless they name a kind (peer and engine-kinds compare the
// two side by side), also where llama-server is installed and would be the default (core/engine-kinds/default-engine-kind.ts).
process.env.MANIFOLD_ENGINE_KIND ??= 'node-llama-cpp';

const NAMES = ['route', 'simulate', 'multiturn', 'overhead', 'scaling', 'rebuild', 'faults', 'remote', 'peer', 'gpu', 'families'] as const;
type BenchName = (typeof NAMES)[number];

const { values, positionals } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    /** gpu: the card's memory bandwidth in GB/s, for its roofline (measured on the card, or its datasheet's). */
    'bandwidth-gbps': { type: 'string' },
  },
  allowPositionals: true,
});
const unknown = positionals.filter((p) => !(NAMES as readonly string[]).includes(p));
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.join(', ')}; known: ${NAMES.join(', ')}`);
  process.exit(2);
}
const selected: BenchName[] = positionals.length ? (positionals as BenchName[]) : [...NAMES];
const quick = values.quick;
const size: TestModelSize = quick ? 'tiny' : 'bench';
/** faults runs on the tiny model, as `npm run serve` does: its tens of seconds of queueing are the scale a kill is weighed against. */
const FAULTS_MODEL: TestModelSize = 'tiny';
const sizeOf = (name: BenchName): TestModelSize => (name === 'faults' ? FAULTS_MODEL : size);
const model = await ensureTestModel(size);
const machine = {
  cpus: os.cpus()[0]?.model ?? 'unknown',
  cores: os.availableParallelism(),
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
};

const workload = quick
  ? { users: 3, turns: 2, systemWords: 40, userWords: 10, answerTokens: 8, concurrency: 2, seed: 1 }
  : { users: 8, turns: 4, systemWords: 40, userWords: 80, answerTokens: 32, concurrency: 4, seed: 1 };

/**
 * The realistic chat of multiturn and peer (part 2): 16 conversations × 5 rounds, a 400-word first message
 * and 120-word follow-ups, so histories grow past 1,000 tokens; 8 requests in flight.
 */
const chat = quick
  ? { conversations: 4, rounds: 2, systemWords: 20, openingWords: 60, followUpWords: 20, answerTokens: 8, concurrency: 2, thinkMs: 0, seed: 3 }
  : { conversations: 16, rounds: 5, systemWords: 60, openingWords: 400, followUpWords: 120, answerTokens: 48, concurrency: 8, thinkMs: 0, seed: 3 };

const benches: Record<BenchName, () => Promise<{ text: string }>> = {
  route: async () =>
    runRoute(
      quick
        ? { replicas: [2, 8], promptTokens: [512, 8192], indexBlocks: [10_000], decisions: 200 }
        : { replicas: [2, 4, 8], promptTokens: [512, 8192, 32768], indexBlocks: [10_000, 100_000, 1_000_000], decisions: 1000 },
    ),
  // No engine: simulated ones (bench/simulate/), replaying the Mooncake trace (bench/traces/).
  simulate: async () =>
    runSimulate(
      quick
        ? { sizes: [8, 32], loads: [0.5, 0.9], maxRequests: 800, fronts: { replicas: 16, fronts: 2 }, routeBlocks: 0, validation: null }
        : {
            sizes: [8, 32, 64, 256],
            loads: [0.5, 0.8, 0.95],
            maxRequests: 12_000,
            fronts: { replicas: 32, fronts: 4 },
            routeBlocks: 10_000_000,
            validation: { model, requests: 60, replicas: 2, slots: 2, maxBlocks: 20, maxAnswer: 16, meanGapMs: 1500 },
          },
    ),
  multiturn: () =>
    runMultiTurn({
      model,
      threads: 1,
      contextSize: 2048,
      // Slot pressure: more conversations than slots (≥ 4 replicas in the full run); enough slots: one per conversation.
      // The quick smoke runs one regime, twice over to run the pooling: every server start costs seconds.
      // The two slot-pressure regimes the issue's targets read run three times over (240 requests a policy).
      regimes: quick
        ? [{ name: 'slot pressure', replicas: 2, slots: 1, repeats: 2 }]
        : [
            { name: 'slot pressure', replicas: 4, slots: 2, uncachedBaseline: true, repeats: 3 },
            { name: 'enough slots', replicas: 4, slots: 4 },
            // The same pressure on llama-server children, the default engine wherever its binary is installed.
            { name: 'slot pressure, llama-server', replicas: 4, slots: 2, uncachedBaseline: true, kind: 'llama-server', repeats: 3 },
            // The same pressure where each follow-up is a third of an answer, as in LMSYS-Chat-1M's million real
            // chats (about 70 tokens a user prompt, 215 an answer), at the answer length these cores afford.
            { name: 'short follow-ups', replicas: 4, slots: 2, uncachedBaseline: true, chat: { followUpWords: 16 } },
            { name: 'short follow-ups, llama-server', replicas: 4, slots: 2, uncachedBaseline: true, kind: 'llama-server', chat: { followUpWords: 16 } },
            // The same pressure where users read before they answer (about a second, exponential): at times fewer
            // conversations are ready than slots are free.
            { name: 'users think', replicas: 4, slots: 2, chat: { thinkMs: 1000 } },
            { name: 'users think, llama-server', replicas: 4, slots: 2, kind: 'llama-server', chat: { thinkMs: 1000 } },
          ],
      chat,
      sharedPrefix: quick
        ? { replicas: 2, slots: 2, groups: 2, promptsPerGroup: 2, prefixWords: 60, questionWords: 8, answerTokens: 8, concurrency: 2, seed: 2 }
        : { replicas: 2, slots: 4, groups: 4, promptsPerGroup: 4, prefixWords: 250, questionWords: 15, answerTokens: 16, concurrency: 4, seed: 2 },
    }),
  overhead: () =>
    runOverhead({
      model,
      threads: 1,
      contextSize: 2048,
      promptTokens: quick ? 128 : 512,
      answerTokens: quick ? 16 : 256,
      runs: quick ? 2 : 36,
      shortPromptTokens: 16,
      ttftRuns: quick ? 4 : 120,
      placements: ['shared', 'own core'],
      starts: quick ? 1 : 12,
    }),
  scaling: () => runScaling({ model, replicas: 2, contextSize: 4096, workload }),
  faults: async () =>
    runFaults(
      quick
        ? { model, streams: 6, promptTokens: 400, answerTokens: 32, killAfterMs: 100, slots: 2, contextSize: 1024 }
        : { model: await ensureTestModel(FAULTS_MODEL), streams: 16, promptTokens: 1700, answerTokens: 1500, killAfterMs: 150, slots: 2, contextSize: 4096 },
    ),
  // Longer chats than multiturn's: histories past 1,000 tokens, where what a node holds matters.
  remote: () =>
    runRemote({
      model,
      nodes: 2,
      slots: quick ? 2 : 4,
      contextSize: 4096,
      threads: 1,
      workload: quick ? workload : { users: 8, turns: 6, systemWords: 40, userWords: 150, answerTokens: 32, concurrency: 4, seed: 1 },
    }),
  // Part 1: the issue's eight 1,400-token prompts at once, on the 2 threads both servers get, then on 1.
  peer: () =>
    runPeer({
      // With 1 thread each, a core is left to the front and the client, as on a machine whose engine runs on a GPU.
      serve: quick
        ? [{ model, slots: 2, threads: 1, contextSize: 512, promptTokens: 128, answerTokens: 16, rounds: 1, loneRounds: 1, seed: 1 }]
        : [2, 1].map((threads) => ({ model, slots: 8, threads, contextSize: 2048, promptTokens: 1400, answerTokens: 64, rounds: 2, loneRounds: 8, seed: 1 })),
      // Part 2: one llama-server with all the slots against Manifold with them split into replicas.
      chat: {
        model,
        slots: quick ? 2 : 8,
        threads: quick ? 1 : 2,
        contextSize: 2048,
        layouts: quick
          ? [{ replicas: 2, kind: 'node-llama-cpp' }]
          : [
              { replicas: 4, kind: 'node-llama-cpp' },
              { replicas: 2, kind: 'node-llama-cpp' },
              { replicas: 1, kind: 'node-llama-cpp' },
              // The same routing and front on llama.cpp's own server as each replica's engine.
              { replicas: 4, kind: 'llama-server' },
              { replicas: 2, kind: 'llama-server' },
              { replicas: 1, kind: 'llama-server' },
              // One replica with llama-server's own flash attention on the CPU (llama.cpp's `auto`: on), where Manifold's
              // default is off: the peer's own settings, so the front and routing read apart from that choice.
              { replicas: 1, kind: 'llama-server', flashAttention: true },
            ],
        // Part 3: the layout where slot pressure is highest, of each kind, with the cache of evicted conversations off.
        cacheOff: quick
          ? [{ replicas: 2, kind: 'node-llama-cpp' }]
          : [
              { replicas: 4, kind: 'node-llama-cpp' },
              { replicas: 4, kind: 'llama-server' },
            ],
        chat,
        // Each part three times over (240 requests a server; the quick smoke twice, so CI runs the pooling).
        repeats: quick ? 2 : 3,
      },
    }),
  // Part 1 of peer on a GPU (skips without one): the bench model, and in a full run a model big enough to be bound by memory bandwidth.
  gpu: () =>
    runGpu({
      models: [{ name: size, path: async () => model }, ...(quick ? [] : [{ name: 'large', path: () => ensureTestModel('large') }])],
      slots: quick ? 2 : 8,
      contextSize: 2048,
      promptTokens: quick ? 128 : 1400,
      answerTokens: quick ? 16 : 128,
      rounds: quick ? 1 : 4,
      bandwidthGBps: values['bandwidth-gbps'] ? Number(values['bandwidth-gbps']) : null,
      seed: 1,
    }),
  // Each template family's grafted model (its own random weights: the size flag does not apply).
  families: () =>
    runFamilies(
      quick
        ? { described: ['qwen3', 'gpt-oss'], families: ['qwen3', 'llama3.1'], kinds: ['node-llama-cpp'], turns: 2, answerTokens: 8 }
        : {
            described: Object.keys(FAMILY_MODELS) as FamilyName[],
            families: [
              'qwen3',
              'qwen3.5',
              'qwq',
              'deepseek-r1-distill-llama',
              'deepseek-r1',
              'llama3.1',
              'hermes3-tools',
              'mistral-small-3.2',
              'mistral-nemo',
              'gemma4',
              'gpt-oss',
              'qwen3-coder',
              'command-r7b',
              'granite-3.3',
              'glm-4.6',
              'kimi-k2',
              'phi-3.5',
            ],
            kinds: ['node-llama-cpp', 'llama-server'],
            turns: 5,
            answerTokens: 24,
          },
    ),
  rebuild: () => runRebuild({ model, slots: quick ? 2 : 4, contextSize: quick ? 1024 : 4096, historyTokens: quick ? 300 : 3000 }),
};

await mkdir(join(import.meta.dirname, 'results'), { recursive: true });
for (const name of selected) {
  const started = performance.now();
  const result = await benches[name]();
  const seconds = (performance.now() - started) / 1000;
  const record = { name, date: new Date().toISOString(), quick, machine, model: { size: sizeOf(name), spec: TEST_MODEL_SIZES[sizeOf(name)] }, seconds, result };
  await writeFile(join(import.meta.dirname, 'results', `${name}${quick ? '-quick' : ''}.json`), `${JSON.stringify(record, null, 2)}\n`);
  console.log(`\n## ${name} (${name === 'simulate' ? 'simulated engines' : `${sizeOf(name)} model`}, ${seconds.toFixed(1)} s)\n\n${result.text}`);
}
