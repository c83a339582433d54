import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

const PARTS = ['config', 'state', 'report', 'metadata'] as const;

/**
 * The REST `filter` naming the Process parts a query selects below this field, so that
 * `processes { id }` does not build 1,000 reports nobody asked for. Fragments are followed.
 */
export function partsFilter(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>): string {
  const names = new Set<string>();
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) names.add(s.name.value);
      else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        walk(info.fragments[s.name.value]?.selectionSet);
      }
    }
  };
  for (const node of info.fieldNodes) walk(node.selectionSet);
  const parts = PARTS.filter((p) => names.has(p));
  // an empty filter means "all" to the REST code; a name it does not know selects no part
  return parts.length ? parts.join(',') : 'none';
}
