import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
/** The folder boundaries of docs/architecture.md, read from the TypeScript sources. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Modules that open connections, sockets, servers or processes: none may reach protocol/. */
const STATEFUL = new Set([
    'ioredis', '@nats-io/transport-node', '@nats-io/nats-core', 'undici', 'nodemailer', 'smtp-server', 'uWebSockets.js', 'piscina',
    'node:net', 'node:tls', 'node:http', 'node:https', 'node:http2', 'node:dgram', 'node:dns', 'node:child_process', 'node:worker_threads'
]);
/** `node:net` offers one pure function the content rules and client identity use; nothing else of it is allowed. */
const PURE_NAMES = { 'node:net': new Set(['isIP']) };
/** The TypeScript sources under `dir`: ES modules (.ts) and the CommonJS thread entries (.cts). */
function sourcesUnder(dir) {
    const out = [];
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory())
            out.push(...sourcesUnder(path));
        else if (entry.name.endsWith('.ts') || entry.name.endsWith('.cts'))
            out.push(path);
    }
    return out;
}
/**
 * Static imports and re-exports, dynamic `import('…')`, and files loaded by `new URL('…', import.meta.url)` (a thread
 * entry, a folder served): each is a file the module needs at run time. The built files in dist/ keep the layout
 * of the sources, so a URL resolves the same way from either.
 */
function importsOf(file) {
    const src = readFileSync(join(ROOT, file), 'utf8');
    const out = [];
    const statements = [
        ...src.matchAll(/^import\s+(type\s+)?([^'";]*?)\s*(?:from\s+)?'([^']+)'/gm),
        ...src.matchAll(/^export\s+(type\s+)?(\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?)\s*from\s+'([^']+)'/gm)
    ];
    for (const m of statements) {
        const clause = m[2] ?? '';
        const names = [...clause.matchAll(/(?:^|[{,])\s*(type\s+)?([A-Za-z_$][\w$]*)/g)].filter((n) => n[1] === undefined).map((n) => n[2]);
        const allTyped = clause.startsWith('{') && names.length === 0;
        out.push({ specifier: m[3], names, typeOnly: m[1] !== undefined || allTyped });
    }
    for (const m of src.matchAll(/\bimport\(\s*'([^']+)'\s*\)|\bnew URL\(\s*'([^']+)'\s*,\s*import\.meta\.url\s*\)/g)) {
        out.push({ specifier: m[1] ?? m[2], names: [], typeOnly: false });
    }
    return out;
}
/** The relative imports of every source under `dir`, each resolved to a path from the repository root. */
function localImports(dir) {
    const out = [];
    for (const file of sourcesUnder(dir)) {
        for (const imp of importsOf(file)) {
            if (imp.specifier.startsWith('.'))
                out.push({ file, target: resolveFrom(file, imp.specifier) });
        }
    }
    return out;
}
const resolveFrom = (file, specifier) => relative(ROOT, resolve(ROOT, dirname(file), specifier));
test('protocol/ imports nothing that opens a connection, and nothing outside itself at run time', () => {
    const files = sourcesUnder('protocol');
    assert.ok(files.length > 10, 'protocol/ sources found');
    for (const file of files) {
        for (const imp of importsOf(file)) {
            if (imp.typeOnly)
                continue;
            if (imp.specifier.startsWith('.')) {
                const target = resolveFrom(file, imp.specifier);
                assert.ok(target.startsWith('protocol/'), `${file} imports ${target} at run time`);
                continue;
            }
            if (!STATEFUL.has(imp.specifier))
                continue;
            const allowed = PURE_NAMES[imp.specifier];
            assert.ok(allowed !== undefined && imp.names.length > 0 && imp.names.every((n) => allowed.has(n)), `${file} imports ${imp.specifier} (${imp.names.join(', ') || 'whole module'})`);
        }
    }
});
/** The running services: each is a role a process runs (cli/ composes them), and none imports another. */
const SERVICES = ['gateway', 'engine', 'inbound', 'webhooks'];
const within = (path, folder) => path === folder || path.startsWith(`${folder}/`);
test('the services (gateway/, engine/, inbound/, webhooks/) import none of each other, nor cli/', () => {
    for (const service of SERVICES) {
        const imports = localImports(service);
        assert.ok(imports.length > 10, `${service}/ sources found`);
        for (const { file, target } of imports) {
            for (const other of [...SERVICES, 'cli']) {
                if (other !== service)
                    assert.ok(!within(target, other), `${file} imports ${target}`);
            }
        }
    }
});
test('shared stores and config import none of the services, nor cli/', () => {
    for (const dir of ['stores', 'config']) {
        for (const { file, target } of localImports(dir)) {
            for (const other of [...SERVICES, 'cli'])
                assert.ok(!within(target, other), `${file} imports ${target}`);
        }
    }
});
/**
 * The dashboard is a browser bundle that talks to the gateway over HTTP only: it imports its own files, the API
 * client (client/src/) and pure protocol files (template rendering), never a service, a store, config/ or cli/.
 */
test('the dashboard imports only its own files, the API client and protocol/', () => {
    const imports = localImports('dashboard');
    assert.ok(imports.length > 10, 'dashboard/ sources found');
    for (const { file, target } of imports) {
        assert.ok(['dashboard', 'client/src', 'protocol'].some((folder) => within(target, folder)), `${file} imports ${target}`);
    }
});
test('outside its folder, protocol/ and each store are imported only through a mod.ts', () => {
    const folderOf = (path) => path.startsWith('protocol/') ? 'protocol' : /^stores\/[a-z_]+/.exec(path)?.[0];
    for (const dir of [...SERVICES, 'stores', 'cli', 'bench', 'scripts', 'config']) {
        for (const { file, target } of localImports(dir)) {
            const folder = folderOf(target);
            if (folder === undefined || folder === folderOf(file))
                continue;
            // a thread's CommonJS entry (.cts) cannot load an ES mod.ts without the require() of an ES module that
            // thread_entry.cts exists to avoid: it imports that file itself
            if (file.endsWith('.cts') && target === 'stores/threads/thread_entry.cts')
                continue;
            // a sub-folder with its own mod.ts (protocol/content_rules/) is an entry point of its own
            assert.ok(target.startsWith(`${folder}/`) && target.endsWith('/mod.ts'), `${file} imports ${target}`);
        }
    }
});
//# sourceMappingURL=layout_boundaries.test.js.map