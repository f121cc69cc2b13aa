import { hostname } from 'node:os'
import { workerData } from 'node:worker_threads'
import { analyzeMessage, type AnalysisRequest, type MessageAnalysis } from './analysis.ts'
import { dnsResolver } from './authenticate.ts'

/** Piscina entry: one resolver per thread, created once; tasks overlap while they wait on DNS. */
const resolver = dnsResolver((workerData as { dnsServers?: string[] } | undefined)?.dnsServers ?? [])
const mta = hostname()

export type AnalysisOutcome = { ok: true, analysis: MessageAnalysis } | { ok: false, error: string }

/** A batch of messages, analysed concurrently; one failing message does not fail the others. */
export default async function run (reqs: AnalysisRequest[]): Promise<AnalysisOutcome[]> {
  return await Promise.all(reqs.map(async (req): Promise<AnalysisOutcome> => {
    try {
      return { ok: true, analysis: await analyzeMessage(req, resolver, mta) }
    } catch (err) {
      return { ok: false, error: (err as Error).message }
    }
  }))
}
