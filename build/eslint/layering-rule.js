/**
 * `manifold/layering`: the process layers' allow-map, like VS Code's code-layering rule. Each file belongs
 * to the first layer whose folder holds it; an import must name a layer that layer allows, a Node builtin
 * only where the layer runs in Node, and a package only where the layer's package list permits it.
 */
import { builtinModules } from 'node:module';
import path from 'node:path';

const builtins = new Set(builtinModules);

/** @typedef {{ name: string, folder: string, allow: string[], node: boolean, packages: { only?: string[], deny?: string[] } }} Layer */

/** @param {string} specifier */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** @param {Layer[]} layers @param {string} relative */
function layerOf(layers, relative) {
  const normal = relative.split(path.sep).join('/');
  return layers.find((layer) => normal === layer.folder || normal.startsWith(`${layer.folder}/`));
}

/** @type {import('eslint').Rule.RuleModule} */
export const layeringRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Enforce the process layers: which layer may import which, and where Node and packages may be used.' },
    schema: [{ type: 'object', properties: { root: { type: 'string' }, layers: { type: 'array' } }, required: ['root', 'layers'] }],
    messages: {
      layer: '{{from}} may not import {{to}} ({{specifier}}); {{from}} may import: {{allowed}}.',
      node: '{{from}} runs outside Node and may not import the Node module {{specifier}}.',
      pkg: '{{from}} may not import the package {{specifier}}.',
    },
  },
  create(context) {
    const { root, layers } = /** @type {{ root: string, layers: Layer[] }} */ (context.options[0]);
    const file = context.filename;
    const from = layerOf(layers, path.relative(root, file));
    if (!from) return {};

    /** @param {import('estree').Node} node @param {unknown} source */
    function check(node, source) {
      if (typeof source !== 'string') return;
      if (source.startsWith('.')) {
        const target = layerOf(layers, path.relative(root, path.resolve(path.dirname(file), source)));
        if (target && target !== from && !from.allow.includes(target.name)) {
          context.report({ node, messageId: 'layer', data: { from: from.name, to: target.name, specifier: source, allowed: [from.name, ...from.allow].join(', ') } });
        }
        return;
      }
      if (source.startsWith('node:') || builtins.has(source)) {
        if (!from.node) context.report({ node, messageId: 'node', data: { from: from.name, specifier: source } });
        return;
      }
      const name = packageName(source);
      const { only, deny } = from.packages;
      if ((only && !only.includes(name)) || (deny && deny.includes(name))) {
        context.report({ node, messageId: 'pkg', data: { from: from.name, specifier: source } });
      }
    }

    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};
