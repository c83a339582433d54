/*
 * `ipFamily(s)`: what `net.isIP` answers (0, 4 or 6), without its regular expression. Node's IPv6
 * expression is large: its first use costs about 5 ms of compiling and its next ones over a
 * millisecond each until V8 compiles it natively, and a start validates a few addresses (issue
 * 46.4). The same grammar: IPv4 as four decimal octets without leading zeros; IPv6 as eight groups
 * of 1-4 hex digits, at most one `::` standing for at least one group, the last two groups
 * possibly an IPv4 address, and a zone (`%` and letters, digits, `-`, `.`, `:`). Checked against
 * `net.isIP` on a generated corpus (test/sdk/ip.test.ts).
 */

const ZONE = /^[0-9a-zA-Z.:-]+$/;

/** Four decimal octets from `start` to `end` (exclusive), scanned without allocating: client addresses are checked per request. */
function isV4At(s: string, start: number, end: number): boolean {
  let dots = 0;
  let digits = 0;
  let value = 0;
  let lead = 0;
  for (let i = start; i <= end; i++) {
    const c = i < end ? s.charCodeAt(i) : 46;
    if (c === 46) {
      if (digits === 0 || (digits > 1 && lead === 48) || value > 255) return false;
      if (i < end && ++dots > 3) return false;
      digits = 0;
      value = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 0) lead = c;
      if (++digits > 3) return false;
      value = value * 10 + (c - 48);
    } else return false;
  }
  return dots === 3;
}

const isV4 = (s: string): boolean => isV4At(s, 0, s.length);

function isHextet(s: string): boolean {
  const n = s.length;
  if (n === 0 || n > 4) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) return false;
  }
  return true;
}

/** Groups of one side of `::` (or of the whole address), the last possibly IPv4; -1 when malformed. */
function groups(side: string, last: boolean): number {
  if (side === '') return 0;
  const parts = side.split(':');
  let n = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (last && i === parts.length - 1 && p.includes('.')) {
      if (!isV4(p)) return -1;
      n += 2;
    } else if (isHextet(p)) n++;
    else return -1;
  }
  return n;
}

function isV6(s: string): boolean {
  const pct = s.indexOf('%');
  if (pct >= 0 && !ZONE.test(s.slice(pct + 1))) return false;
  const addr = pct >= 0 ? s.slice(0, pct) : s;
  const gap = addr.indexOf('::');
  if (gap < 0) return groups(addr, true) === 8;
  if (addr.indexOf('::', gap + 1) >= 0) return false;
  const head = groups(addr.slice(0, gap), false);
  const tail = groups(addr.slice(gap + 2), true);
  return head >= 0 && tail >= 0 && head + tail <= 7;
}

/**
 * 4 for an IPv4 address, 6 for an IPv6 one, 0 for anything else (as `net.isIP`).
 *
 * @example
 * ipFamily('2001:db8::1'); // 6
 * ipFamily('example.com'); // 0
 */
export function ipFamily(s: string): 0 | 4 | 6 {
  if (typeof s !== 'string') return 0;
  if (isV4(s)) return 4;
  return s.includes(':') && isV6(s) ? 6 : 0;
}
