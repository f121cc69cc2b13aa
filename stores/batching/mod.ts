/** The one "gather what arrives this turn, send it later in one round trip" batcher. */
export { ItemFailure, TurnBatch, type TurnBatchOptions } from './turn_batch.ts'
