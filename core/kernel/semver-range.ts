/**
 * Just enough semver for the loader's SDK check: `^`, `~`, comparators (`>=1.2 <2`), partial and
 * x versions (`1`, `1.x`, `*`) and `||`. Prerelease tags are ignored. A small parser here instead
 * of a dependency because the kernel only ever compares one version (the SDK's) with a range.
 */
type Triple = [number, number, number];
interface Comparator { op: '>=' | '<' | '>' | '<=' | '='; v: Triple }

const PART = /^[=v]*(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+].*)?$/;

/** Parses `1.2.3`, `1.2`, `1.x`; the number of given (non-x) parts is `n`. */
function partial(s: string): { v: Triple; n: number } | undefined {
  const m = PART.exec(s);
  if (!m) return undefined;
  const parts = [m[1], m[2], m[3]];
  let n = 0;
  const v: Triple = [0, 0, 0];
  for (const [i, p] of parts.entries()) {
    if (p === undefined || /^[xX*]$/.test(p)) break;
    v[i] = Number(p);
    n++;
  }
  return { v, n };
}

function bump(v: Triple, at: number): Triple {
  if (at < 0) return [Infinity, 0, 0];
  const out: Triple = [...v];
  out[at]! += 1;
  for (let i = at + 1; i < 3; i++) out[i] = 0;
  return out;
}

function expand(token: string): Comparator[] | undefined {
  if (token === '*' || token === '' || /^[xX]$/.test(token)) return [];
  const m = /^(\^|~|>=|<=|>|<|=)?(.*)$/.exec(token)!;
  const op = m[1] ?? '';
  const p = partial(m[2]!);
  if (!p) return undefined;
  const { v, n } = p;
  if (n === 0) return op === '<' || op === '>' ? [{ op: '<', v: [0, 0, 0] }] : [];
  switch (op) {
    case '^': {
      // the first non-zero given part is the one that may not change
      const at = v[0] > 0 || n === 1 ? 0 : v[1] > 0 || n === 2 ? 1 : 2;
      return [{ op: '>=', v }, { op: '<', v: bump(v, at) }];
    }
    case '~': return [{ op: '>=', v }, { op: '<', v: bump(v, n === 1 ? 0 : 1) }];
    case '>=': return [{ op: '>=', v }];
    case '<': return [{ op: '<', v }];
    case '>': return n === 3 ? [{ op: '>', v }] : [{ op: '>=', v: bump(v, n - 1) }];
    case '<=': return n === 3 ? [{ op: '<=', v }] : [{ op: '<', v: bump(v, n - 1) }];
    default: return n === 3 ? [{ op: '=', v }] : [{ op: '>=', v }, { op: '<', v: bump(v, n - 1) }];
  }
}

function cmp(a: Triple, b: Triple): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

function holds(c: Comparator, v: Triple): boolean {
  const d = cmp(v, c.v);
  return c.op === '>=' ? d >= 0 : c.op === '>' ? d > 0 : c.op === '<' ? d < 0 : c.op === '<=' ? d <= 0 : d === 0;
}

/** True when `version` satisfies `range`; undefined when either cannot be parsed. */
export function satisfies(version: string, range: string): boolean | undefined {
  const ver = partial(version.trim());
  if (!ver || ver.n !== 3) return undefined;
  let any = false;
  for (const alt of range.split('||')) {
    // "1.2 - 2" hyphen ranges are rare in peer ranges; they count as unparsable
    const tokens = alt.trim().replace(/(\^|~|>=|<=|>|<|=)\s+/g, '$1').split(/\s+/);
    const comps: Comparator[] = [];
    for (const t of tokens) {
      const c = expand(t);
      if (!c) return undefined;
      comps.push(...c);
    }
    if (comps.every((c) => holds(c, ver.v))) any = true;
  }
  return any;
}
