// The S3 test server: @20minutes/s3rver (objects stored in a folder, SigV4 signatures checked) on
// 127.0.0.1. Usage: node --openssl-legacy-provider server.cjs <dir> <port>; prints `listening <port>`.
// --openssl-legacy-provider: its listing continuation tokens use DES, which OpenSSL 3 keeps there.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

// The SDK signs bucket requests (`PUT /bucket/`, `GET /bucket/?list-type=2`) with the path as sent,
// trailing slash included; s3rver rebuilds the path without it and refuses the signature. The fix
// (one line) is applied to its source as it loads, never to the installed files.
const file = require.resolve('@20minutes/s3rver/lib/middleware/authentication.js');
const anchor = "      if (ctx.params.key) {\n        canonicalizedResource += `/${ctx.params.key}`\n      }\n";
const src = fs.readFileSync(file, 'utf8');
if (!src.includes(anchor)) throw new Error('s3rver changed: the trailing-slash fix no longer applies');
const fixed = src.replace(anchor, anchor + "      else if (!ctx.state.vhost && ctx.path.endsWith('/')) canonicalizedResource += '/'\n");
const mod = new Module(file, module);
mod.filename = file;
mod.paths = Module._nodeModulePaths(path.dirname(file));
mod._compile(fixed, file);
mod.loaded = true;
require.cache[file] = mod;

const S3rver = require('@20minutes/s3rver');
const [dir, port] = process.argv.slice(2);
new S3rver({ address: '127.0.0.1', port: Number(port ?? 0), silent: true, directory: dir })
  .run()
  .then(({ port: bound }) => console.log(`listening ${bound}`), (err) => { console.error(err); process.exit(1); });
process.on('SIGTERM', () => process.exit(0));
