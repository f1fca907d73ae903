/**
 * gpu: part 1 of `peer` where node-llama-cpp finds a GPU (Vulkan, CUDA or Metal): one Manifold replica on
 * card 0 (all layers offloaded, S slots) against node-llama-cpp driven in this process on the same card,
 * model, context and batch order, through HTTP with SSE and the `openai` client: one stream alone
 * (decode tok/s, TTFT) and S fresh prompts at once (total output rate), rounds alternating which path goes
 * first. Decode is set against the card's memory-bandwidth roofline: each token reads every weight but the
 * token embeddings' (one row) plus the KV cache written so far. Skips, saying why, without a GPU.
 */
import OpenAI from 'openai';
import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';
import { inProcessStream, type InProcessStream as Stream } from './in-process.js';
import { readModelFileHeader } from '../common/node/gguf-file.js';
import { metadataNumber } from '../common/gguf/header-reader.js';
import { withServed } from './served-replicas.js';
import { mean, percentile, seeded, table } from './stats.js';
import { freshPrompts as prompts, streamRequest, type ClientTarget } from './workload.js';

export interface GpuModel {
  name: string;
  /** Made (or found in the cache) only once a GPU is found: the large one takes a minute to write. */
  path: () => Promise<string>;
}

export interface GpuOptions {
  models: readonly GpuModel[];
  slots: number;
  contextSize: number;
  promptTokens: number;
  answerTokens: number;
  rounds: number;
  /** The card's memory bandwidth in GB/s (measured or from its datasheet), for the roofline; null: no roofline. */
  bandwidthGBps: number | null;
  seed: number;
}

interface Batch {
  streams: Stream[];
  wallMs: number;
}

type Path = 'in-process' | 'Manifold';

/** Bytes one decoded token reads: the weights but the embeddings' table (one row of it), and the KV cache so far. */
async function bytesPerToken(path: string, contextTokens: number): Promise<number> {
  const header = await readModelFileHeader(path);
  const weightBytes = header.tensors.filter((t) => t.name !== 'token_embd.weight').reduce((sum, t) => sum + t.bytes, 0);
  const arch = String(header.metadata.get('general.architecture'));
  const layers = metadataNumber(header, `${arch}.block_count`) ?? 0;
  const width = metadataNumber(header, `${arch}.embedding_length`) ?? 0;
  const heads = metadataNumber(header, `${arch}.attention.head_count`) ?? 1;
  const kvHeads = metadataNumber(header, `${arch}.attention.head_count_kv`) ?? heads;
  // K and V, F16 (the engine's default KV type).
  const kvBytesPerToken = layers * kvHeads * (width / heads) * 2 * 2;
  return weightBytes + kvBytesPerToken * contextTokens;
}

async function httpStream(client: OpenAI, target: ClientTarget, prompt: number[], answerTokens: number, seed: number): Promise<Stream> {
  // Greedy, as the in-process path samples.
  const result = await streamRequest(client, target.model, { kind: 'completion', prompt }, answerTokens, seed, { temperature: 0 });
  if (result.error !== null) throw new Error(`Manifold failed a request: ${result.error}`);
  return { ttftMs: result.ttftMs, decodeTokensPerSecond: result.decodeTokensPerSecond, tokens: result.completionTokens };
}

async function batch(run: (prompt: number[], i: number) => Promise<Stream>, batchPrompts: number[][]): Promise<Batch> {
  const started = performance.now();
  const streams = await Promise.all(batchPrompts.map(run));
  return { streams, wallMs: performance.now() - started };
}

