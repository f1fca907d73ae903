/** CLI: `npm run make-test-model -- --out F [--size tiny|small|bench] [--seed N]` writes a generated test model. */
import { parseArgs } from 'node:util';
import { stat } from 'node:fs/promises';
import { TEST_MODEL_SIZES, writeTestModel, type TestModelSize } from './test-model.js';

const { values } = parseArgs({
  options: { out: { type: 'string' }, size: { type: 'string', default: 'tiny' }, seed: { type: 'string' } },
});
const size = values.size as TestModelSize;
if (!values.out || !(size in TEST_MODEL_SIZES)) {
  console.error(`usage: npm run make-test-model -- --out FILE [--size ${Object.keys(TEST_MODEL_SIZES).join('|')}] [--seed N]`);
  process.exit(2);
}
const spec = { ...TEST_MODEL_SIZES[size], ...(values.seed ? { seed: Number(values.seed) } : {}) };
if (!Number.isInteger(spec.seed)) {
  console.error(`--seed must be an integer, got ${values.seed}`);
  process.exit(2);
}
await writeTestModel(values.out, spec);
console.log(`wrote ${values.out} (${size}, seed ${spec.seed}, ${(await stat(values.out)).size} bytes)`);
