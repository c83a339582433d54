import type { FsFileInfo } from '../../sdk/index.ts';

/*
 * One listing of a filesystem, sorted by name, for every cleanup rule of a tick: each rule looks
 * at the names starting with its glob's literal prefix (a binary search) instead of listing the
 * whole filesystem again. With thousands of processes a tick costs one listing per filesystem,
 * not one per rule.
 */

/** Characters that start a glob construct: the literal prefix ends before the first of them. */
const SPECIAL = /[*?[\]{}()!+@\\]/;

/** The part of a glob every match starts with (`/x_*.ts` -> `/x_`). */
export function literalPrefix(glob: string): string {
  // the matcher drops a leading `./` of a pattern: no literal prefix can be trusted then
  if (glob.startsWith('./')) return '';
  const i = glob.search(SPECIAL);
  return i < 0 ? glob : glob.slice(0, i);
}

export class ListingIndex {
  readonly #files: FsFileInfo[];

  constructor(files: FsFileInfo[]) {
    // code-unit order, the order startsWith and the binary search agree on
    this.#files = files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get size(): number { return this.#files.length; }

  /** The files matching `glob` (compiled as `m`), as `list(glob)` would give them. */
  match(glob: string, m: (path: string) => boolean): FsFileInfo[] {
    const prefix = literalPrefix(glob);
    const files = this.#files;
    let lo = 0;
    let hi = files.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (files[mid]!.name < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: FsFileInfo[] = [];
    for (let i = lo; i < files.length && files[i]!.name.startsWith(prefix); i++) if (m(files[i]!.name)) out.push(files[i]!);
    return out;
  }
}
