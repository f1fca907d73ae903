/**
 * One radix tree of block hashes over every replica (SGLang's router keeps one of text): each path is a
 * held prefix (a slot's, or a saved entry's) and each node counts, per replica, the paths through it. A
 * prompt walks the tree once and learns every replica's longest held start at the same time, so a route
 * decision costs a walk of the prompt plus the replicas found, not a search per replica.
 */

import { sharedBlocks } from './block-hash.js';

interface TreeNode {
  /** The blocks on the edge into this node (never empty but at the root). */
  edge: readonly number[];
  /** Child by the first block of its edge. */
  readonly children: Map<number, TreeNode>;
  /** Replica → paths of it through this node. */
  readonly holders: Map<number, number>;
  parent: TreeNode | null;
}

const newNode = (edge: readonly number[], parent: TreeNode | null, holders = new Map<number, number>()): TreeNode => ({
  edge,
  children: new Map(),
  holders,
  parent,
});

export class PrefixTree {
  private readonly root = newNode([], null);
  /** The last walk's runs by replica, valid where `stamps` holds its stamp. */
  private readonly runs: number[] = [];
  private readonly stamps: number[] = [];
  private stamp = 0;

  /** `replica` holds one more path: these blocks. */
  add(replica: number, blocks: readonly number[]): void {
    let node = this.root;
    let depth = 0;
    while (depth < blocks.length) {
      let child = node.children.get(blocks[depth]!);
      if (!child) {
        child = newNode(blocks.slice(depth), node);
        node.children.set(blocks[depth]!, child);
      }
      const run = sharedBlocks(child.edge, blocks, depth);
      if (run < child.edge.length) child = split(child, run);
      child.holders.set(replica, (child.holders.get(replica) ?? 0) + 1);
      depth += run;
      node = child;
    }
  }

  /** `replica` holds one path fewer: these blocks (as added). Nodes no path goes through any more are dropped. */
  remove(replica: number, blocks: readonly number[]): void {
    let node = this.root;
    let depth = 0;
    while (depth < blocks.length) {
      const child = node.children.get(blocks[depth]!);
      if (!child) return;
      depth += child.edge.length;
      const count = (child.holders.get(replica) ?? 0) - 1;
      if (count > 0) child.holders.set(replica, count);
      else child.holders.delete(replica);
      if (child.holders.size === 0) {
        node.children.delete(child.edge[0]!);
        return;
      }
      node = child;
    }
  }

  /** Walks the tree along `blocks`: until the next walk, `run` answers for them. */
  walk(blocks: readonly number[]): void {
    const path: { node: TreeNode; end: number }[] = [];
    let node = this.root;
    let depth = 0;
    while (depth < blocks.length) {
      const child = node.children.get(blocks[depth]!);
      if (!child) break;
      const run = sharedBlocks(child.edge, blocks, depth);
      path.push({ node: child, end: depth + run });
      if (run < child.edge.length) break;
      depth += run;
      node = child;
    }
    // Deepest first: a replica's run ends at the deepest node it holds. Stamped, so nothing is cleared between walks.
    const stamp = ++this.stamp;
    for (let i = path.length - 1; i >= 0; i--)
      for (const replica of path[i]!.node.holders.keys())
        if (this.stamps[replica] !== stamp) {
          this.stamps[replica] = stamp;
          this.runs[replica] = path[i]!.end;
        }
  }

  /** A replica's longest held start of the blocks last walked (0: none). */
  run(replica: number): number {
    return this.stamps[replica] === this.stamp ? this.runs[replica]! : 0;
  }
}

/** Cuts `node`'s edge after `keep` blocks: the upper part, holding what `node` held, is returned; `node` hangs below it. */
function split(node: TreeNode, keep: number): TreeNode {
  const parent = node.parent!;
  const upper = newNode(node.edge.slice(0, keep), parent, new Map(node.holders));
  parent.children.set(upper.edge[0]!, upper);
  node.edge = node.edge.slice(keep);
  node.parent = upper;
  upper.children.set(node.edge[0]!, node);
  return upper;
}
