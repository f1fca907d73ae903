/**
 * A Map that keeps its most recently used entries within a capacity: `get` refreshes an entry, `set`
 * drops the least recently used while the entries weigh more than the capacity. Each entry weighs 1
 * unless a `weigh` is given (the sampled answers' memory weighs an answer by its ids).
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();
  private weight = 0;

  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    this.entries.set(key, value);
    this.weight += this.weigh(value);
    for (const [oldest, kept] of this.entries) {
      if (this.weight <= this.capacity) break;
      this.entries.delete(oldest);
      this.weight -= this.weigh(kept);
    }
  }

  clear(): void {
    this.entries.clear();
    this.weight = 0;
  }

  private delete(key: K): void {
    const value = this.entries.get(key);
    if (value === undefined) return;
    this.entries.delete(key);
    this.weight -= this.weigh(value);
  }
}
