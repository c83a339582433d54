// Writes the event catalogue into CONTRIBUTING.md between its markers, from the emitters' declarations
// (each plugin's `events`, the core's in core/kernel/event-types.ts, put together for this build by
// app/build.ts) (run: node scripts/events-catalogue.ts; `--check` exits 1 when it is stale).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EventTypeSpec } from '../sdk/index.ts';
import { BUILTIN_EVENT_TYPES } from '../app/build.ts';

export const BEGIN = '<!-- events:begin -->';
export const END = '<!-- events:end -->';
export const CONTRIBUTING = fileURLToPath(new URL('../CONTRIBUTING.md', import.meta.url));

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The markdown table of the given types. */
export function catalogue(types: readonly EventTypeSpec[] = BUILTIN_EVENT_TYPES): string {
  const rows = ['| type | emitter | subject | payload | when |', '|---|---|---|---|---|'];
  for (const t of types) {
    const payload = Object.entries(t.payload).map(([k, v]) => `\`${k}\`: ${v}`).join('; ');
    rows.push(`| \`${t.type}\` | ${t.emitter} | ${t.subject.map((s) => `\`${s}\``).join(', ')} | ${cell(payload)} | ${cell(t.description)} |`);
  }
  return rows.join('\n') + '\n';
}

/** The document with the table between the markers replaced (markers must exist). */
export function withCatalogue(doc: string, table = catalogue()): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`CONTRIBUTING.md lacks the ${BEGIN} / ${END} markers`);
  return `${doc.slice(0, a + BEGIN.length)}\n${table}${doc.slice(b)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = readFileSync(CONTRIBUTING, 'utf8');
  const next = withCatalogue(doc);
  if (process.argv.includes('--check')) {
    if (next !== doc) {
      process.stderr.write('the event catalogue in CONTRIBUTING.md is stale: run node scripts/events-catalogue.ts\n');
      process.exit(1);
    }
  } else if (next !== doc) writeFileSync(CONTRIBUTING, next);
}
