/**
 * The radix tree of held prefixes over all replicas: one walk of a prompt gives each replica's longest held
 * start, exactly what comparing the prompt with each held path would give, through adds, splits and removes.
 */
import { describe, expect, it } from 'vitest';
import { blockHashes, sharedBlocks } from '../../core/router/block-hash.js';
import { PrefixTree } from '../../core/router/prefix-tree.js';

/** Chained block hashes of a token list (64 tokens a block). */
const blocksOf = (tokens: number[]): number[] => blockHashes(tokens);
/** Every replica's run (of replicas 0..9) after a walk along `blocks`, those holding none left out. */
function runs(tree: PrefixTree, blocks: readonly number[]): Map<number, number> {
  tree.walk(blocks);
  return new Map(Array.from({ length: 10 }, (_, r) => [r, tree.run(r)] as const).filter(([, run]) => run > 0));
}
const tokens = (seed: number, n: number): number[] => Array.from({ length: n }, (_, i) => (seed * 7919 + i * 31) % 5000);

describe('prefix tree', () => {
  it('gives each replica its deepest held start, splitting an edge where paths part and dropping what nobody holds', () => {
    const system = tokens(1, 256);
    const a = blocksOf([...system, ...tokens(2, 256)]);
    const b = blocksOf([...system, ...tokens(3, 128)]);
    const tree = new PrefixTree();
    tree.add(0, a);
    tree.add(1, b);
    tree.add(1, a.slice(0, 2));
    expect(runs(tree, a)).toEqual(
      new Map([
        [0, 8],
        [1, 4],
      ]),
    );
    expect(runs(tree, blocksOf([...system, ...tokens(3, 64), ...tokens(9, 64)]))).toEqual(
      new Map([
        [0, 4],
        [1, 5],
      ]),
    );
    expect(runs(tree, blocksOf(tokens(4, 128)))).toEqual(new Map());
    tree.remove(1, b);
    // Replica 1 still holds its two-block path.
    expect(runs(tree, b)).toEqual(
      new Map([
        [0, 4],
        [1, 2],
      ]),
    );
    tree.remove(1, a.slice(0, 2));
    tree.remove(0, a);
    expect(runs(tree, a)).toEqual(new Map());
    // Adding again after everything went starts from an empty tree.
    tree.add(2, b);
    expect(runs(tree, b)).toEqual(new Map([[2, 6]]));
  });

  it('agrees with comparing the prompt to every held path, through random adds and removes', () => {
    let seed = 12345;
    const random = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 16) % n;
    };
    // Paths drawn from a few shared starts, so they share prefixes of every length.
    const starts = Array.from({ length: 4 }, (_, i) => tokens(100 + i, 64 * 6));
    const path = (): number[] => {
      const start = starts[random(starts.length)]!.slice(0, 64 * random(7));
      return blocksOf([...start, ...tokens(1000 + random(6), 64 * random(4))]);
    };
    const tree = new PrefixTree();
    const held: { replica: number; blocks: number[] }[] = [];
    for (let step = 0; step < 600; step++) {
      if (held.length > 0 && random(3) === 0) {
        const [gone] = held.splice(random(held.length), 1);
        tree.remove(gone!.replica, gone!.blocks);
      } else {
        const blocks = path();
        const replica = random(5);
        tree.add(replica, blocks);
        held.push({ replica, blocks });
      }
      const prompt = path();
      const expected = new Map<number, number>();
      for (const { replica, blocks } of held) {
        const run = sharedBlocks(blocks, prompt);
        if (run > 0) expected.set(replica, Math.max(expected.get(replica) ?? 0, run));
      }
      expect(runs(tree, prompt)).toEqual(new Map([...expected].sort((x, y) => x[0] - y[0])));
    }
  });
});
