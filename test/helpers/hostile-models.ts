/**
 * Test helper: hostile GGUFs — the generated tiny model with one hyper-parameter changed — for the header
 * bounds, the tokenizer child's probe, `serve --model` and the loader. Each says what the header check
 * answers, and whether llama.cpp aborts on it (a GGML_ASSERT) when the bounds are bypassed.
 */
import { join } from 'node:path';
import { gguf, writeGguf, type GgufWriteValue } from '../../build/gguf-writer.js';
import { describeTestModel, TEST_MODEL_SIZES } from '../../build/test-model.js';

export interface HostileModel {
  name: string;
  /** Metadata entries replaced (or added) in the tiny model. */
  change: [string, GgufWriteValue][];
  /** What the header check says; null when the header passes and only llama.cpp can tell (the weights probe). */
  problem: RegExp | null;
  /** Whether llama.cpp aborts the process on it (measured with node-llama-cpp 3.21.1), else refuses with an error. */
  aborts: boolean;
}

/** The three hostile files of issue 14, first. */
export const HOSTILE_MODELS: readonly HostileModel[] = [
  {
    name: 'layers-600',
    change: [['llama.block_count', gguf.u32(600)]],
    problem: /llama\.block_count = 600 is outside 1\.\.512 \(llama\.cpp's LLAMA_MAX_LAYERS\)/,
    aborts: true,
  },
  { name: 'heads-0', change: [['llama.attention.head_count', gguf.u32(0)]], problem: /llama\.attention\.head_count = 0 must be at least 1/, aborts: true },
  {
    name: 'experts-0-used-4',
    change: [
      ['llama.expert_count', gguf.u32(0)],
      ['llama.expert_used_count', gguf.u32(4)],
    ],
    problem: /llama\.expert_used_count = 4 is more than llama\.expert_count = 0/,
    aborts: true,
  },
  {
    name: 'kv-heads-3',
    change: [['llama.attention.head_count_kv', gguf.u32(3)]],
    problem: /llama\.attention\.head_count_kv = 3 does not divide llama\.attention\.head_count = 4/,
    aborts: false,
  },
  { name: 'embedding-0', change: [['llama.embedding_length', gguf.u32(0)]], problem: /llama\.embedding_length = 0 must be at least 1/, aborts: false },
  { name: 'feed-forward-0', change: [['llama.feed_forward_length', gguf.u32(0)]], problem: /llama\.feed_forward_length = 0 must be at least 1/, aborts: true },
  {
    name: 'rope-scaling-bogus',
    change: [['llama.rope.scaling.type', gguf.str('bogus')]],
    problem: /llama\.rope\.scaling\.type = "bogus" is not one of none, linear, yarn, longrope/,
    aborts: true,
  },
  {
    name: 'experts-1100',
    change: [
      ['llama.expert_count', gguf.u32(1100)],
      ['llama.expert_used_count', gguf.u32(2)],
    ],
    problem: /llama\.expert_count = 1100 is more than 1024 \(llama\.cpp's LLAMA_MAX_EXPERTS\)/,
    aborts: true,
  },
  {
    name: 'expert-groups-8-of-4',
    change: [
      ['llama.expert_count', gguf.u32(4)],
      ['llama.expert_used_count', gguf.u32(2)],
      ['llama.expert_group_count', gguf.u32(8)],
    ],
    problem: /llama\.expert_group_count = 8 must be less than llama\.expert_count = 4/,
    aborts: true,
  },
  // Within every bound, but the metadata does not match the tensors: only loading the weights finds it.
  { name: 'feed-forward-512', change: [['llama.feed_forward_length', gguf.u32(512)]], problem: null, aborts: false },
];

export const hostile = (name: string): HostileModel => HOSTILE_MODELS.find((m) => m.name === name)!;

/** Writes `model` into `dir` (as `<name>.gguf`) and returns its path. */
export async function writeHostileModel(dir: string, model: HostileModel): Promise<string> {
  const { metadata, tensors } = describeTestModel(TEST_MODEL_SIZES.tiny);
  const changed = new Map(model.change);
  const entries = metadata.map(([key, value]): [string, GgufWriteValue] => [key, changed.get(key) ?? value]);
  for (const [key, value] of model.change) if (!metadata.some(([k]) => k === key)) entries.push([key, value]);
  const path = join(dir, `${model.name}.gguf`);
  await writeGguf(path, entries, tensors);
  return path;
}
