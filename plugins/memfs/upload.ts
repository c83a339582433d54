import { own, type Alloc } from './entry.ts';

/**
 * The bytes of one upload as they arrive. With a announced length they are copied into one
 * Buffer of that size (no second copy at commit); without one (chunked) they are kept as a list
 * and joined once at commit.
 */
export class UploadBuffer {
  #chunks: Uint8Array[] = [];
  #into: Buffer | undefined;
  /** The announced length, allocated at the first chunk. */
  #length: number | undefined;
  size = 0;
  readonly #alloc: Alloc;

  /** `alloc`: where the file's bytes go (shared memory with serving threads, so the commit copies nothing). */
  constructor(length: number | undefined, alloc: Alloc = Buffer.allocUnsafeSlow) {
    this.#alloc = alloc;
    if (length !== undefined && length > 0) this.#length = length;
  }

  push(c: Uint8Array): void {
    const length = this.#length;
    if (length !== undefined) {
      this.#length = undefined;
      // a whole body already in shared memory of its own (a serving thread's upload) is kept as it is
      this.#into = c.length === length && wholeShared(c) ? Buffer.from(c.buffer, 0, length) : this.#alloc(length);
    }
    const into = this.#into;
    if (into && this.size + c.length <= into.length) into.set(c, this.size);
    else {
      if (into) {
        this.#chunks.push(into.subarray(0, this.size));
        this.#into = undefined;
      }
      this.#chunks.push(c);
    }
    this.size += c.length;
  }

  /** The file's bytes in a compact Buffer of their own. */
  take(): Buffer {
    const into = this.#into;
    if (into && this.size === into.length) return into;
    return own(into ? [into.subarray(0, this.size)] : this.#chunks, this.size, this.#alloc);
  }
}

const wholeShared = (c: Uint8Array): boolean =>
  c.buffer instanceof SharedArrayBuffer && c.byteOffset === 0 && c.byteLength === c.buffer.byteLength;
