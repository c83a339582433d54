/** Whether absolute path `p` is `parent` or lies beneath it (both normalized, no closing `/`). */
export function atOrBeneath(parent: string, p: string): boolean {
  return p === parent || (parent === '/' ? p.startsWith('/') : p.startsWith(`${parent}/`));
}

/** Whether absolute path `p` lies strictly beneath `parent`. */
export function beneath(parent: string, p: string): boolean {
  return p !== parent && atOrBeneath(parent, p);
}
