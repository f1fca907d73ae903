/**
 * Before any test file runs: generates the test model (cached under .cache/models) and makes sure the
 * llama-server binary built from node-llama-cpp's bundled llama.cpp exists (built once per machine, cached
 * outside the repository; the tests that put Manifold in front of remote replicas run it).
 */
import { ensureLlamaServer } from '../build/llama-server.js';
import { ensureTestModel } from '../build/test-model.js';

export default async function setup(): Promise<void> {
  process.env.MANIFOLD_TEST_MODEL = await ensureTestModel('tiny');
  process.env.MANIFOLD_LLAMA_SERVER = await ensureLlamaServer((line) => console.log(line));
}
