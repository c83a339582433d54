import type { FilesystemService } from '../../../sdk/index.ts';
import type { MetricCollector, MetricDescription, MetricValue } from '../api.ts';

const DESCRIPTIONS: readonly MetricDescription[] = [
  { name: 'filesystem_limit', description: 'Total size of the filesystem in bytes, negative if unlimited', labels: ['name'] },
  { name: 'filesystem_usage', description: 'Number of used bytes', labels: ['name'] },
  { name: 'filesystem_files', description: 'Number of files', labels: ['name'] },
];

/**
 * The reference's name of a filesystem: `diskfs` and `memfs` are the legacy aliases clients
 * (restreamer-ui) filter on; a vendor filesystem without such an alias goes by its own name.
 */
export function metricName(fs: FilesystemService): string {
  return fs.aliases?.find((a) => a.endsWith('fs') && !a.includes(':')) ?? fs.name;
}

/** `filesystem_*` of every filesystem in the registry (the list is live: later providers appear). */
export function filesystemsCollector(list: () => readonly FilesystemService[]): MetricCollector {
  const labelsOf = new WeakMap<FilesystemService, Readonly<Record<string, string>>>();
  return {
    describe: () => DESCRIPTIONS,
    collect() {
      const out: MetricValue[] = [];
      for (const fs of list()) {
        let labels = labelsOf.get(fs);
        if (!labels) labelsOf.set(fs, (labels = Object.freeze({ name: metricName(fs) })));
        const u = fs.usage();
        out.push(
          { name: 'filesystem_limit', labels, value: u.limit > 0 ? u.limit : -1 },
          { name: 'filesystem_usage', labels, value: u.used },
          { name: 'filesystem_files', labels, value: u.files ?? 0 },
        );
      }
      return out;
    },
  };
}
