export function route(def) {
    return def;
}
//# sourceMappingURL=route.js.map