import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { Bool, describe, Int, Port, section, Str, Type } from '../../sdk/index.ts';

t.test('section: each key with its description, the section defaulting to {}', async (t) => {
  const built = section({
    enable: [Bool(false), 'Run it.'],
    port: [Port(0), 'A port.'],
    limit: [Int(5, { minimum: 1, maximum: 9 }), 'At most this many.'],
    auth: section({ user: [Str('admin'), 'The user.'], password: Str('') }),
  });
  // the same schema as the Type.Object + describe it replaces
  const old = describe(Type.Object({
    enable: Type.Boolean({ default: false }),
    port: Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
    limit: Type.Integer({ default: 5, minimum: 1, maximum: 9 }),
    auth: Type.Object({ user: Type.String({ default: 'admin' }), password: Type.String({ default: '' }) }, { default: {} }),
  }, { default: {} }), { enable: 'Run it.', port: 'A port.', limit: 'At most this many.', 'auth.user': 'The user.' });
  t.same(JSON.parse(JSON.stringify(built)), JSON.parse(JSON.stringify(old)));
  t.same(Value.Default(built, {}), { enable: false, port: 0, limit: 5, auth: { user: 'admin', password: '' } }, 'a config without the section loads');
  t.ok(Value.Check(built, { enable: true, port: 80, limit: 9, auth: { user: 'a', password: 'b' } }));
  t.notOk(Value.Check(built, { enable: true, port: 70000, limit: 9, auth: { user: 'a', password: 'b' } }), 'ports end at 65535');
  t.notOk(Value.Check(built, { enable: true, port: 80, limit: 10, auth: { user: 'a', password: 'b' } }), 'the bounds hold');
  t.equal(section({ a: Str('') }, { additionalProperties: false }).additionalProperties, false, 'other options replace the default');
});
