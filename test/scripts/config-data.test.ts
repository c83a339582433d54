import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { stale } from '../../scripts/config-data.ts';
import { ConfigData } from '../../app/config-data.ts';
import { BUILTINS } from '../../app/built-ins.ts';
import { KernelConfig } from '../../sdk/index.ts';

t.test('app/config-data.ts and app/built-ins.ts are generated from the plugins as they are', async (t) => {
  t.same(await stale(), [], 'regenerate with: node scripts/config-data.ts');
});

t.test('each built-in section comes from its plugin: the schema its definition names, at its configKey', async (t) => {
  const props = ConfigData.properties as Record<string, { properties?: Record<string, unknown> }>;
  for (const { def } of BUILTINS) {
    if (!def.configKey || !def.configSchema) continue;
    const [top, sub] = def.configKey.split('.');
    t.equal(sub ? props[top!]!.properties![sub] : props[top!], def.configSchema, `${def.name}: ${def.configKey}`);
  }
  t.notOk('rtmp' in KernelConfig.properties, 'the SDK\'s kernel sections name no plugin section');
  t.notOk('memory' in (KernelConfig.properties.storage.properties as object));
  t.same(Object.keys(Value.Default(ConfigData, {}) as object).slice(11, 14), ['storage', 'rtmp', 'srt'], 'the reference\'s key order');
});
