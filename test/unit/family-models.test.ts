/** Family test models: a real vocabulary and chat template from llama.cpp's source, grafted onto the random test weights. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufTokenType, GgufValueType } from '../../common/gguf/format.js';
import { DEFAULT_GGUF_READ_LIMITS, metadataArrayLength } from '../../common/gguf/header-reader.js';
import { readGgufFileHeader } from '../../common/node/gguf-file.js';
import { FAMILY_MODEL_SPEC, FAMILY_MODELS, describeFamilyModel, isUnsamplableToken, writeFamilyModel } from '../../build/family-models.js';
import { ensureLlamaCppSource, templateNames, templatePath, vocabPath } from '../../build/llama-cpp-source.js';

const keepAll = { ...DEFAULT_GGUF_READ_LIMITS, keepArrayItems: Number.MAX_SAFE_INTEGER };

let dir: string;
let source: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'manifold-family-'));
  source = await ensureLlamaCppSource();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('family models', () => {
  it('have a family for every chat template in llama.cpp, each template and vocab a file there', async () => {
    const used = Object.values(FAMILY_MODELS).map((family) => family.template);
    expect([...used].sort()).toEqual(await templateNames(source));
    for (const { vocab } of Object.values(FAMILY_MODELS)) await expect(readFile(vocabPath(source, vocab))).resolves.toBeDefined();
  });

  it('copy every tokenizer key of the vocab with its type, the template, and size the model to the vocabulary (phi-3.5)', async () => {
    const path = join(dir, 'phi-3.5.gguf');
    await writeFamilyModel(path, 'phi-3.5');
    const model = await readGgufFileHeader(path, keepAll);
    const vocab = await readGgufFileHeader(vocabPath(source, FAMILY_MODELS['phi-3.5'].vocab), keepAll);

    const copied = [...vocab.metadata.keys()].filter((key) => key.startsWith('tokenizer.') && !key.startsWith('tokenizer.chat_template'));
    expect(copied).toEqual(
      expect.arrayContaining([
        'tokenizer.ggml.model',
        'tokenizer.ggml.tokens',
        'tokenizer.ggml.scores',
        'tokenizer.ggml.token_type',
        'tokenizer.ggml.eos_token_id',
      ]),
    );
    for (const key of copied) {
      expect(model.metadata.get(key), key).toEqual(vocab.metadata.get(key));
      expect(model.metadataTypes.get(key), key).toEqual(vocab.metadataTypes.get(key));
    }
    expect(model.metadata.get('tokenizer.chat_template')).toBe(await readFile(templatePath(source, FAMILY_MODELS['phi-3.5'].template), 'utf8'));
    expect(model.metadata.get('general.name')).toBe('manifold-test-phi-3.5');

    const tokenCount = metadataArrayLength(vocab.metadata.get('tokenizer.ggml.tokens'));
    expect(tokenCount).toBe(32064);
    expect(model.metadata.get('llama.vocab_size')).toBe(tokenCount);
    expect(model.metadata.get('llama.embedding_length')).toBe(FAMILY_MODEL_SPEC.width);
    expect(model.tensors.find((t) => t.name === 'token_embd.weight')?.dims).toEqual([FAMILY_MODEL_SPEC.width, tokenCount]);
    expect(model.tensors.find((t) => t.name === 'output.weight')?.dims).toEqual([FAMILY_MODEL_SPEC.width, tokenCount]);
  });

  it("puts Qwen3's added tokens over the qwen2 vocab's placeholders, typed as llama.cpp's converter types them", async () => {
    const { template, vocab } = FAMILY_MODELS.qwen3;
    const { metadata } = await describeFamilyModel('qwen3', await readFile(templatePath(source, template), 'utf8'), await readFile(vocabPath(source, vocab)));
    const items = (key: string): readonly unknown[] => {
      const value = metadata.find(([k]) => k === key)?.[1];
      return value?.type === GgufValueType.ARRAY ? value.items : [];
    };
    const [tokens, types] = [items('tokenizer.ggml.tokens'), items('tokenizer.ggml.token_type')];
    expect([tokens[151644], types[151644]]).toEqual(['<|im_start|>', GgufTokenType.CONTROL]);
    expect([tokens[151657], types[151657]]).toEqual(['<tool_call>', GgufTokenType.USER_DEFINED]);
    expect([tokens[151667], types[151667]]).toEqual(['<think>', GgufTokenType.USER_DEFINED]);
    expect([tokens[151652], types[151652]]).toEqual(['<|vision_start|>', GgufTokenType.CONTROL]);
    expect(tokens[151669]).toBe('[PAD151669]');
  });

  it('never sample byte, unused or unknown tokens, nor a byte-level piece that is not whole UTF-8 on its own', () => {
    const { NORMAL, CONTROL, USER_DEFINED, BYTE, UNUSED, UNKNOWN } = GgufTokenType;
    // Byte-level BPE (GPT-2's alphabet: Ġ is a space, Ã© the two bytes of é, âĢ the first two of a three-byte character).
    expect(isUnsamplableToken('gpt2', 'Ġhello', NORMAL)).toBe(false);
    expect(isUnsamplableToken('gpt2', 'Ã©', NORMAL)).toBe(false);
    expect(isUnsamplableToken('gpt2', 'Ã', NORMAL)).toBe(true);
    expect(isUnsamplableToken('gpt2', 'ĠâĢ', NORMAL)).toBe(true);
    expect(isUnsamplableToken('gpt2', 'é', NORMAL)).toBe(true); // the lone byte 0xE9
    expect(isUnsamplableToken('gpt2', '中', NORMAL)).toBe(true); // not in the alphabet
    // Control and user-defined tokens are printed as they are written, so they stay samplable.
    expect(isUnsamplableToken('gpt2', '<|im_end|>', CONTROL)).toBe(false);
    expect(isUnsamplableToken('gpt2', '<think>', USER_DEFINED)).toBe(false);
    // SentencePiece-style vocabularies: pieces are text already; byte tokens are not.
    expect(isUnsamplableToken('llama', '▁hello', NORMAL)).toBe(false);
    expect(isUnsamplableToken('llama', '<0xE4>', BYTE)).toBe(true);
    expect(isUnsamplableToken('gemma4', '<0x00>', BYTE)).toBe(true);
    expect(isUnsamplableToken('llama', '<unk>', UNKNOWN)).toBe(true);
    expect(isUnsamplableToken('llama', '[PAD32011]', UNUSED)).toBe(true);
  });
});
