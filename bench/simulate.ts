/**
 * simulate: Manifold's own router, dispatch plan and prefix index replayed over SIMULATED engines
 * (bench/simulate/: never an engine of the app or its tests) on a production trace, at 8 to 256 replicas:
 * each policy's prefix-cache hit (and its share of the trace's ceiling), TTFT, queue wait, throughput, load
 * spread and the router's own time per decision; the shared-prefix and multi-turn workloads at 8 replicas;
 * several fronts behind a balancer; and the router's cost at 256 replicas over 10 M indexed blocks.
 */
import { runRoute } from './route.js';
import { h100Llama8b, replicaCapacity } from './simulate/performance-models.js';
import { SIM_POLICIES, simulate, type SimulationOptions, type SimulationResult } from './simulate/simulation.js';
import { ceiling, chat, mooncake, tenants, type SimRequest } from './simulate/workloads.js';
import { table } from './stats.js';
import { validate, type ValidationOptions } from './simulate/validation.js';

export interface SimulateOptions {
  sizes: number[];
  /** Offered load as a share of the replicas' estimated capacity. */
  loads: number[];
  /** At most this many requests per run (the trace's first ones, in each copy). */
  maxRequests: number;
  /** The fronts experiment: replicas, fronts. */
  fronts: { replicas: number; fronts: number };
  /** Index blocks for the router's cost at 256 replicas (0: skip). */
  routeBlocks: number;
  /** The check against real engines (null: skip). */
  validation: ValidationOptions | null;
}

interface Row extends SimulationResult {
  workload: string;
  load: number;
  ceiling: number;
  variant: string;
}

const model = h100Llama8b;

/** Requests per second that offer `load` of the replicas' capacity without any cache hit (what a cluster is sized for). */
function rateFor(requests: readonly SimRequest[], replicas: number, load: number): number {
  const n = requests.length;
  const meanPrompt = requests.reduce((s, r) => s + r.promptTokens, 0) / n;
  const meanOutput = requests.reduce((s, r) => s + r.outputTokens, 0) / n;
  return load * replicaCapacity(model, meanPrompt, meanOutput, 0) * replicas;
}

/** The speedup of a trace's clock that offers `load`. */
function speedupFor(requests: readonly SimRequest[], replicas: number, load: number): number {
  const span = (requests.at(-1)!.arrivalMs - requests[0]!.arrivalMs) / 1000;
  return rateFor(requests, replicas, load) / (requests.length / span);
}