async function measureModel(llama: Llama, name: string, path: string, options: GpuOptions) {
  const random = seeded(options.seed);
  const backend = llama.gpu;
  const device = (await llama.getGpuDeviceNames()).join(', ');
  const loaded = await llama.loadModel({ modelPath: path });
  // As the engine creates its context (engine-bin/model-context.ts): S sequences, prompts in arrival order.
  const context = await loaded.createContext({
    contextSize: options.contextSize,
    sequences: options.slots,
    batching: { itemPrioritizationStrategy: 'firstInFirstOut' },
  });
  const sequences = Array.from({ length: options.slots }, () => context.getSequence());
  const lone: Record<Path, Stream[]> = { 'in-process': [], Manifold: [] };
  const together: Record<Path, Batch[]> = { 'in-process': [], Manifold: [] };
  try {
    await withServed({ model: path, gpu: [0], replicas: 1, engine: { slots: options.slots, contextSize: options.contextSize } }, async (target) => {
      const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'bench', maxRetries: 0 });
      const paths: Record<Path, { one: (prompt: number[]) => Promise<Stream>; many: (ps: number[][]) => Promise<Batch> }> = {
        'in-process': {
          one: (prompt) => inProcessStream(sequences[0]!, prompt, options.answerTokens),
          many: (ps) => batch((prompt, i) => inProcessStream(sequences[i]!, prompt, options.answerTokens), ps),
        },
        Manifold: {
          one: (prompt) => httpStream(client, target, prompt, options.answerTokens, options.seed),
          many: (ps) => batch((prompt, i) => httpStream(client, target, prompt, options.answerTokens, options.seed + i), ps),
        },
      };
      // Warm-up of both paths (shaders compiled, buffers sized), not counted.
      for (const path of ['in-process', 'Manifold'] as const) {
        await paths[path].one(prompts(1, 32, random)[0]!);
        await paths[path].many(prompts(options.slots, 32, random));
      }
      for (let round = 0; round < options.rounds; round++) {
        const order: Path[] = round % 2 === 0 ? ['in-process', 'Manifold'] : ['Manifold', 'in-process'];
        const single = prompts(1, options.promptTokens, random)[0]!;
        const many = prompts(options.slots, options.promptTokens, random);
        for (const path of order) lone[path].push(await paths[path].one(single));
        for (const path of order) together[path].push(await paths[path].many(many));
      }
    });
  } finally {
    await context.dispose();
    await loaded.dispose();
  }
  const bytesRead = await bytesPerToken(path, options.promptTokens + options.answerTokens / 2);
  const rooflineTokensPerSecond = options.bandwidthGBps === null ? Number.NaN : (options.bandwidthGBps * 1e9) / bytesRead;
  const summarise = (path: Path) => {
    const streams = together[path].flatMap((b) => b.streams);
    const outputTokens = streams.reduce((sum, s) => sum + s.tokens, 0);
    return {
      path,
      loneTtftP50Ms: percentile(
        lone[path].map((s) => s.ttftMs),
        50,
      ),
      loneDecodeTokensPerSecond: mean(lone[path].map((s) => s.decodeTokensPerSecond)),
      togetherTtftP50Ms: percentile(
        streams.map((s) => s.ttftMs),
        50,
      ),
      togetherOutputTokensPerSecond: (outputTokens * 1000) / together[path].reduce((sum, b) => sum + b.wallMs, 0),
    };
  };
  const rows = [summarise('in-process'), summarise('Manifold')];
  const [local, served] = rows as [ReturnType<typeof summarise>, ReturnType<typeof summarise>];
  return {
    model: name,
    backend,
    device,
    bytesPerToken: bytesRead,
    rooflineTokensPerSecond,
    rows,
    lone,
    together,
    ratios: {
      loneDecode: served.loneDecodeTokensPerSecond / local.loneDecodeTokensPerSecond,
      loneTtftDeltaMs: served.loneTtftP50Ms - local.loneTtftP50Ms,
      togetherOutput: served.togetherOutputTokensPerSecond / local.togetherOutputTokensPerSecond,
      loneDecodeOfRoofline: local.loneDecodeTokensPerSecond / rooflineTokensPerSecond,
      servedDecodeOfRoofline: served.loneDecodeTokensPerSecond / rooflineTokensPerSecond,
    },
  };
}

export async function runGpu(options: GpuOptions) {
  const llama = await getLlama({ gpu: 'auto', build: 'never', logLevel: LlamaLogLevel.error });
  const models = [];
  try {
    if (llama.gpu === false) {
      const reason = 'skipped: node-llama-cpp found no GPU backend here (the CPU build loaded); run it on a machine with a card';
      return { config: options, skipped: reason, text: reason };
    }
    for (const model of options.models) models.push(await measureModel(llama, model.name, await model.path(), options));
  } finally {
    await llama.dispose();
  }
  const text = models
    .map((m) => {
      const head = `${m.model}: ${m.backend} on ${m.device}; ${(m.bytesPerToken / 1e6).toFixed(1)} MB read per token, roofline ${m.rooflineTokensPerSecond.toFixed(0)} tok/s at ${options.bandwidthGBps ?? '-'} GB/s`;
      const body = table(
        ['path', 'one stream: TTFT p50 ms', 'decode tok/s', '% of roofline', `${options.slots} at once: TTFT p50 ms`, 'output tok/s'],
        m.rows.map((r) => [
          r.path,
          r.loneTtftP50Ms,
          r.loneDecodeTokensPerSecond,
          (100 * r.loneDecodeTokensPerSecond) / m.rooflineTokensPerSecond,
          r.togetherTtftP50Ms,
          r.togetherOutputTokensPerSecond,
        ]),
      );
      const verdict = `Manifold / in-process: one-stream decode ${m.ratios.loneDecode.toFixed(3)}×, TTFT ${m.ratios.loneTtftDeltaMs >= 0 ? '+' : ''}${m.ratios.loneTtftDeltaMs.toFixed(1)} ms, ${options.slots} at once output ${m.ratios.togetherOutput.toFixed(3)}×`;
      return `${head}\n\n${body}\n\n${verdict}`;
    })
    .join('\n\n');
  return { config: options, models, text };
}
