import t from 'tap';
import { ApiError, isApiError } from '../../sdk/errors.ts';
import { startApp } from '../helpers/app.ts';

/*
 * ApiError: a 4xx is an answer (the Basic challenge of every upload makes one), so no stack is
 * captured for it; a 5xx keeps its stack. The brand works for both and the limit is restored.
 */

t.test('a 4xx captures no stack, a 5xx does; the brand and the stack limit hold', async (t) => {
  const limit = Error.stackTraceLimit;
  const answer = new ApiError(401, 'Unauthorized', ['Unauthorized'], 'AUTH_BASIC_UNAUTHORIZED');
  t.equal(answer.stack, 'ApiError: Unauthorized', 'no frames under a 4xx');
  t.ok(isApiError(answer), 'branded');
  t.same(answer.toBody(), { code: 401, message: 'Unauthorized', details: ['Unauthorized'] });
  const fault = (function here() { return new ApiError(500, 'Internal Server Error'); })();
  t.match(fault.stack, /\n\s+at here /, 'a 5xx has its frames');
  t.ok(isApiError(fault), 'branded too');
  t.equal(Error.stackTraceLimit, limit, 'the limit is restored');
  t.notOk(isApiError(new Error('x')), 'a plain Error is not one');
  t.equal(Object.getOwnPropertySymbols(answer).length, 0, 'no own brand key per error: it is on the prototype');
});

t.test('every status gets its reason phrase as the message (the interface 2.2), not "Error"', async (t) => {
  t.same([414, 431, 501, 504, 406].map((s) => new ApiError(s).message), ['URI Too Long', 'Request Header Fields Too Large', 'Not Implemented', 'Gateway Timeout', 'Not Acceptable']);
  t.equal(new ApiError(507).message, 'Insufficient Storage');
  t.equal(new ApiError(599).message, 'Error', 'a status without a name');
});

t.test('a URI too long for the router is 414 "URI Too Long" with the Error body', async (t) => {
  const app = await startApp(t);
  const r = await app.request('GET', `/api/v3/metadata/${'x'.repeat(8000)}`);
  t.match([r.status, r.body], [414, { code: 414, message: 'URI Too Long', details: Array }]);
});
