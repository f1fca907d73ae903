/**
 * The ESLint layering rule rejects imports across the process layers and between core's sub-layers
 * that the map does not allow, packages off a layer's allow-list, and core files in no sub-layer; it
 * accepts what the map allows. The map itself has no circle and names only sub-layers it defines.
 */
import { ESLint } from 'eslint';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coreSublayers, layers } from '../../build/eslint/layer-map.js';

const root = join(import.meta.dirname, '..', '..');
const eslint = new ESLint({ cwd: root });

async function layeringErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.filter((m) => m.ruleId === 'manifold/layering').map((m) => m.message);
}

describe('layering rule: process layers', () => {
  it('keeps electron out of core and engine-bin', async () => {
    expect(await layeringErrors('core/engine/x.ts', "import { app } from 'electron';\nexport { app };\n")).toEqual([
      'core/engine may not import the package electron; its packages: none.',
    ]);
    expect(await layeringErrors('engine-bin/x.ts', "import 'electron';\n")).toEqual([
      'engine-bin may not import the package electron; its packages: node-llama-cpp, zod.',
    ]);
  });

  it('keeps Node modules and core out of the renderer', async () => {
    expect(await layeringErrors('renderer/x.ts', "import fs from 'node:fs';\nexport { fs };\n")).toEqual([
      'renderer runs outside Node and may not import the Node module node:fs.',
    ]);
    const errors = await layeringErrors('renderer/x.ts', "import { Tokenizer } from '../core/tokenizer.js';\nexport { Tokenizer };\n");
    expect(errors[0]).toMatch(/^renderer may not import core/);
  });

  it('keeps engine-bin from importing core or the renderer, and common from importing Node', async () => {
    expect((await layeringErrors('engine-bin/x.ts', "import '../core/tokenizer.js';\n"))[0]).toMatch(/^engine-bin may not import core/);
    expect((await layeringErrors('engine-bin/x.ts', "import '../renderer/x.js';\n"))[0]).toMatch(/^engine-bin may not import renderer/);
    expect(await layeringErrors('common/x.ts', "import 'node:path';\n")).toHaveLength(1);
  });

  it('keeps node-llama-cpp (native code that reads model files) out of the main process', async () => {
    expect(await layeringErrors('core/tokenizer.ts', "import 'node-llama-cpp';\n")).toEqual([
      'core/tokenizer may not import the package node-llama-cpp; its packages: none.',
    ]);
    expect(await layeringErrors('electron/main.ts', "import 'node-llama-cpp';\n")).toEqual([
      'shell may not import the package node-llama-cpp; its packages: electron.',
    ]);
    expect(await layeringErrors('engine-bin/x.ts', "import 'node-llama-cpp';\n")).toEqual([]);
  });

  it('lets each layer import only the packages on its allow-list', async () => {
    expect(await layeringErrors('renderer/x.ts', "import 'lodash';\n")).toEqual([
      'renderer may not import the package lodash; its packages: react, react-dom, zustand, recharts.',
    ]);
    expect(await layeringErrors('renderer/x.ts', "import 'zustand/vanilla';\nimport 'react-dom/client';\n")).toEqual([]);
    expect(await layeringErrors('electron/main.ts', "import 'ws';\n")).toEqual(['shell may not import the package ws; its packages: electron.']);
    expect(await layeringErrors('common/x.ts', "import 'ws';\n")).toHaveLength(1);
    expect(await layeringErrors('native/x.ts', "import 'koffi';\n")).toEqual([]);
  });

  it('allows what the map allows', async () => {
    expect(await layeringErrors('core/replicas/x.ts', "import '../../../common/engine-protocol.js';\nimport 'node:fs';\n")).toEqual([]);
    expect(await layeringErrors('engine-bin/tokenizer-host.ts', "import 'node-llama-cpp';\nimport 'zod';\n")).toEqual([]);
    expect(await layeringErrors('electron/main.ts', "import 'electron';\nimport '../core/tokenizer.js';\n")).toEqual([]);
    expect(await layeringErrors('engine-bin/x.ts', "import '../common/node/gguf-file.js';\n")).toEqual([]);
    expect(await layeringErrors('test/x.ts', "import 'electron';\nimport '../renderer/x.js';\n")).toEqual([]);
  });
});

