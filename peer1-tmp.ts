import { ensureTestModel } from './build/test-model.js';
import { runPeerServe } from './bench/peer.js';
const model = await ensureTestModel('bench');
const r = await runPeerServe({ model, slots: 8, threads: 2, contextSize: 2048, promptTokens: 1400, answerTokens: 64, rounds: 2, loneRounds: 8, seed: 1 });
console.log(r.text);
