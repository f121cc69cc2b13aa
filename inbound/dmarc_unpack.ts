import { gunzip, inflateRaw } from 'node:zlib'
import { promisify } from 'node:util'

/**
 * The XML of a DMARC aggregate report, out of the attachment it came in: plain XML, gzip (Google, Yahoo) or zip
 * (Microsoft), RFC 7489 §7.2.1.1. The attachment is untrusted input from the internet: decompression stops as soon
 * as the output passes `maxXmlBytes` (a zip bomb costs at most that much work and memory), a zip archive is read
 * through its central directory with every offset and length checked against the buffer, and what is not a plain
 * single report (encrypted entries, ZIP64, other methods than stored and deflate) is refused rather than guessed at.
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
const inflateRawAsync = promisify(inflateRaw)

/** A zip archive with more entries than this is not a DMARC report (they hold one XML file). */
const MAX_ZIP_ENTRIES = 16
/** The end-of-central-directory record is in the last 22 bytes plus at most a 65535-byte comment. */
const EOCD_SEARCH = 22 + 0xffff

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

/** Inflates with the output bounded: past `max` bytes zlib stops and the report is refused as too large. */
async function inflateBounded (data: Uint8Array, packing: 'gzip' | 'deflate', max: number): Promise<Buffer> {
  try {
    return packing === 'gzip'
      ? await gunzipAsync(data, { maxOutputLength: max })
      : await inflateRawAsync(data, { maxOutputLength: max })
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(max)
    throw new DmarcRefusal('malformed', `DMARC report ${packing === 'gzip' ? 'gzip' : 'zip'} data is damaged`, { cause: err })
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
  if (packing === 'gzip') return await inflateBounded(data, 'gzip', maxXmlBytes)
  return await unzipReport(Buffer.from(data.buffer, data.byteOffset, data.byteLength), maxXmlBytes)
}

interface ZipEntry { name: string, flags: number, method: number, compressed: number, size: number, local: number }

function damaged (what: string): DmarcRefusal {
  return new DmarcRefusal('malformed', `DMARC report zip archive is damaged or unsupported: ${what}`)
}

/**
 * The first `.xml` entry of a zip archive (else its first entry), found through the central directory (the local
 * headers' sizes may be left out, bit 3). Sizes are taken from the central directory and checked against the buffer.
 */
async function unzipReport (zip: Buffer, maxXmlBytes: number): Promise<Buffer> {
  let eocd = -1
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - EOCD_SEARCH); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) { eocd = i; break }
  }
  if (eocd < 0) throw damaged('no end of central directory')
  const entries = zip.readUInt16LE(eocd + 10)
  const cdSize = zip.readUInt32LE(eocd + 12)
  const cdOffset = zip.readUInt32LE(eocd + 16)
  if (entries === 0xffff || cdOffset === 0xffffffff) throw damaged('ZIP64 archives are not read')
  if (entries === 0 || entries > MAX_ZIP_ENTRIES) throw damaged(`${entries} entries`)
  if (cdOffset + cdSize > eocd) throw damaged('central directory outside the archive')
  let chosen: ZipEntry | undefined
  let at = cdOffset
  for (let n = 0; n < entries; n++) {
    if (at + 46 > cdOffset + cdSize || zip.readUInt32LE(at) !== 0x02014b50) throw damaged('bad central directory entry')
    const nameLength = zip.readUInt16LE(at + 28)
    const next = at + 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32)
    if (next > cdOffset + cdSize) throw damaged('bad central directory entry')
    const name = zip.toString('latin1', at + 46, at + 46 + nameLength)
    const entry: ZipEntry = {
      name,
      flags: zip.readUInt16LE(at + 8),
      method: zip.readUInt16LE(at + 10),
      compressed: zip.readUInt32LE(at + 20),
      size: zip.readUInt32LE(at + 24),
      local: zip.readUInt32LE(at + 42)
    }
    if (chosen === undefined || (/\.xml$/i.test(name) && !/\.xml$/i.test(chosen.name))) chosen = entry
    at = next
  }
  const e = chosen!
  if ((e.flags & 0x1) !== 0) throw damaged('encrypted entry')
  if (e.compressed === 0xffffffff || e.size === 0xffffffff) throw damaged('ZIP64 entry')
  // The declared size is only a first answer: inflating is bounded by the limit whatever it says.
  if (e.size > maxXmlBytes) throw tooLarge(maxXmlBytes)
  if (e.local + 30 > zip.length || zip.readUInt32LE(e.local) !== 0x04034b50) throw damaged('bad local header')
  const start = e.local + 30 + zip.readUInt16LE(e.local + 26) + zip.readUInt16LE(e.local + 28)
  if (start + e.compressed > zip.length) throw damaged('entry outside the archive')
  const body = zip.subarray(start, start + e.compressed)
  if (e.method === 0) {
    if (body.length > maxXmlBytes) throw tooLarge(maxXmlBytes)
    return body
  }
  if (e.method !== 8) throw damaged(`compression method ${e.method}`)
  return await inflateBounded(body, 'deflate', maxXmlBytes)
}