describe('layering rule: core sub-layers', () => {
  it('forbids the chat ⇄ workstation circle', async () => {
    expect(await layeringErrors('core/chat/chat-service.ts', "import type { Workstation } from '../workstation.js';\nexport type { Workstation };\n")).toEqual([
      'core/chat may not import core/workstation (../workstation.js); core/chat may import: core/chat/atomic-file, core/open-generations.',
    ]);
    expect(await layeringErrors('core/chat/chat-service.ts', "import './chat-backend.js';\nimport './atomic-file.js';\n")).toEqual([]);
    expect(await layeringErrors('core/workstation.ts', "import './chat/chat-service.js';\n")).toEqual([]);
  });

  it('keeps engine/ and supervisor/ below the replicas, the front, the chat and the workstation', async () => {
    for (const from of ['core/engine/x.ts', 'core/supervisor/x.ts']) {
      for (const target of ['../replicas/replica-set.js', '../http/front-server.js', '../chat/chat-service.js', '../workstation.js']) {
        expect(await layeringErrors(from, `import '${target}';\n`)).toHaveLength(1);
      }
    }
    expect(await layeringErrors('core/supervisor/x.ts', "import '../engine/engine-client.js';\nimport '../logging/core-log.js';\n")).toEqual([]);
  });

  it('keeps the router pure and the queue below the replicas', async () => {
    expect((await layeringErrors('core/router/x.ts', "import '../engine/engine-client.js';\n"))[0]).toMatch(/^core\/router may not import core\/engine/);
    expect(await layeringErrors('core/queue/x.ts', "import '../router/router.js';\nimport '../../../common/contract.js';\n")).toEqual([]);
    expect((await layeringErrors('core/queue/x.ts', "import '../replicas/replica-set.js';\n"))[0]).toMatch(/^core\/queue may not import core\/replicas/);
    expect((await layeringErrors('core/queue/x.ts', "import '../engine/engine-client.js';\n"))[0]).toMatch(/^core\/queue may not import core\/engine/);
    expect(
      await layeringErrors(
        'core/replicas/x.ts',
        [
          'queue/request-queue',
          'router/router',
          'engine/engine-client',
          'supervisor/child-life',
          'rebuild/barrier',
          'cpu/cpu-pinning',
          'config/run-config',
          'gpu/gpu-report',
        ]
          .map((m) => `import '../${m}.js';`)
          .join('\n'),
      ),
    ).toEqual([]);
  });

  it('lets only serve.ts import the HTTP front', async () => {
    expect(await layeringErrors('core/serve.ts', "import './http/front-server.js';\n")).toEqual([]);
    expect((await layeringErrors('core/workstation.ts', "import './http/front-server.js';\n"))[0]).toMatch(/^core\/workstation may not import core\/http/);
    expect(await layeringErrors('core/http/x.ts', "import '../workstation.js';\nimport '../replicas/replica-set.js';\nimport 'ws';\n")).toEqual([]);
  });

  it('keeps each package in the sub-layers that list it', async () => {
    expect(await layeringErrors('core/replicas/x.ts', "import 'ws';\n")).toEqual(['core/replicas may not import the package ws; its packages: none.']);
    expect(await layeringErrors('core/logging/x.ts', "import 'pino';\n")).toEqual([]);
  });

  it('puts a file or a folder of the same name in one sub-layer, and refuses a core file in none', async () => {
    expect(await layeringErrors('core/tokenizer/client.ts', "import '../supervisor/child-life.js';\n")).toEqual([]);
    expect(await layeringErrors('core/tokenizer.ts', "import './supervisor/child-life.js';\n")).toEqual([]);
    expect(await layeringErrors('core/new-thing.ts', 'export const x = 1;\n')).toEqual([
      'core/new-thing is in no sub-layer of core: add it to the map in build/eslint/layer-map.js.',
    ]);
  });
});

describe('the allow-map', () => {
  it('names only sub-layers it defines, lists packages the layer allows, and has no circle', () => {
    const core = layers.find((l) => l.name === 'core')!;
    const names = new Set(coreSublayers.map((s) => s.name));
    for (const sub of coreSublayers) {
      for (const target of sub.allow) expect(names, `${sub.name} allows ${target}`).toContain(target);
      for (const pkg of sub.packages ?? []) expect(core.packages, `${sub.name} lists ${pkg}`).toContain(pkg);
    }
    // Depth-first search for a back edge.
    const state = new Map<string, 'open' | 'done'>();
    const visit = (name: string, trail: string[]): void => {
      if (state.get(name) === 'done') return;
      expect(state.get(name), `circle: ${[...trail, name].join(' → ')}`).not.toBe('open');
      state.set(name, 'open');
      for (const next of coreSublayers.find((s) => s.name === name)!.allow) visit(next, [...trail, name]);
      state.set(name, 'done');
    };
    for (const sub of coreSublayers) visit(sub.name, []);
  });
});
