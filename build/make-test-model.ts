/**
 * CLI: `npm run make-test-model -- --out F [--size tiny|small|bench|large] [--seed N]` writes a generated test model;
 * `--family NAME --out F` writes a family model (a real vocabulary and chat template, build/family-models.ts);
 * `--list-families` lists the families (name, vocab with any added tokens, template).
 */
import { parseArgs } from 'node:util';
import { stat } from 'node:fs/promises';
import { FAMILY_MODELS, isFamilyName, writeFamilyModel } from './family-models.js';
import { TEST_MODEL_SIZES, writeTestModel, type TestModelSize } from './test-model.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    size: { type: 'string', default: 'tiny' },
    seed: { type: 'string' },
    family: { type: 'string' },
    'list-families': { type: 'boolean', default: false },
  },
});
function usage(): never {
  console.error(`usage: npm run make-test-model -- --out FILE [--size ${Object.keys(TEST_MODEL_SIZES).join('|')}] [--seed N]`);
  console.error('       npm run make-test-model -- --family NAME --out FILE');
  console.error('       npm run make-test-model -- --list-families');
  process.exit(2);
}

if (values['list-families']) {
  for (const [name, family] of Object.entries(FAMILY_MODELS)) {
    const vocab = 'added' in family ? `${family.vocab}+${family.added}` : family.vocab;
    console.log(`${name.padEnd(26)} ${vocab.padEnd(18)} ${family.template}`);
  }
} else if (values.family !== undefined) {
  if (!values.out) usage();
  if (!isFamilyName(values.family)) {
    console.error(`unknown family ${values.family}; --list-families lists them`);
    process.exit(2);
  }
  const started = Date.now();
  await writeFamilyModel(values.out, values.family);
  console.log(`wrote ${values.out} (family ${values.family}, ${(await stat(values.out)).size} bytes, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
} else {
  const size = values.size as TestModelSize;
  if (!values.out || !(size in TEST_MODEL_SIZES)) usage();
  const spec = { ...TEST_MODEL_SIZES[size], ...(values.seed ? { seed: Number(values.seed) } : {}) };
  if (!Number.isInteger(spec.seed)) {
    console.error(`--seed must be an integer, got ${values.seed}`);
    process.exit(2);
  }
  await writeTestModel(values.out, spec);
  console.log(`wrote ${values.out} (${size}, seed ${spec.seed}, ${(await stat(values.out)).size} bytes)`);
}
