import { deflateRawSync, gzipSync } from 'node:zlib'

/** One row of an aggregate report (RFC 7489 Appendix C `record`). */
export interface ReportRow {
  ip: string
  count: number
  disposition?: 'none' | 'quarantine' | 'reject'
  /** policy_evaluated: DKIM and SPF passed and aligned. */
  dkim: 'pass' | 'fail'
  spf: 'pass' | 'fail'
  /** auth_results: the raw check results and the domains they were for. */
  dkimResult: { domain: string, result: string }
  spfResult: { domain: string, result: string }
  headerFrom?: string
}

export interface ReportShape {
  domain: string
  reportId: string
  /** Unix seconds. */
  begin: number
  rows: ReportRow[]
  policy?: 'none' | 'quarantine' | 'reject'
}

/** A report as Google writes it: no namespace, an XML declaration, extra_contact_info, np in the policy. */
export function googleReport (r: ReportShape): string {
  const rows = r.rows.map((row) => `
  <record>
    <row>
      <source_ip>${row.ip}</source_ip>
      <count>${row.count}</count>
      <policy_evaluated>
        <disposition>${row.disposition ?? 'none'}</disposition>
        <dkim>${row.dkim}</dkim>
        <spf>${row.spf}</spf>
      </policy_evaluated>
    </row>
    <identifiers>
      <header_from>${row.headerFrom ?? r.domain}</header_from>
    </identifiers>
    <auth_results>
      <dkim>
        <domain>${row.dkimResult.domain}</domain>
        <result>${row.dkimResult.result}</result>
        <selector>ob202611</selector>
      </dkim>
      <spf>
        <domain>${row.spfResult.domain}</domain>
        <result>${row.spfResult.result}</result>
      </spf>
    </auth_results>
  </record>`).join('')
  return `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <report_metadata>
    <org_name>google.com</org_name>
    <email>noreply-dmarc-support@google.com</email>
    <extra_contact_info>https://support.google.com/a/answer/2466580</extra_contact_info>
    <report_id>${r.reportId}</report_id>
    <date_range>
      <begin>${r.begin}</begin>
      <end>${r.begin + 86399}</end>
    </date_range>
  </report_metadata>
  <policy_published>
    <domain>${r.domain}</domain>
    <adkim>r</adkim>
    <aspf>r</aspf>
    <p>${r.policy ?? 'none'}</p>
    <sp>${r.policy ?? 'none'}</sp>
    <pct>100</pct>
    <np>${r.policy ?? 'none'}</np>
  </policy_published>${rows}
</feedback>
`
}

/**
 * A report as Microsoft (Outlook.com, Exchange Online) writes it: xsd/xsi namespaces, a version, envelope_to and
 * envelope_from among the identifiers, an SPF scope.
 */
export function microsoftReport (r: ReportShape): string {
  const rows = r.rows.map((row) => `<record><row><source_ip>${row.ip}</source_ip><count>${row.count}</count><policy_evaluated>` +
    `<disposition>${row.disposition ?? 'none'}</disposition><dkim>${row.dkim}</dkim><spf>${row.spf}</spf></policy_evaluated></row>` +
    `<identifiers><envelope_to>outlook.com</envelope_to><envelope_from>${row.spfResult.domain}</envelope_from>` +
    `<header_from>${row.headerFrom ?? r.domain}</header_from></identifiers><auth_results><dkim><domain>${row.dkimResult.domain}</domain>` +
    `<selector>ob202611</selector><result>${row.dkimResult.result}</result></dkim><spf><domain>${row.spfResult.domain}</domain>` +
    `<scope>mfrom</scope><result>${row.spfResult.result}</result></spf></auth_results></record>`).join('')
  return '<?xml version="1.0"?><feedback xmlns:xsd="http://www.w3.org/2001/XMLSchema" ' +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><version>1.0</version><report_metadata>' +
    '<org_name>Enterprise Outlook</org_name><email>dmarcreport@microsoft.com</email>' +
    `<report_id>${r.reportId}</report_id><date_range><begin>${r.begin}</begin><end>${r.begin + 86400}</end></date_range>` +
    `</report_metadata><policy_published><domain>${r.domain}</domain><adkim>r</adkim><aspf>r</aspf><p>${r.policy ?? 'none'}</p>` +
    `<sp>${r.policy ?? 'none'}</sp><pct>100</pct><fo>0</fo></policy_published>${rows}</feedback>`
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

function crc32 (data: Buffer): number {
  let c = 0xffffffff
  for (const b of data) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/**
 * A zip archive of one deflated file, as zip tools write it. `declaredSize` overrides the uncompressed size the
 * headers state (a zip bomb states a small one).
 */
export function zipOf (name: string, data: Buffer, declaredSize = data.length): Buffer {
  const body = deflateRawSync(data)
  const crc = crc32(data)
  const nameBytes = Buffer.from(name)
  const local = Buffer.alloc(30)
  local.writeUInt32LE(0x04034b50, 0)
  local.writeUInt16LE(20, 4)
  local.writeUInt16LE(8, 8) // deflate
  local.writeUInt32LE(crc, 14)
  local.writeUInt32LE(body.length, 18)
  local.writeUInt32LE(declaredSize, 22)
  local.writeUInt16LE(nameBytes.length, 26)
  const central = Buffer.alloc(46)
  central.writeUInt32LE(0x02014b50, 0)
  central.writeUInt16LE(20, 4)
  central.writeUInt16LE(20, 6)
  central.writeUInt16LE(8, 10)
  central.writeUInt32LE(crc, 16)
  central.writeUInt32LE(body.length, 20)
  central.writeUInt32LE(declaredSize, 24)
  central.writeUInt16LE(nameBytes.length, 28)
  central.writeUInt32LE(0, 42)
  const cdOffset = local.length + nameBytes.length + body.length
  const cdSize = central.length + nameBytes.length
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(cdSize, 12)
  end.writeUInt32LE(cdOffset, 16)
  return Buffer.concat([local, nameBytes, body, central, nameBytes, end])
}

export function gzipOf (data: Buffer | string): Buffer {
  return gzipSync(data, { level: 1 })
}

/** A report mail: a short text part and the report attached, base64 in lines of 76, as reporters send them. */
export function reportMail (m: { from: string, to: string, subject: string, filename: string, contentType: string, data: Buffer }): string {
  const b64 = m.data.toString('base64').replace(/.{76}/g, '$&\r\n')
  return [
    `From: ${m.from}`, `To: ${m.to}`, `Subject: ${m.subject}`, 'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="=_dmarc"', '',
    '--=_dmarc', 'Content-Type: text/plain; charset=us-ascii', '', 'This is an aggregate report from the receiver.', '',
    '--=_dmarc', `Content-Type: ${m.contentType}; name="${m.filename}"`, `Content-Disposition: attachment; filename="${m.filename}"`,
    'Content-Transfer-Encoding: base64', '', b64, '',
    '--=_dmarc--', ''
  ].join('\r\n')
}

/** Google's file name: `<reporter>!<domain>!<begin>!<end>`. */
export function reportFileName (reporter: string, domain: string, begin: number, ext: string): string {
  return `${reporter}!${domain}!${begin}!${begin + 86399}.${ext}`
}
