import dns2 from 'dns2';

const { Packet } = dns2;

/**
 * A real DNS server on a free UDP port of 127.0.0.1 that answers TXT questions from what a test
 * published; anything else is NXDOMAIN. Point the service at it with `DNS_SERVERS=<address>`.
 */
export class TestDnsServer {
  private readonly txt = new Map<string, string[][]>();
  private readonly server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const records = question ? this.txt.get(question.name.toLowerCase()) : undefined;
      if (!question || !records) {
        response.header.rcode = 3;
      } else if (question.type === Packet.TYPE.TXT) {
        for (const data of records) {
          response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data });
        }
      }
      send(response);
    },
  });
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address = '';
  /** Questions received, by name (to check that a lookup really went through this server). */
  readonly asked: string[] = [];

  async start(): Promise<string> {
    this.server.on('request', (request: { questions: { name: string }[] }) => this.asked.push(...request.questions.map((q) => q.name)));
    await this.server.listen({ udp: { port: 0, address: '127.0.0.1', type: 'udp4' } });
    const udp = this.server.addresses().udp;
    if (!udp) throw new Error('the DNS server did not bind');
    this.address = `127.0.0.1:${udp.port}`;
    return this.address;
  }

  /** Publishes one TXT record at `name` (added to any there); a record may be split into several strings. */
  publishTxt(name: string, value: string | string[]): void {
    const key = name.toLowerCase();
    this.txt.set(key, [...(this.txt.get(key) ?? []), Array.isArray(value) ? value : [value]]);
  }

  remove(name: string): void {
    this.txt.delete(name.toLowerCase());
  }

  stop(): Promise<void> {
    return this.server.close();
  }
}
