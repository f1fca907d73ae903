/**
 * The plain node-llama-cpp process of `bench/plain-process.ts`: loads the model with one context of one
 * sequence, made with the engine's own context options (`engine-bin/model-context.ts`: flash attention
 * `auto`, first-in-first-out batching, F16 cache), so the comparison reads the front, not a difference
 * between those options and node-llama-cpp's defaults; says it is ready, and runs each stream it is
 * asked for with `inProcessStream`, answering with that stream's timings.
 */
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import { loadOptionsSchema } from '../common/engine-protocol.js';
import { createContext } from '../engine-bin/model-context.js';
import { inProcessStream } from './in-process.js';
import type { PlainProcessOptions, PlainProcessReply, PlainProcessStreamRequest } from './plain-process.js';

const reply = (message: PlainProcessReply): void => void process.send!(message);

const isStreamRequest = (message: unknown): message is PlainProcessStreamRequest => {
  const { prompt, answerTokens } = (message ?? {}) as Partial<PlainProcessStreamRequest>;
  return Array.isArray(prompt) && prompt.every((t) => Number.isSafeInteger(t) && t >= 0) && Number.isSafeInteger(answerTokens) && answerTokens! > 0;
};

try {
  const options = JSON.parse(process.argv[2] ?? '') as PlainProcessOptions;
  const llama = await getLlama({ gpu: 'auto', build: 'never', logLevel: LlamaLogLevel.error });
  const engineOptions = loadOptionsSchema.parse({ modelPath: options.model, contextSize: options.contextSize, slots: 1, threads: options.threads });
  const model = await llama.loadModel({ modelPath: options.model, defaultContextFlashAttention: engineOptions.flashAttention });
  const context = await createContext(model, engineOptions);
  const sequence = context.getSequence();
  // One stream at a time: the parent waits for each answer before it asks again.
  process.on('message', (message: unknown) => {
    if (!isStreamRequest(message)) return reply({ type: 'failed', message: `not a stream request: ${JSON.stringify(message)}` });
    inProcessStream(sequence, message.prompt, message.answerTokens).then(
      (stream) => reply({ type: 'streamed', stream }),
      (error: unknown) => reply({ type: 'failed', message: String(error) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
  reply({ type: 'ready' });
} catch (error) {
  console.error(`plain node-llama-cpp process: ${String(error)}`);
  process.send!({ type: 'failed', message: String(error) } satisfies PlainProcessReply, () => process.exit(1));
}
