/** The part of dns2 2.x (which ships no types) that test/helpers/dns-server.ts uses. */
declare module 'dns2' {
  import type { EventEmitter } from 'node:events';

  interface Question {
    name: string;
    type: number;
    class: number;
  }

  interface Answer {
    name: string;
    type: number;
    class: number;
    ttl: number;
    data?: string | string[];
  }

  class Packet {
    header: { id: number; qr: number; rcode: number };
    questions: Question[];
    answers: Answer[];
    static TYPE: Record<'A' | 'TXT' | 'AAAA' | 'CNAME', number>;
    static CLASS: Record<'IN', number>;
    static createResponseFromRequest(request: Packet): Packet;
  }

  interface ServerAddresses {
    udp?: { address: string; port: number };
  }

  interface DNSServer extends EventEmitter {
    listen(options: { udp?: { port: number; address: string; type?: 'udp4' | 'udp6' } }): Promise<ServerAddresses>;
    addresses(): ServerAddresses;
    close(): Promise<void>;
  }

  interface ServerOptions {
    udp?: boolean;
    handle(request: Packet, send: (response: Packet) => void, rinfo: unknown): void;
  }

  const dns2: {
    Packet: typeof Packet;
    createServer(options: ServerOptions): DNSServer;
  };
  export default dns2;
}
