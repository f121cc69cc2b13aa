import { test } from 'node:test'
import assert from 'node:assert/strict'
import { isBlockedAddress } from '../../../protocol/mod.ts'

test('non-public addresses are refused, public ones pass', () => {
  const blocked = [
    '127.0.0.1', '127.8.9.10', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1',
    '100.127.255.254', '169.254.169.254', '0.0.0.0', '224.0.0.1', '239.255.255.250', '255.255.255.255',
    '::', '::1', 'fe80::1', 'febf::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1',
    '::ffff:10.1.2.3', '::ffff:169.254.169.254', '::127.0.0.1', '64:ff9b::a00:1', '0:0:0:0:0:0:0:1', 'fe80::1%eth0', 'not-an-ip',
    '192.0.2.1', '198.51.100.7', '203.0.113.254', '::ffff:203.0.113.9',
    // IPv6 spelled every way: full, compressed, upper case, mapped in hex, 6to4 of a private address, discard-only
    '0000:0000:0000:0000:0000:0000:0000:0001', 'FE80::ABCD', 'fdff:ffff::1', 'fc00:0:0:0:0:0:0:0', '::ffff:c0a8:101',
    '::ffff:172.16.5.4', '2002:7f00:1::1', '2002:a00:1::', '2002:c0a8:101::1', '100::1', '2001:db8:1::25', 'ff05::2'
  ]
  const allowed = ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '192.169.0.1', '192.0.3.1',
    '198.51.101.1', '203.0.114.1',
    '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808',
    '2002:808:808::1', '2a00:1450:400c:c0b::1b', 'fbff::1', 'fe00::1', '100:0:0:1::1']
  for (const ip of blocked) assert.equal(isBlockedAddress(ip), true, ip)
  for (const ip of allowed) assert.equal(isBlockedAddress(ip), false, ip)
})
