import { ensureTestModel } from '../build/test-model.js';
import { runPeerChat } from './peer-chat.js';
const model = await ensureTestModel('bench');
const chat = { conversations: 16, rounds: 5, systemWords: 60, openingWords: 400, followUpWords: 120, answerTokens: 48, concurrency: 8, thinkMs: 0, seed: 3 };
const layouts = (process.env.LAYOUTS ?? '4,2,1').split(',').map((n) => ({ replicas: Number(n), kind: 'llama-server' as const }));
const out = await runPeerChat({ model, slots: 8, threads: 2, contextSize: 2048, layouts, chat });
console.log(out.text);
