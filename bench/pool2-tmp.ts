import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getLlama, LlamaLogLevel, type Token } from 'node-llama-cpp';
const file = '.cache/models/manifold-test-bench-33aab8cdb980.gguf';
const SEQ = Number(process.env.SEQ ?? 2);
if (process.argv[2] === 'child') {
  const llama = await getLlama({ gpu: 'auto', build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: file });
  const ctx = await model.createContext({ contextSize: 2048 * SEQ, sequences: SEQ, threads: 1, batching: { itemPrioritizationStrategy: 'firstInFirstOut' } });
  const seqs = Array.from({ length: SEQ }, () => ctx.getSequence());
  process.on('message', async (m: { first: number }) => {
    const started = performance.now(); let n = 0;
    await Promise.all(seqs.map(async (s, j) => {
      await s.clearHistory();
      const prompt = Array.from({ length: 256 }, (_, i) => 300 + ((i * 13 + j * 7 + m.first) % 300)) as Token[];
      let c = 0; for await (const _t of s.evaluate(prompt, { temperature: 0 })) { n++; if (++c >= 256) break; }
    }));
    process.send!({ rate: (n * 1000) / (performance.now() - started) });
  });
  process.send!({ ready: true });
} else {
  const start = (pool: string | undefined) => new Promise<{ run: (f: number) => Promise<number>; kill: () => void }>((resolve) => {
    const env = { ...process.env }; if (pool) env.UV_THREADPOOL_SIZE = pool; else delete env.UV_THREADPOOL_SIZE;
    const c = fork(fileURLToPath(import.meta.url), ['child'], { env, execArgv: process.execArgv });
    c.once('message', () => resolve({ run: (f) => new Promise((r) => { c.once('message', (m: { rate: number }) => r(m.rate)); c.send({ first: f }); }), kill: () => c.kill() }));
  });
  const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1]!;
  for (let k = 0; k < Number(process.argv[2] ?? 6); k++) {
    const a = await start(process.env.POOL ?? String(SEQ)); const b = await start(undefined);
    const ra: number[] = [], rb: number[] = [];
    for (let i = 0; i < 4; i++) for (const p of i % 2 ? [a, b] : [b, a]) (p === a ? ra : rb).push(await p.run(i * 3 + k));
    a.kill(); b.kill();
    console.log(`start ${k}: pool ${process.env.POOL ?? SEQ} ${med(ra).toFixed(1)} default ${med(rb).toFixed(1)} ratio ${(med(ra) / med(rb)).toFixed(3)}`);
  }
  process.exit(0);
}
