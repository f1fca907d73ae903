/**
 * ESLint: typescript-eslint's recommended rules plus `manifold/layering`, the allow-map of the process
 * layers (DESIGN §1) and of core's sub-layers, kept in build/eslint/layer-map.js. A folder the map does
 * not list (test/, e2e/, bench/, root config files) is not restricted.
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import tseslint from 'typescript-eslint';
import { layers } from './build/eslint/layer-map.js';
import { layeringRule } from './build/eslint/layering-rule.js';

const root = path.dirname(fileURLToPath(import.meta.url));

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.cache/', 'test-results/', 'playwright-report/', 'bench/results/'] },
  ...tseslint.configs.recommended,
  {
    plugins: { manifold: { rules: { layering: layeringRule } } },
    rules: {
      'manifold/layering': ['error', { root, layers }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Prettier (.prettierrc.json, checked by `npm run lint`) wraps code at 160; this holds comments to it too (a message's text may run on).
      'max-len': ['error', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
    },
  },
  {
    // An engine kind is known by its capabilities (core/kind/replica-driver.ts), never by its class, outside its own folder.
    ignores: ['core/node-llama-cpp/**', 'core/llama-server/**', 'core/remote/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "BinaryExpression[operator='instanceof'][right.name=/^(EngineSupervisor|LlamaServerSupervisor|RemoteLink)$/]",
          message: 'ask the replica driver for a capability (core/kind/replica-driver.ts), not for its class',
        },
      ],
    },
  },
);
