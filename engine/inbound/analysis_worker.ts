import { hostname } from 'node:os'
import { workerData } from 'node:worker_threads'
import { analyzeMessage, type AnalysisRequest, type MessageAnalysis } from './analysis.ts'
import { dnsResolver } from './authenticate.ts'

/** Piscina entry: one resolver per thread, created once; tasks overlap while they wait on DNS. */
const resolver = dnsResolver((workerData as { dnsServers?: string[] } | undefined)?.dnsServers ?? [])
const mta = hostname()

export default async function run (req: AnalysisRequest): Promise<MessageAnalysis> {
  return await analyzeMessage(req, resolver, mta)
}
