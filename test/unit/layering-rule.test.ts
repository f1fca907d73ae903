/** The ESLint layering rule rejects imports across the process layers and accepts the allowed ones. */
import { ESLint } from 'eslint';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const eslint = new ESLint({ cwd: root });

async function layeringErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.filter((m) => m.ruleId === 'manifold/layering').map((m) => m.message);
}

describe('layering rule', () => {
  it('keeps electron out of core and engine-bin', async () => {
    expect(await layeringErrors('electron/core/x.ts', "import { app } from 'electron';\nexport { app };\n")).toEqual([
      'core may not import the package electron.',
    ]);
    expect(await layeringErrors('engine-bin/x.ts', "import 'electron';\n")).toHaveLength(1);
  });

  it('keeps Node modules and core out of the renderer', async () => {
    expect(await layeringErrors('renderer/x.ts', "import fs from 'node:fs';\nexport { fs };\n")).toEqual([
      'renderer runs outside Node and may not import the Node module node:fs.',
    ]);
    const errors = await layeringErrors('renderer/x.ts', "import { Tokenizer } from '../electron/core/tokenizer.js';\nexport { Tokenizer };\n");
    expect(errors[0]).toMatch(/^renderer may not import core/);
  });

  it('keeps engine-bin from importing core or the renderer, and common from importing Node', async () => {
    expect((await layeringErrors('engine-bin/x.ts', "import '../electron/core/tokenizer.js';\n"))[0]).toMatch(/^engine-bin may not import core/);
    expect((await layeringErrors('engine-bin/x.ts', "import '../renderer/x.js';\n"))[0]).toMatch(/^engine-bin may not import renderer/);
    expect(await layeringErrors('common/x.ts', "import 'node:path';\n")).toHaveLength(1);
  });

  it('keeps node-llama-cpp (native code that reads model files) out of the main process', async () => {
    expect(await layeringErrors('electron/core/x.ts', "import 'node-llama-cpp';\n")).toEqual(['core may not import the package node-llama-cpp.']);
    expect(await layeringErrors('electron/main.ts', "import { getLlama } from 'node-llama-cpp';\nexport { getLlama };\n")).toEqual(['shell may not import the package node-llama-cpp.']);
    expect(await layeringErrors('engine-bin/x.ts', "import 'node-llama-cpp';\n")).toEqual([]);
  });

  it('allows what the map allows', async () => {
    expect(await layeringErrors('electron/core/x.ts', "import '../../common/engine-protocol.js';\nimport 'node:fs';\n")).toEqual([]);
    expect(await layeringErrors('electron/main.ts', "import 'electron';\nimport './core/tokenizer.js';\n")).toEqual([]);
    expect(await layeringErrors('engine-bin/x.ts', "import '../common/node/gguf-file.js';\n")).toEqual([]);
    expect(await layeringErrors('test/x.ts', "import 'electron';\nimport '../renderer/x.js';\n")).toEqual([]);
  });
});
