import { isIP } from 'node:net';

/** Loopback, private, link-local, CGNAT, multicast and reserved ranges: never a customer's public server (an IdP's metadata, a webhook receiver). */
export function isNonPublicAddress(address: string): boolean {
  const v4 = isIP(address) === 4 ? address : ipv4FromMapped(address.toLowerCase());
  if (v4) {
    const [a = 0, b = 0, c = 0] = v4.split('.').map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 0 && c === 0) ||
      (a === 192 && b === 168) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  // What is left under ::/96 (unspecified, loopback, IPv4-compatible) is never public either.
  const v6 = address.toLowerCase();
  return v6.startsWith('::') || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || v6.startsWith('ff');
}

function ipv4FromMapped(v6: string): string | null {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v6);
  if (dotted?.[1]) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (!hex?.[1] || !hex[2]) return null;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}
