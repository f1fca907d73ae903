/** The least-recently-used map the grammar caches and the sampled answers' memory keep (pure logic). */
import { describe, expect, it } from 'vitest';
import { LruMap } from '../../common/lru-map.js';

describe('LruMap', () => {
  it('keeps the most recently used entries up to its capacity, a get counting as a use', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
    map.set('c', 4);
    map.set('d', 5);
    expect(map.get('a')).toBeUndefined();
    expect(map.get('c')).toBe(4);
    map.clear();
    expect(map.get('c')).toBeUndefined();
  });

  it('with a weight per entry, drops the least recently used while the entries weigh more than the capacity', () => {
    const map = new LruMap<string, number[]>(5, (ids) => ids.length);
    map.set('a', [1, 2]);
    map.set('b', [3, 4]);
    map.get('a');
    map.set('c', [5, 6, 7]); // 7 > 5: b goes, then 5 ≤ 5
    expect(['a', 'b', 'c'].map((k) => map.get(k))).toEqual([[1, 2], undefined, [5, 6, 7]]);
    map.set('a', [8]); // set again: only its new weight counts (4)
    map.set('d', [9]);
    expect(['a', 'c', 'd'].map((k) => map.get(k))).toEqual([[8], [5, 6, 7], [9]]);
  });
});
