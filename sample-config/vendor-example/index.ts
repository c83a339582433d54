import { definePlugin, PUBLIC, Type } from '../../sdk/index.ts';

/**
 * A vendor plugin: compiles against sdk/ alone, takes its settings from its `plugins` entry,
 * and adds one public route.
 */
export default definePlugin({
  name: 'vendor-example',
  configSchema: Type.Object({ motd: Type.String({ default: 'hello' }) }),
  setup(ctx) {
    ctx.http.get('/vendor/motd', { config: PUBLIC }, async () => ({ motd: ctx.config.motd }));
  },
});
