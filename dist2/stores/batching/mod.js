/** The one "gather what arrives this turn, send it later in one round trip" batcher. */
export { ItemFailure, TurnBatch } from './turn_batch.js';
//# sourceMappingURL=mod.js.map