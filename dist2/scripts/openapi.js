import { readFileSync, writeFileSync } from 'node:fs';
import { ROUTES } from '../gateway/routes/mod.js';
import { buildOpenApi } from './openapi/document.js';
import { renderApiMarkdown } from './openapi/api_markdown.js';
const ROOT = new URL('../../', import.meta.url);
/** The generated documents, exactly as committed under docs/. */
export function generatedDocs() {
    const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8'));
    return {
        openapi: JSON.stringify(buildOpenApi(ROUTES, pkg.version), null, 2) + '\n',
        apiMarkdown: renderApiMarkdown(ROUTES)
    };
}
// `npm run openapi`: regenerate docs/openapi.json and docs/api.md from the route table.
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
    const docs = generatedDocs();
    writeFileSync(new URL('docs/openapi.json', ROOT), docs.openapi);
    writeFileSync(new URL('docs/api.md', ROOT), docs.apiMarkdown);
    process.stdout.write(`docs/openapi.json and docs/api.md written (${ROUTES.length} routes)\n`);
}
//# sourceMappingURL=openapi.js.map