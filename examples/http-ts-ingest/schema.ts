import { Type, type ConfigErrors, type Static } from '@media-core/sdk';

/** The plugin's own settings: the `config` of its `plugins` entry. */
export const HttpTsConfig = Type.Object({
  path: Type.String({ default: '/ingest/ts', description: 'Route prefix: publishers PUT/POST to `<path>/<name>`, processes read `<path>/<name>`.' }),
  token: Type.String({ default: '', description: 'Token publishers must give as `?token=` (empty = none needed).' }),
  max_streams: Type.Integer({ default: 16, minimum: 1, description: 'Streams live at once; more publishers get 503.' }),
  names: Type.String({ default: '^[A-Za-z0-9_.-]{1,64}$', description: 'Regular expression a stream name must match.' }),
  reader_buffer_kbytes: Type.Integer({ default: 2048, minimum: 64, description: 'Bytes queued for a slow reader before it is dropped.' }),
});
export type HttpTsConfig = Static<typeof HttpTsConfig>;

/** What the schema cannot say; errors keyed relative to the plugin's `config`. */
export function validateConfig(c: HttpTsConfig): ConfigErrors {
  const errs: ConfigErrors = {};
  if (!/^\/[A-Za-z0-9/_.-]*[A-Za-z0-9_.-]$/.test(c.path)) errs.path = ['must start with / and not end with /'];
  else if (c.path === '/api' || c.path.startsWith('/api/')) errs.path = ['must not be under /api'];
  try {
    new RegExp(c.names);
  } catch (err) {
    errs.names = [`not a regular expression: ${(err as Error).message}`];
  }
  return errs;
}
