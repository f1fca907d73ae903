/** Generates the test model once before any test file runs (it is cached under .cache/models). */
import { ensureTestModel } from '../build/test-model.js';

export default async function setup(): Promise<void> {
  process.env.MANIFOLD_TEST_MODEL = await ensureTestModel('tiny');
}
