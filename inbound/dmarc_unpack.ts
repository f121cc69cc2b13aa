import type { Readable } from 'node:stream'
import { gunzip } from 'node:zlib'
import { promisify } from 'node:util'
import yauzl from 'yauzl'

/**
 * The XML of a DMARC aggregate report, out of the attachment it came in: plain XML, gzip (Google, Yahoo) or zip
 * (Microsoft), RFC 7489 §7.2.1.1. The attachment is untrusted input from the internet: decompression stops as soon
 * as the output passes `maxXmlBytes` (a zip bomb costs at most that much work and memory), a zip archive is read
 * with yauzl, which checks its structure, and what is not a plain report (encrypted entries, more than a few
 * entries, other methods than stored and deflate) is refused rather than guessed at.
 */

/** Why a report was refused; each is an SMTP reply and a metric label (`outbox_dmarc_reports_total{result}`). */
export type DmarcRefusalCode = 'too_large' | 'too_many_records' | 'malformed'

/** A report that is refused, with the text its SMTP reply carries. */
export class DmarcRefusal extends Error {
  constructor (readonly code: DmarcRefusalCode, text: string, options?: ErrorOptions) {
    super(text, options)
    this.name = 'DmarcRefusal'
  }
}

const gunzipAsync = promisify(gunzip)

/** A zip archive with more entries than this is not a DMARC report (they hold one XML file). */
const MAX_ZIP_ENTRIES = 16

export type ReportPacking = 'xml' | 'gzip' | 'zip'

/** What the bytes are, by their first bytes (content types vary between reporters: octet-stream, x-zip, …). */
export function packingOf (data: Uint8Array): ReportPacking | undefined {
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) return 'gzip'
  if (data.length >= 4 && data[0] === 0x50 && data[1] === 0x4b && data[2] === 0x03 && data[3] === 0x04) return 'zip'
  let i = 0
  if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) i = 3 // UTF-8 byte order mark
  while (i < data.length && i < 64 && (data[i] === 0x20 || data[i] === 0x0a || data[i] === 0x0d || data[i] === 0x09)) i++
  return data[i] === 0x3c ? 'xml' : undefined // '<'
}

function tooLarge (maxXmlBytes: number): DmarcRefusal {
  return new DmarcRefusal('too_large', `DMARC report XML larger than ${maxXmlBytes} bytes once decompressed`)
}

/** Gunzips with the output bounded: past `max` bytes zlib stops and the report is refused as too large. */
async function gunzipBounded (data: Uint8Array, max: number): Promise<Buffer> {
  try {
    return await gunzipAsync(data, { maxOutputLength: max })
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(max)
    throw new DmarcRefusal('malformed', 'DMARC report gzip data is damaged', { cause: err })
  }
}

/** The report's XML bytes, at most `maxXmlBytes` of them; throws DmarcRefusal otherwise. */
export async function unpackReport (data: Uint8Array, maxXmlBytes: number): Promise<Buffer> {
  const packing = packingOf(data)
  if (packing === undefined) throw new DmarcRefusal('malformed', 'The attachment is not XML, gzip or zip')
  if (packing === 'xml') {
    if (data.length > maxXmlBytes) throw tooLarge(maxXmlBytes)
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  }
  if (packing === 'gzip') return await gunzipBounded(data, maxXmlBytes)
  return await unzipReport(Buffer.from(data.buffer, data.byteOffset, data.byteLength), maxXmlBytes)
}

function damaged (what: string, cause?: unknown): DmarcRefusal {
  return new DmarcRefusal('malformed', `DMARC report zip archive is damaged or unsupported: ${what}`, { cause })
}

const zipFromBuffer = promisify<Buffer, yauzl.Options, yauzl.ZipFile>(yauzl.fromBuffer)

/**
 * The first `.xml` entry of a zip archive (else its first entry), read with yauzl, which checks the archive's
 * structure; reading stops once the output passes `maxXmlBytes`, whatever the archive declares.
 */
async function unzipReport (zip: Buffer, maxXmlBytes: number): Promise<Buffer> {
  let archive: yauzl.ZipFile
  try {
    // sizes are not taken on trust either way: the read is bounded by the limit (an entry past it is too large)
    archive = await zipFromBuffer(zip, { lazyEntries: true, validateEntrySizes: false, strictFileNames: false })
  } catch (err) {
    throw damaged((err as Error).message, err)
  }
  try {
    if (archive.entryCount === 0 || archive.entryCount > MAX_ZIP_ENTRIES) throw damaged(`${archive.entryCount} entries`)
    const entry = await chosenEntry(archive)
    if (entry.isEncrypted()) throw damaged('encrypted entry')
    // The declared size is only a first answer: the read below is bounded by the limit whatever it says.
    if (entry.uncompressedSize > maxXmlBytes) throw tooLarge(maxXmlBytes)
    return await readBounded(archive, entry, maxXmlBytes)
  } finally {
    archive.close()
  }
}

async function chosenEntry (archive: yauzl.ZipFile): Promise<yauzl.Entry> {
  return await new Promise((resolve, reject) => {
    let chosen: yauzl.Entry | undefined
    archive.on('entry', (e: yauzl.Entry) => {
      if (chosen === undefined || (/\.xml$/i.test(e.fileName) && !/\.xml$/i.test(chosen.fileName))) chosen = e
      archive.readEntry()
    })
    archive.once('end', () => { chosen === undefined ? reject(damaged('no entry')) : resolve(chosen) })
    archive.once('error', (err: Error) => { reject(damaged(err.message, err)) })
    archive.readEntry()
  })
}

async function readBounded (archive: yauzl.ZipFile, entry: yauzl.Entry, max: number): Promise<Buffer> {
  const stream = await new Promise<Readable>((resolve, reject) => {
    archive.openReadStream(entry, (err, s) => { err === null ? resolve(s) : reject(damaged(err.message, err)) })
  })
  const chunks: Buffer[] = []
  let bytes = 0
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length
      if (bytes > max) throw tooLarge(max)
      chunks.push(chunk)
    }
  } catch (err) {
    stream.destroy()
    if (err instanceof DmarcRefusal) throw err
    throw damaged((err as Error).message, err)
  }
  return Buffer.concat(chunks, bytes)
}
