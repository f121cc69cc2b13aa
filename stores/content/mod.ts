export { ContentStore, contentTtlMs, openContentStore } from './content_store.ts'
