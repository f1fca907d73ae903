/**
 * llama.cpp's `llama-server`, built from the source node-llama-cpp ships (`node_modules/node-llama-cpp/
 * llama/gitRelease.bundle`, a git bundle of the very llama.cpp it runs), so the peer Manifold is measured
 * against and fronts in tests is the same llama.cpp. Built once per machine with Debian's cmake and g++
 * (`-DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF`, about 10 minutes on 2 cores) and cached outside the
 * repository, keyed by the bundle's commit: `$MANIFOLD_LLAMA_SERVER_CACHE` or
 * `~/.cache/manifold/llama-server/<commit>-<arch>/llama-server`. `MANIFOLD_LLAMA_SERVER` names a binary to use
 * instead. Where it lives is common/node/llama-server-binary.ts's (core finds it there for a `llama-server` engine).
 */
import { execFile } from 'node:child_process';
import { access, chmod, copyFile, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LLAMA_CPP_BUNDLE as BUNDLE, llamaServerPath } from '../common/node/llama-server-binary.js';

const run = promisify(execFile);

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** A build older than this is taken to have died without removing its lock. */
const STALE_BUILD_MS = 60 * 60_000;

/**
 * The cached binary, built first when it is missing (`log` hears each step). One build at a time per
 * machine: a second caller (another test run, CI's step and the tests' global setup) waits for the
 * first's binary instead of building it again on the same cores.
 */
export async function ensureLlamaServer(log: (line: string) => void = () => {}): Promise<string> {
  const target = llamaServerPath();
  if (await exists(target)) return target;
  await mkdir(dirname(target), { recursive: true });
  const lock = `${target}.building`;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const since = await stat(lock).then(
        (s) => s.mtimeMs,
        () => Date.now(),
      );
      if (Date.now() - since > STALE_BUILD_MS) await rm(lock, { recursive: true, force: true });
      else {
        log(`llama-server: another build is running (${lock}); waiting for it`);
        await new Promise((done) => setTimeout(done, 5000));
      }
      if (await exists(target)) return target;
    }
  }
  try {
    return await buildLlamaServer(target, log);
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function buildLlamaServer(target: string, log: (line: string) => void): Promise<string> {
  if (await exists(target)) return target;
  const work = await mkdtemp(join(os.tmpdir(), 'manifold-llama-build-'));
  try {
    const source = join(work, 'llama.cpp');
    log(`llama-server: cloning ${BUNDLE}`);
    await run('git', ['clone', '--quiet', BUNDLE, source]);
    const build = join(work, 'build');
    log('llama-server: configuring (cmake)');
    await run(
      'cmake',
      [
        '-S',
        source,
        '-B',
        build,
        '-DCMAKE_BUILD_TYPE=Release',
        '-DLLAMA_CURL=OFF',
        '-DBUILD_SHARED_LIBS=OFF',
        '-DLLAMA_BUILD_TESTS=OFF',
        '-DLLAMA_BUILD_EXAMPLES=OFF',
        '-DLLAMA_BUILD_SERVER=ON',
      ],
      { maxBuffer: 64 << 20 },
    );
    log(`llama-server: building (about 10 minutes on 2 cores) into ${target}`);
    await run('cmake', ['--build', build, '--target', 'llama-server', '--parallel', String(os.availableParallelism())], { maxBuffer: 256 << 20 });
    const staged = `${target}.${process.pid}.tmp`;
    // Copied, then renamed in place: the build folder may be on another file system than the cache.
    await copyFile(join(build, 'bin', 'llama-server'), staged);
    await chmod(staged, 0o755);
    await rename(staged, target);
    log(`llama-server: ready at ${target}`);
    return target;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(await ensureLlamaServer((line) => console.error(line)));
}
