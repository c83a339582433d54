/**
 * JSON with comments, for config files written by hand (sample-config/full.jsonc): `//` and
 * `/* *\/` comments and trailing commas are blanked out, strings are left alone, and positions
 * stay where they were so JSON.parse's error offsets still point at the right place. The
 * service writes the file back as plain JSON (on first start it adds generated secrets), so the
 * comments live in the samples, not in a running instance's file.
 */
export function stripJsonComments(text: string): string {
  const out = text.split('');
  let i = 0;
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n' && out[k] !== '\r') out[k] = ' ';
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      i++;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else {
      i++;
    }
  }
  // a trailing comma before } or ] (only whitespace, after blanking, in between)
  const s = out.join('');
  return s.replace(/,(\s*[}\]])/g, (m, rest: string, off: number) => (inString(s, off) ? m : ` ${rest}`));
}

/** True when offset `at` of `s` is inside a JSON string (counting unescaped quotes before it). */
function inString(s: string, at: number): boolean {
  let inside = false;
  for (let i = 0; i < at; i++) {
    if (s[i] === '\\' && inside) i++;
    else if (s[i] === '"') inside = !inside;
  }
  return inside;
}
