// The content rules alone: they open no connection, so the thread does not load the rest of the protocol module.
import { analyzeContent, type ContentInput, type ContentReport } from '../protocol/mod.ts'

/** Piscina entry; `undefined` is the pool's warm-up task before close. */
export default function run (input: ContentInput | undefined): ContentReport | undefined {
  return input === undefined ? undefined : analyzeContent(input)
}
