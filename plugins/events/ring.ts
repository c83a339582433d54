import type { CoreEvent } from '../../sdk/index.ts';

/**
 * The bounded history: the last `capacity` events by id. Ids are consecutive, so an event's
 * slot is its id modulo the capacity: push and lookup are O(1), nothing is ever shifted.
 */
export class EventRing {
  readonly capacity: number;
  readonly #slots: (CoreEvent | undefined)[];
  #newest = 0;
  /** No event older than this is held (a resized ring starts with what its predecessor had). */
  #floor = 1;

  constructor(capacity: number, from?: EventRing) {
    this.capacity = Math.max(1, capacity);
    this.#slots = new Array<CoreEvent | undefined>(this.capacity);
    // a reload may change the size: the newest events move over, ids keep counting
    if (from) {
      this.#newest = from.newest;
      this.#floor = Math.max(from.oldest, from.newest - this.capacity + 1);
      for (let id = this.#floor; id <= from.newest; id++) {
        this.#slots[id % this.capacity] = from.get(id);
      }
    }
  }

  /** Id of the newest event pushed (0 before any). */
  get newest(): number { return this.#newest; }

  /** Id of the oldest event held (newest + 1 when empty). */
  get oldest(): number { return Math.max(this.#floor, this.#newest - this.capacity + 1); }

  get size(): number { return this.#newest - this.oldest + 1; }

  /** The next id, for the event about to be pushed. */
  nextId(): number { return this.#newest + 1; }

  push(e: CoreEvent): void {
    this.#newest = e.id;
    this.#slots[e.id % this.capacity] = e;
  }

  /** The event with that id, if still held. */
  get(id: number): CoreEvent | undefined {
    if (id < this.oldest || id > this.#newest) return undefined;
    return this.#slots[id % this.capacity];
  }
}
