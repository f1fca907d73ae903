/** The least-recently-used map the grammar caches keep (pure logic). */
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
});
