/**
 * How a `llama-server` replica is launched: its command line from the load options, its private folder
 * and where it listens, where its binary is found, and the config error when it is not.
 */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledLlamaCommit, findLlamaServer } from '../../common/node/llama-server-binary.js';
import { ConfigError, parseRunConfig } from '../../core/config/run-config.js';
import { cacheRamMib, llamaServerArgs, promptCacheLimits, resolvedFlashAttention } from '../../core/llama-server/llama-server-args.js';
import { listenIn, makeChildFolder, slotFolderIn } from '../../core/llama-server/llama-server-folder.js';
import { readyInfoOf } from '../../core/llama-server/llama-server-ready-info.js';
import { ReplicaSet } from '../../core/replicas/replica-set.js';

const savedBinary = process.env.MANIFOLD_LLAMA_SERVER;
afterEach(() => {
  if (savedBinary === undefined) delete process.env.MANIFOLD_LLAMA_SERVER;
  else process.env.MANIFOLD_LLAMA_SERVER = savedBinary;
});

describe('llama-server replicas', () => {
  it('gives each slot its share of -c, on its Unix socket or a loopback port, with its slot folder, the budget of its prompt cache and the engine options in llama.cpp flags', () => {
    expect(
      llamaServerArgs(
        { modelPath: '/proc/1/fd/9', slots: 4, contextSize: 1024, threads: 1, gpuLayers: 0 },
        { socketPath: '/tmp/r0/http.sock' },
        '/tmp/r0',
        8192,
      ),
    ).toEqual([
      '-m',
      '/proc/1/fd/9',
      '--host',
      '/tmp/r0/http.sock',
      '-np',
      '4',
      '-c',
      '4096',
      '--no-kv-unified',
      '--no-webui',
      '--slot-save-path',
      '/tmp/r0',
      '--cache-ram',
      '8192',
      '-sps',
      '0.1',
      '-t',
      '1',
      '-ngl',
      '0',
      '-fa',
      'off',
      '-ctk',
      'f16',
      '-ctv',
      'f16',
    ]);
    expect(
      llamaServerArgs({ modelPath: '/proc/1/fd/9', slots: 4, contextSize: 1024, threads: 1, gpuLayers: 0 }, { port: 4321 }, '/tmp/slots-r0', 8192),
    ).toEqual([
      '-m',
      '/proc/1/fd/9',
      '--host',
      '127.0.0.1',
      '--port',
      '4321',
      '-np',
      '4',
      '-c',
      '4096',
      '--no-kv-unified',
      '--no-webui',
      '--slot-save-path',
      '/tmp/slots-r0',
      '--cache-ram',
      '8192',
      '-sps',
      '0.1',
      '-t',
      '1',
      '-ngl',
      '0',
      '-fa',
      'off',
      '-ctk',
      'f16',
      '-ctv',
      'f16',
    ]);
    // Flash attention asked for on the CPU is kept; on a GPU, auto is llama.cpp's.
    expect(llamaServerArgs({ modelPath: 'm.gguf', gpuLayers: 0, flashAttention: true }, { port: 1 }, 's', 8192).join(' ')).toContain('-fa on');
    expect(llamaServerArgs({ modelPath: 'm.gguf', gpuLayers: 99 }, { port: 1 }, 's', 8192).join(' ')).toContain('-fa auto');
    // threads 0 and gpuLayers auto are llama.cpp's own choice: no flag.
    const args = llamaServerArgs({ modelPath: 'm.gguf', batchSize: 256, flashAttention: true, kvType: 'q8_0' }, { port: 1 }, 's', 8192);
    expect(args).not.toContain('-t');
    expect(args).not.toContain('-ngl');
    expect(args.join(' ')).toContain('-np 1 -c 4096 --no-kv-unified --no-webui --slot-save-path s --cache-ram 8192 -sps 0.1 -b 256 -fa on -ctk q8_0 -ctv q8_0');
  });

  it('turns flash attention off on the CPU with an unquantized KV cache unless asked for, and leaves auto to llama.cpp elsewhere', () => {
    expect(resolvedFlashAttention({ flashAttention: 'auto', gpuLayers: 0, kvType: 'f16' })).toBe(false);
    expect(resolvedFlashAttention({ flashAttention: 'auto', gpuLayers: 0, kvType: 'f32' })).toBe(false);
    // Layers that may be on a GPU, or a quantized KV cache (which needs flash attention): llama.cpp's auto.
    expect(resolvedFlashAttention({ flashAttention: 'auto', gpuLayers: 'auto', kvType: 'f16' })).toBe('auto');
    expect(resolvedFlashAttention({ flashAttention: 'auto', gpuLayers: 40, kvType: 'f16' })).toBe('auto');
    expect(resolvedFlashAttention({ flashAttention: 'auto', gpuLayers: 0, kvType: 'q8_0' })).toBe('auto');
    expect(resolvedFlashAttention({ flashAttention: 'auto', gpuLayers: 0, kvType: 'q4_0' })).toBe('auto');
    // An explicit choice is kept.
    expect(resolvedFlashAttention({ flashAttention: true, gpuLayers: 0, kvType: 'f16' })).toBe(true);
    expect(resolvedFlashAttention({ flashAttention: false, gpuLayers: 'auto', kvType: 'f16' })).toBe(false);
    // On the command line.
    expect(llamaServerArgs({ modelPath: 'm.gguf', gpuLayers: 0, kvType: 'q8_0' }, { port: 1 }, 's', 8192).join(' ')).toContain('-fa auto');
    expect(llamaServerArgs({ modelPath: 'm.gguf', gpuLayers: 'auto', flashAttention: false }, { port: 1 }, 's', 8192).join(' ')).toContain('-fa off');
  });

  it("counts the prompt cache's budget less a copy of every slot, by the model's KV bytes a token (llama-server's floor without them)", () => {
    const gib8 = 8192 * 1024 * 1024;
    expect(promptCacheLimits({ modelPath: 'm.gguf', slots: 4, contextSize: 1024 }, 1000, 8192)).toEqual({
      budgetBytes: gib8 - 4096 * 1000,
      bytesPerToken: 1000,
    });
    expect(promptCacheLimits({ modelPath: 'm.gguf', slots: 4, contextSize: 1024 }, null, 8192)).toEqual({ budgetBytes: gib8, bytesPerToken: gib8 / 4096 });
    expect(promptCacheLimits({ modelPath: 'm.gguf', slots: 8, contextSize: 1 << 20 }, 4096, 8192)?.budgetBytes).toBe(0);
  });

  it("takes the prompt cache's size from the run config's RAM budget when it sets one (rounded up to MiB, 0 off), llama.cpp's 8 GiB when not", () => {
    expect(cacheRamMib(undefined)).toBe(8192);
    expect(cacheRamMib({})).toBe(8192);
    // diskBytes alone leaves llama-server's default: it has no disk tier.
    expect(cacheRamMib({ diskBytes: 0 })).toBe(8192);
    expect(cacheRamMib({ ramBytes: 512 * 2 ** 20 })).toBe(512);
    expect(cacheRamMib({ ramBytes: 512 * 2 ** 20 + 1 })).toBe(513);
    expect(cacheRamMib({ ramBytes: 1 })).toBe(1);
    expect(cacheRamMib({ ramBytes: 0 })).toBe(0);
    expect(cacheRamMib({ ramBytes: Number.MAX_SAFE_INTEGER })).toBe(2 ** 31 - 1);
    // The run config's budgets as parsed, no default filled in (a node-llama-cpp engine's is 512 MiB).
    expect(cacheRamMib(parseRunConfig({ model: 'm.gguf', engine: { kind: 'llama-server', prefixCache: { ramBytes: 2 ** 30 } } }).engine?.prefixCache)).toBe(
      1024,
    );
    expect(cacheRamMib(parseRunConfig({ model: 'm.gguf', engine: { kind: 'llama-server' } }).engine?.prefixCache)).toBe(8192);
    expect(llamaServerArgs({ modelPath: 'm.gguf' }, { port: 1 }, 's', 0).join(' ')).toContain('--cache-ram 0 -sps 0.1');
    // The mirror counts with the same size, and keeps nothing when the cache is off.
    expect(promptCacheLimits({ modelPath: 'm.gguf', slots: 1, contextSize: 1024 }, 1000, 1024)).toEqual({
      budgetBytes: 2 ** 30 - 1024 * 1000,
      bytesPerToken: 1000,
    });
    expect(promptCacheLimits({ modelPath: 'm.gguf' }, 1000, 0)).toBeNull();
  });

  it('makes a private folder with a slot folder, listens on a socket there (the stale one gone), and on a loopback port where the path is too long', async () => {
    const folder = await makeChildFolder(3);
    try {
      expect(folder).toContain('manifold-llama-server-r3-');
      expect(statSync(folder).mode & 0o777).toBe(0o700);
      expect(statSync(slotFolderIn(folder)).isDirectory()).toBe(true);
      if (process.platform !== 'win32') {
        writeFileSync(join(folder, 'http.sock'), 'left by a killed child');
        const { listen, peer } = await listenIn(folder);
        expect(listen).toEqual({ socketPath: join(folder, 'http.sock') });
        expect(peer.socketPath).toBe(join(folder, 'http.sock'));
        expect(existsSync(join(folder, 'http.sock'))).toBe(false);
      }
      const deep = join(folder, 'x'.repeat(110));
      const { listen, peer } = await listenIn(deep);
      expect('port' in listen && listen.port).toBeGreaterThan(0);
      expect(peer.url).toBe(`http://127.0.0.1:${(listen as { port: number }).port}`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('reads the llama.cpp commit from a git bundle header, and refuses a file that is not one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifold-bundle-'));
    const bundle = join(dir, 'b.bundle');
    writeFileSync(bundle, `# v2 git bundle\n${'ab'.repeat(20)} HEAD\n\nPACK\0\0binary`);
    expect(bundledLlamaCommit(bundle)).toBe('ab'.repeat(20));
    writeFileSync(bundle, 'PACK not a bundle');
    expect(() => bundledLlamaCommit(bundle)).toThrow(`${bundle} is not a git bundle with a head commit`);
  });

  it('refuses a llama-server run config without the binary, saying how to get it', () => {
    process.env.MANIFOLD_LLAMA_SERVER = join(tmpdir(), 'no-such-dir', 'llama-server');
    expect(findLlamaServer()).toBeNull();
    const config = parseRunConfig({ model: 'm.gguf', gpu: 'cpu', engine: { kind: 'llama-server' } });
    const build = (): ReplicaSet =>
      ReplicaSet.fromConfig(
        config,
        { detectedGpus: [], cpuCores: 2, defaultEngineKind: 'node-llama-cpp' },
        {
          spawn: () => {
            throw new Error('nothing is spawned');
          },
          log: () => {},
        },
      );
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(
      `engine.kind: "llama-server" needs llama.cpp's llama-server binary and none was found (looked for ${process.env.MANIFOLD_LLAMA_SERVER}); ` +
        'build it from the llama.cpp node-llama-cpp ships with `npm run build:llama-server`',
    );
    // The default kind needs no binary.
    expect(
      ReplicaSet.fromConfig(
        parseRunConfig({ model: 'm.gguf', gpu: 'cpu' }),
        { detectedGpus: [], cpuCores: 2, defaultEngineKind: 'node-llama-cpp' },
        {
          spawn: () => {
            throw new Error('nothing is spawned');
          },
          log: () => {},
        },
      ).size,
    ).toBe(1);
  });
});

describe('a llama-server child that lends slot files', () => {
  const description = { kind: 'llama-server' as const, models: [], slots: 4, contextSize: 2048, latencyMs: 1 };
  const load = { modelPath: '/models/m.gguf', slots: 4, contextSize: 2048 };

  it('reports its slot folder and a layout key with its slot count, which llama.cpp checks when it loads a state', () => {
    const lending = readyInfoOf(description, load, 1, '/tmp/r0/slots');
    expect(lending.prefixCacheShare?.dirs).toEqual({ ram: '/tmp/r0/slots', disk: '/tmp/r0/slots' });
    const fewerSlots = readyInfoOf({ ...description, slots: 2 }, { ...load, slots: 2 }, 1, '/tmp/r1/slots');
    expect(fewerSlots.prefixCacheShare?.layout).not.toBe(lending.prefixCacheShare?.layout);
    expect(readyInfoOf(description, load, 1, '/tmp/r2/slots').prefixCacheShare?.layout).toBe(lending.prefixCacheShare?.layout);
    expect(readyInfoOf(description, load, 1, null).prefixCacheShare).toBeUndefined();
  });

  it('reports the flash attention its command line resolved, which its layout key carries', () => {
    expect(readyInfoOf(description, { ...load, gpuLayers: 0 }, 1, null).sizes.flashAttention).toBe(false);
    expect(readyInfoOf(description, { ...load, gpuLayers: 0, flashAttention: true }, 1, null).sizes.flashAttention).toBe(true);
    expect(readyInfoOf(description, { ...load, gpuLayers: 0, kvType: 'q8_0' }, 1, null).sizes.flashAttention).toBe('auto');
    // gpuLayers auto (reported as 0: llama-server does not say how many it offloaded) leaves flash attention to llama.cpp.
    expect(readyInfoOf(description, load, 1, null).sizes.flashAttention).toBe('auto');
    const onCpu = readyInfoOf(description, { ...load, gpuLayers: 0 }, 1, '/tmp/r0/slots').prefixCacheShare?.layout;
    expect(readyInfoOf(description, { ...load, gpuLayers: 0, flashAttention: true }, 1, '/tmp/r1/slots').prefixCacheShare?.layout).not.toBe(onCpu);
    expect(readyInfoOf(description, { ...load, gpuLayers: 0, flashAttention: false }, 1, '/tmp/r1/slots').prefixCacheShare?.layout).toBe(onCpu);
  });
});
