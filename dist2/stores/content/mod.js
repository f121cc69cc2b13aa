export { ContentStore, contentTtlMs, openContentStore } from './content_store.js';
//# sourceMappingURL=mod.js.map