// The content rules alone (their own folder and mod.ts): the thread does not load the rest of the protocol module.
import { analyzeContent, type ContentInput, type ContentReport } from '../protocol/content_rules/mod.ts'

/** Piscina entry; `undefined` is the pool's warm-up task before close. */
export default function run (input: ContentInput | undefined): ContentReport | undefined {
  return input === undefined ? undefined : analyzeContent(input)
}
