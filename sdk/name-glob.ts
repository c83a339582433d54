/*
 * Name globs, as the process list's `idpattern` / `refpattern` and the event filters use them:
 * one name, no path separators (`*` also matches `/` and `.`).
 */

/**
 * A glob without path separators (`*` matches anything, `?`, `[...]`, `{a,b}`) as a RegExp;
 * undefined when the glob is malformed (the list is then empty, as in the original).
 *
 * @example
 * globToRegExp('cam-{a,b}*')!.test('cam-b/1'); // true: `*` crosses `/`
 */
export function globToRegExp(glob: string): RegExp | undefined {
  let re = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') {
      const n = glob[++i];
      if (n === undefined) return undefined;
      re += n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) return undefined;
      let cls = glob.slice(i + 1, end);
      if (cls.startsWith('!')) cls = '^' + cls.slice(1);
      re += `[${cls.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '{') { re += '(?:'; depth++; }
    else if (c === '}' && depth > 0) { re += ')'; depth--; }
    else if (c === ',' && depth > 0) re += '|';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  if (depth !== 0) return undefined;
  try {
    return new RegExp(`^${re}$`, 's');
  } catch {
    return undefined;
  }
}
