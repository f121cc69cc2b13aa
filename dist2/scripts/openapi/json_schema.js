/**
 * A TypeBox schema as plain JSON Schema: TypeBox keeps its own markers under `~`-prefixed and symbol keys,
 * which mean nothing to OpenAPI tools, so only enumerable string keys without `~` are copied.
 */
export function toJsonSchema(schema) {
    return clean(schema);
}
function clean(value) {
    if (Array.isArray(value))
        return value.map(clean);
    if (value === null || typeof value !== 'object')
        return value;
    const out = {};
    for (const key of Object.keys(value)) {
        if (key.startsWith('~'))
            continue;
        const v = value[key];
        if (v === undefined || typeof v === 'function')
            continue;
        out[key] = clean(v);
    }
    return out;
}
/** `:id` segments of a uWS pattern become OpenAPI `{id}` templates. */
export function openApiPath(path) {
    return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}
export function pathParams(path) {
    return [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
}
export function httpMethod(method) {
    return method === 'del' ? 'delete' : method;
}
/** A stable operation id from method and path: GET /v1/domains/:id → getDomainsById. */
export function operationId(method, path) {
    const words = path.split('/').filter((s) => s !== '' && s !== 'v1').map((s) => {
        const param = s.startsWith(':');
        const name = (param ? s.slice(1) : s).split(/[-_.]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
        return param ? `By${name}` : name;
    });
    return httpMethod(method) + words.join('');
}
//# sourceMappingURL=json_schema.js.map