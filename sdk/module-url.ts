/**
 * The URL of a module next to `base` (an `import.meta.url`), in the form `base` itself runs as:
 * `./x.ts` stays `./x.ts` when the caller runs from its TypeScript source, and becomes `./x.js` when
 * the caller runs from the JavaScript the install step built (`scripts/build.mjs`). Use it for a
 * module handed to a thread, a child or `import()` by URL (a door tap module, a worker entry), which
 * the build's import rewriting cannot see.
 *
 * @example
 * const module = { name: 'vendor', url: siblingModule('./door-tap.ts', import.meta.url) };
 * await ctx.deps.door.tap(module); // `./door-tap.js` next to a built caller
 */
export function siblingModule(rel: string, base: string): string {
  const url = new URL(rel, base);
  if (base.endsWith('.js') && url.pathname.endsWith('.ts')) url.pathname = `${url.pathname.slice(0, -3)}.js`;
  return url.href;
}
