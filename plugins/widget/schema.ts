import { Type, type Static } from '../../sdk/index.ts';

/** `WidgetProcess` (reference 5.15): the minimal public figures of a process. */
export const WidgetProcess = Type.Object({
  current_sessions: Type.Integer({ minimum: 0 }),
  total_sessions: Type.Integer({ minimum: 0 }),
  uptime: Type.Integer({ minimum: 0, description: 'seconds in state running, else 0' }),
});
export type WidgetProcess = Static<typeof WidgetProcess>;

export const WidgetParams = Type.Object({ id: Type.String() });
