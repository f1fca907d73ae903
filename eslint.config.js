/**
 * ESLint: typescript-eslint's recommended rules plus `manifold/layering`, the allow-map of the process
 * layers (DESIGN §1). A layer not listed here (test/, e2e/, root config files) is not restricted.
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import tseslint from 'typescript-eslint';
import { layeringRule } from './build/eslint/layering-rule.js';

const root = path.dirname(fileURLToPath(import.meta.url));
const uiOnly = ['react', 'react-dom', 'zustand', 'recharts'];
/** Native code that reads model files runs only in the children (engine-bin/), never in the main process. */
const modelNative = ['node-llama-cpp'];

/** Order matters: the first layer whose folder holds a file is its layer. */
export const layers = [
  { name: 'common/node', folder: 'common/node', allow: ['common'], node: true, packages: { only: ['zod'] } },
  { name: 'common', folder: 'common', allow: [], node: false, packages: { only: ['zod'] } },
  { name: 'core', folder: 'electron/core', allow: ['common', 'common/node', 'native'], node: true, packages: { deny: ['electron', ...modelNative, ...uiOnly] } },
  { name: 'shell', folder: 'electron', allow: ['core', 'common', 'build'], node: true, packages: { deny: [...modelNative, ...uiOnly] } },
  { name: 'renderer', folder: 'renderer', allow: ['common'], node: false, packages: { deny: ['electron', 'node-llama-cpp', 'koffi'] } },
  { name: 'engine-bin', folder: 'engine-bin', allow: ['common', 'common/node'], node: true, packages: { deny: ['electron', ...uiOnly] } },
  { name: 'native', folder: 'native', allow: ['common'], node: true, packages: { only: ['koffi', 'zod'] } },
  { name: 'build', folder: 'build', allow: ['common', 'common/node'], node: true, packages: { deny: ['electron', ...uiOnly] } },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.cache/', 'test-results/', 'playwright-report/', 'bench/results/'] },
  ...tseslint.configs.recommended,
  {
    plugins: { manifold: { rules: { layering: layeringRule } } },
    rules: {
      'manifold/layering': ['error', { root, layers }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
