/**
 * `manifold/layering`: enforces the allow-map of build/eslint/layer-map.js, like VS Code's code-layering
 * rule. Each file belongs to the first layer whose path holds it; an import must name a layer that layer
 * allows, a Node builtin only where the layer runs in Node, and a package on the layer's allow-list.
 * Inside a layer with sub-layers (core), every file must be in a sub-layer, and an import between two
 * sub-layers must be allowed by the importing one, as must any package it imports.
 */
import { builtinModules } from 'node:module';
import path from 'node:path';

const builtins = new Set(builtinModules);

/** @typedef {import('./layer-map.js').Layer} Layer */

/** @param {string} specifier */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** A path relative to the root, with `/` and without its script extension (an import names `.js` for a `.ts`). */
function normalise(/** @type {string} */ relative) {
  return relative
    .split(path.sep)
    .join('/')
    .replace(/\.(d\.)?[cm]?[jt]sx?$/, '');
}

/** Whether `place` (normalised) is the folder or the file `at` names, or inside it. */
function holds(/** @type {string} */ at, /** @type {string} */ place) {
  return place === at || place.startsWith(`${at}/`);
}

/** @param {Layer[]} layers @param {string} place */
function layerOf(layers, place) {
  return layers.find((layer) => holds(layer.folder, place));
}

/** @param {Layer} layer @param {string} place */
function sublayerOf(layer, place) {
  return layer.sublayers?.find((sub) => holds(`${layer.folder}/${sub.name}`, place));
}

/** @type {import('eslint').Rule.RuleModule} */
export const layeringRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Enforce the process layers and core’s sub-layers: which may import which, where Node may be used, which packages each may import.' },
    schema: [{ type: 'object', properties: { root: { type: 'string' }, layers: { type: 'array' } }, required: ['root', 'layers'] }],
    messages: {
      layer: '{{from}} may not import {{to}} ({{specifier}}); {{from}} may import: {{allowed}}.',
      node: '{{from}} runs outside Node and may not import the Node module {{specifier}}.',
      pkg: '{{from}} may not import the package {{specifier}}; its packages: {{allowed}}.',
      unmapped: '{{file}} is in no sub-layer of {{layer}}: add it to the map in build/eslint/layer-map.js.',
    },
  },
  create(context) {
    const { root, layers } = /** @type {{ root: string, layers: Layer[] }} */ (context.options[0]);
    const file = context.filename;
    const place = normalise(path.relative(root, file));
    const from = layerOf(layers, place);
    if (!from) return {};
    const fromSub = sublayerOf(from, place);
    const fromName = fromSub ? `${from.name}/${fromSub.name}` : from.name;
    const list = (/** @type {string[]} */ names) => names.join(', ') || 'none';

    /** @param {import('estree').Node} node @param {string} source */
    function checkRelative(node, source) {
      const target = normalise(path.relative(root, path.resolve(path.dirname(file), source)));
      const to = layerOf(layers, target);
      if (!to) return;
      if (to !== from) {
        if (!from.allow.includes(to.name)) {
          context.report({ node, messageId: 'layer', data: { from: from.name, to: to.name, specifier: source, allowed: list([from.name, ...from.allow]) } });
        }
        return;
      }
      const toSub = sublayerOf(from, target);
      if (!fromSub || !toSub || toSub === fromSub || fromSub.allow.includes(toSub.name)) return;
      context.report({
        node,
        messageId: 'layer',
        data: { from: fromName, to: `${from.name}/${toSub.name}`, specifier: source, allowed: list(fromSub.allow.map((name) => `${from.name}/${name}`)) },
      });
    }

    /** @param {import('estree').Node} node @param {unknown} source */
    function check(node, source) {
      if (typeof source !== 'string') return;
      if (source.startsWith('.')) return checkRelative(node, source);
      if (source.startsWith('node:') || builtins.has(source)) {
        if (!from.node) context.report({ node, messageId: 'node', data: { from: from.name, specifier: source } });
        return;
      }
      const name = packageName(source);
      const allowed = fromSub ? (fromSub.packages ?? []) : from.packages;
      if (!from.packages.includes(name) || !allowed.includes(name)) {
        context.report({ node, messageId: 'pkg', data: { from: fromName, specifier: source, allowed: list(allowed) } });
      }
    }

    return {
      Program: (node) => {
        if (from.sublayers && !fromSub) context.report({ node, messageId: 'unmapped', data: { file: place, layer: from.name } });
      },
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};
