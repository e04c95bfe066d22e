import { isIP } from 'node:net';

/**
 * Loopback, private, link-local, CGNAT, multicast and reserved ranges: never a customer's public
 * server (an IdP's metadata, a webhook receiver). IPv6 is judged on its bytes, so no spelling slips
 * past, and the forms that carry an IPv4 address inside (IPv4-mapped `::ffff:0:0/96`, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address they lead to.
 */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/%.*$/, '');
  if (isIP(bare) === 4) return isNonPublicV4(bare.split('.').map(Number));
  const bytes = ipv6Bytes(bare);
  return bytes === null || isNonPublicV6(bytes);
}

function isNonPublicV4([a = 0, b = 0, c = 0]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 192 && b === 88 && c === 99) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a >= 224
  );
}

/** Prefixes whose last 32 bits are the IPv4 address connected to: IPv4-mapped, NAT64's well-known (RFC 6052). */
const CARRIES_IPV4 = [
  [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff],
  [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0],
];

function isNonPublicV6(b: number[]): boolean {
  const [b0 = 0, b1 = 0, b2 = 0, b3 = 0] = b;
  if (CARRIES_IPV4.some((prefix) => prefix.every((value, i) => b[i] === value))) return isNonPublicV4(b.slice(12));
  // 6to4 (RFC 3056): bits 16–48 are the IPv4 address the packet is tunnelled to.
  if (b0 === 0x20 && b1 === 0x02) return isNonPublicV4(b.slice(2, 6));
  return (
    // the rest of ::/8 (unspecified, loopback, IPv4-compatible and -translated, local-use NAT64 64:ff9b:1::/48)
    b0 === 0 ||
    // 100::/64, discard only (RFC 6666)
    (b0 === 0x01 && b1 === 0 && b.slice(2, 8).every((x) => x === 0)) ||
    // Teredo 2001::/32 (an IPv4 client inside), and the documentation prefix 2001:db8::/32
    (b0 === 0x20 && b1 === 0x01 && ((b2 === 0 && b3 === 0) || (b2 === 0x0d && b3 === 0xb8))) ||
    // unique local fc00::/7, link-local fe80::/10, site-local fec0::/10, multicast ff00::/8
    b0 >= 0xfc
  );
}

/** The 16 bytes of an IPv6 address (a trailing dotted IPv4 part allowed), or null when it is not one. */
function ipv6Bytes(text: string): number[] | null {
  if (isIP(text) !== 6) return null;
  let groups = text.toLowerCase();
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(groups);
  if (dotted?.[1] && dotted[2]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[2].split('.').map(Number);
    groups = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = groups.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const words = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right].map((w) => parseInt(w, 16));
  return words.flatMap((w) => [w >> 8, w & 255]);
}
