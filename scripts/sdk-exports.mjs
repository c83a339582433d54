// Counts the names the SDK's entries export (types included), as TypeScript sees them: the
// measure "contract exports" of issue 45 is the first line (run: node scripts/sdk-exports.mjs).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ts = createRequire(import.meta.url)('typescript');
const root = fileURLToPath(new URL('../', import.meta.url));
for (const [entry, file] of [['contract (@media-core/sdk)', 'sdk/contract.ts'], ['toolkit (@media-core/sdk/toolkit)', 'sdk/toolkit.ts'], ['both (sdk/index.ts)', 'sdk/index.ts']]) {
  const program = ts.createProgram([root + file], { allowImportingTsExtensions: true, noEmit: true, module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ESNext });
  const checker = program.getTypeChecker();
  const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(root + file)));
  console.log(`${entry}: ${exports.length}`);
}
