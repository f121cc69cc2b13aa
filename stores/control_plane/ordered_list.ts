/**
 * Most entries a block holds before it splits in two. Inserting or removing moves at most this many references
 * within one block, and finding a block is a binary search over the blocks' first keys, so a change costs about
 * log(n) + BLOCK_MAX whatever the list's size, where one sorted array would move half the list.
 */
const BLOCK_MAX = 512

interface Block<V> { keys: string[], values: V[] }

/**
 * Values in order of a string key, kept sorted as entries come and go (a list of sorted blocks, a shallow B-tree):
 * no read sorts, a read from a key on costs a binary search and then only the entries it returns.
 */
export class OrderedList<V> {
  private blocks: Array<Block<V>> = []
  private count = 0

  /** A list holding `entries`, which must be sorted by key without repeats: built in one pass. */
  static fromSorted<V> (keys: readonly string[], values: readonly V[]): OrderedList<V> {
    const list = new OrderedList<V>()
    const half = BLOCK_MAX >> 1
    for (let i = 0; i < keys.length; i += half) {
      list.blocks.push({ keys: keys.slice(i, i + half), values: values.slice(i, i + half) })
    }
    list.count = keys.length
    return list
  }

  get size (): number {
    return this.count
  }

  /** The index of the block that holds `key` or would hold it: the last block whose first key is at most `key`. */
  private blockFor (key: string): number {
    let lo = 0
    let hi = this.blocks.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.blocks[mid]!.keys[0]! <= key) lo = mid
      else hi = mid - 1
    }
    return lo
  }

  /** The first position in `keys` whose key is at least `key` (or past it with `after`). */
  private static position (keys: readonly string[], key: string, after: boolean): number {
    let lo = 0
    let hi = keys.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      const k = keys[mid]!
      if (k < key || (after && k === key)) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  get (key: string): V | undefined {
    if (this.count === 0) return undefined
    const b = this.blocks[this.blockFor(key)]!
    const i = OrderedList.position(b.keys, key, false)
    return b.keys[i] === key ? b.values[i] : undefined
  }

  /** Inserts, or replaces the value already under `key`. */
  set (key: string, value: V): void {
    if (this.blocks.length === 0) {
      this.blocks.push({ keys: [key], values: [value] })
      this.count = 1
      return
    }
    const bi = this.blockFor(key)
    const b = this.blocks[bi]!
    const i = OrderedList.position(b.keys, key, false)
    if (b.keys[i] === key) {
      b.values[i] = value
      return
    }
    b.keys.splice(i, 0, key)
    b.values.splice(i, 0, value)
    this.count++
    if (b.keys.length > BLOCK_MAX) {
      const half = b.keys.length >> 1
      this.blocks.splice(bi + 1, 0, { keys: b.keys.splice(half), values: b.values.splice(half) })
    }
  }

  /** Removes `key`; true when it was there. */
  delete (key: string): boolean {
    if (this.count === 0) return false
    const bi = this.blockFor(key)
    const b = this.blocks[bi]!
    const i = OrderedList.position(b.keys, key, false)
    if (b.keys[i] !== key) return false
    b.keys.splice(i, 1)
    b.values.splice(i, 1)
    this.count--
    if (b.keys.length === 0) this.blocks.splice(bi, 1)
    return true
  }

  /**
   * Entries with a key after `after` (from the first without it), in order. Reads the list as it is at each step:
   * callers that wait between steps resume from the last key they saw instead of holding the iterator.
   */
  * from (after?: string): Generator<[string, V]> {
    if (this.count === 0) return
    let bi = after === undefined ? 0 : this.blockFor(after)
    let i = after === undefined ? 0 : OrderedList.position(this.blocks[bi]!.keys, after, true)
    for (; bi < this.blocks.length; bi++, i = 0) {
      const b = this.blocks[bi]!
      for (; i < b.keys.length; i++) yield [b.keys[i]!, b.values[i]!]
    }
  }
}