function run(workload: string, requests: readonly SimRequest[], replicas: number, load: number, extra: Partial<SimulationOptions> = {}, variant = ''): Row[] {
  const hitCeiling = ceiling(requests);
  const speedup = extra.speedup ?? speedupFor(requests, replicas, load);
  const policies = extra.policy ? [extra.policy] : SIM_POLICIES;
  return policies.map((policy) => {
    const started = performance.now();
    const result = simulate({ requests, replicas, model, policy, speedup, ...extra });
    console.error(`simulate: ${workload} × ${replicas} at ${load}: ${variant || policy} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return { workload, load, ceiling: hitCeiling, variant, ...result };
  });
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const rowCells = (r: Row): (string | number)[] => [
  r.workload,
  r.replicas,
  pct(r.load),
  r.variant || r.policy,
  pct(r.hit),
  pct(r.hit / r.ceiling),
  Math.round(r.ttftP50Ms),
  Math.round(r.ttftP90Ms),
  Math.round(r.ttftP99Ms),
  Math.round(r.queueP90Ms),
  Math.round(r.outputTokensPerSecond),
  r.loadSpread.toFixed(2),
  Math.round(r.decisionP50Us),
  Math.round(r.decisionP99Us),
];
const HEADERS = [
  'workload',
  'replicas',
  'load',
  'policy',
  'hit',
  'of ceiling',
  'TTFT p50 ms',
  'p90',
  'p99',
  'queue p90 ms',
  'out tok/s',
  'spread',
  'route p50 µs',
  'p99',
];

export async function runSimulate(options: SimulateOptions) {
  const rows: Row[] = [];
  /** Prefix routing over engines that copy a shared start between slots (not built: what it would gain). */
  const whatIf: Row[] = [];
  for (const replicas of options.sizes) {
    const copies = Math.max(1, Math.round(replicas / 8));
    const requests = mooncake(copies, Math.floor(options.maxRequests / copies));
    for (const load of options.loads) rows.push(...run('mooncake', requests, replicas, load));
    for (const load of options.loads) whatIf.push(...run('mooncake', requests, replicas, load, { policy: 'prefix', slotCopy: true }, 'prefix, slot copy'));
  }
  const small = Math.min(...options.sizes);
  const topLoad = Math.max(...options.loads);
  // These two are generated at the rate the load asks for (a chat's rounds keep their own pace: its clock is not sped up).
  const generated = Math.min(options.maxRequests, 4000);
  const tenantSample = tenants(generated, 1000);
  const durationMs = (n: number, sample: readonly SimRequest[]) => (n / rateFor(sample, small, topLoad)) * 1000;
  rows.push(...run('tenants', tenants(generated, durationMs(generated, tenantSample)), small, topLoad, { speedup: 1 }));
  const chatSample = chat(generated / 5, 1000);
  rows.push(...run('chat', chat(generated / 5, durationMs(generated, chatSample)), small, topLoad, { speedup: 1 }));

  // Several fronts behind a balancer, prefix routing.
  const { replicas: frontReplicas, fronts } = options.fronts;
  const copies = Math.max(1, Math.round(frontReplicas / 8));
  const frontRequests = mooncake(copies, Math.floor(options.maxRequests / copies));
  const frontRows: Row[] = [
    ...run('mooncake', frontRequests, frontReplicas, topLoad, { policy: 'prefix' }, '1 front'),
    ...run('mooncake', frontRequests, frontReplicas, topLoad, { policy: 'prefix', fronts, balancer: 'random', events: 'own' }, `${fronts} fronts, random`),
    ...run('mooncake', frontRequests, frontReplicas, topLoad, { policy: 'prefix', fronts, balancer: 'affinity', events: 'own' }, `${fronts} fronts, affinity`),
    ...run(
      'mooncake',
      frontRequests,
      frontReplicas,
      topLoad,
      { policy: 'prefix', fronts, balancer: 'random', events: 'shared' },
      `${fronts} fronts, random, shared events`,
    ),
    ...run(
      'mooncake',
      frontRequests,
      frontReplicas,
      topLoad,
      { policy: 'prefix', fronts, balancer: 'affinity', events: 'shared' },
      `${fronts} fronts, affinity, shared events`,
    ),
  ];

  const check = options.validation ? await validate(options.validation) : null;
  const within = (real: number, simulated: number): string => `${(100 * (simulated / real - 1)).toFixed(1)}%`;
  const route =
    options.routeBlocks > 0 ? runRoute({ kinds: ['exact'], replicas: [256], promptTokens: [8192], indexBlocks: [options.routeBlocks], decisions: 5000 }) : null;

  const text = [
    `SIMULATED engines: ${model.name}, ${model.slots} sequences each. Ceiling: the hit of one infinite cache (the oracle restores from it).`,
    table(HEADERS, rows.map(rowCells)),
    '',
    `Several fronts (${frontReplicas} replicas, load ${pct(topLoad)}, prefix routing):`,
    table(HEADERS, frontRows.map(rowCells)),
    '',
    'Where prefix routing missed the ceiling (shares of all prompt blocks: on the chosen replica but not reused, held by a free replica not chosen,',
    'only by busy ones, by none), and with engines that would copy a shared start between slots (what-if, not built):',
    table(
      ['workload', 'replicas', 'load', 'engines', 'hit', 'of ceiling', 'TTFT p90 ms', 'chosen', 'free elsewhere', 'busy only', 'nowhere'],
      [...rows.filter((r) => r.policy === 'prefix' && r.workload === 'mooncake'), ...whatIf].map((r) => [
        r.workload,
        r.replicas,
        pct(r.load),
        r.variant ? 'slot copy' : 'as built',
        pct(r.hit),
        pct(r.hit / r.ceiling),
        Math.round(r.ttftP90Ms),
        pct(r.missed!.chosen),
        pct(r.missed!.freeElsewhere),
        pct(r.missed!.busyOnly),
        pct(r.missed!.nowhere),
      ]),
    ),
    ...(route ? ['', 'Router cost at 256 replicas (exact index):', route.text] : []),
    ...(check
      ? [
          '',
          `The simulator against real engines (${check.model}):`,
          table(
            ['', 'hit', 'TTFT p50 ms', 'TTFT p90 ms'],
            [
              ['real', `${(100 * check.real.hit).toFixed(1)}%`, Math.round(check.real.ttftP50Ms), Math.round(check.real.ttftP90Ms)],
              ['simulated', `${(100 * check.simulated.hit).toFixed(1)}%`, Math.round(check.simulated.ttftP50Ms), Math.round(check.simulated.ttftP90Ms)],
              [
                'simulated − real',
                within(check.real.hit, check.simulated.hit),
                within(check.real.ttftP50Ms, check.simulated.ttftP50Ms),
                within(check.real.ttftP90Ms, check.simulated.ttftP90Ms),
              ],
            ],
          ),
        ]
      : []),
  ].join('\n');
  return { rows, whatIf, frontRows, route: route?.rows ?? null, validation: check, text };
}
