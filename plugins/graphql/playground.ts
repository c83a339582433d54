/*
 * `GET /api/graph`: a small self-contained query page (no files from the network, so it works
 * on an offline box). It posts to /api/graph/query with the token typed in, kept in the
 * browser's localStorage.
 */
export const PLAYGROUND_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>GraphQL</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 0; display: grid; grid-template-columns: 1fr 1fr; height: 100vh; }
  section { display: flex; flex-direction: column; padding: 8px; gap: 6px; min-height: 0; }
  textarea, pre { flex: 1; font: 13px ui-monospace, monospace; margin: 0; padding: 6px; border: 1px solid #ccc; overflow: auto; }
  #vars { flex: 0 0 6em; }
  header { display: flex; gap: 6px; }
  input { flex: 1; }
</style>
</head>
<body>
<section>
  <header><button id="run" title="Ctrl+Enter">Run</button><input id="token" placeholder="access token (if auth is on)"></header>
  <textarea id="query" spellcheck="false">{
  about { app version { number } }
  processes { id state { state } }
}</textarea>
  <textarea id="vars" spellcheck="false" placeholder="variables (JSON)"></textarea>
</section>
<section><pre id="out"></pre></section>
<script>
const endpoint = '/api/graph/query';
const $ = (id) => document.getElementById(id);
$('token').value = localStorage.getItem('graphql-token') || '';
async function run() {
  localStorage.setItem('graphql-token', $('token').value);
  let variables;
  try { variables = $('vars').value.trim() ? JSON.parse($('vars').value) : undefined; }
  catch (e) { $('out').textContent = 'variables: ' + e.message; return; }
  const headers = { 'content-type': 'application/json' };
  if ($('token').value) headers.authorization = 'Bearer ' + $('token').value;
  const res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ query: $('query').value, variables }) });
  const text = await res.text();
  try { $('out').textContent = res.status + '\\n' + JSON.stringify(JSON.parse(text), null, 2); }
  catch { $('out').textContent = res.status + '\\n' + text; }
}
$('run').onclick = run;
document.addEventListener('keydown', (e) => { if (e.ctrlKey && e.key === 'Enter') run(); });
</script>
</body>
</html>
`;
