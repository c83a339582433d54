/**
 * How a benchmark child runs TypeScript on this runtime: Node 24 strips the types itself (the
 * production path); an older Node (20) needs the tsx loader, which is what "before" measures.
 */
export function loaderArgs(): string[] {
  return (process.features as { typescript?: string }).typescript ? [] : ['--import', 'tsx'];
}
