import { someIp } from './auth.ts';

export interface Page {
  status: number;
  /** Where the last request went. */
  url: string;
  headers: Headers;
  body: string;
}

/**
 * A user agent for the hosted pages: keeps cookies (by name; every path gets them all), posts forms,
 * and follows redirects while they stay on the server. A redirect elsewhere (the client's redirect
 * URI) is where it stops, so a test can read the code from it.
 */
export class Browser {
  private readonly cookies = new Map<string, string>();
  readonly ip: string;

  constructor(
    private readonly origin: string,
    ip = someIp(),
    /** Sent with every request, as a proxy in front of the server would add them (`x-forwarded-proto`). */
    private readonly extraHeaders: Record<string, string> = {},
  ) {
    this.ip = ip;
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const expired = attributes.some(
        (a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && new Date(a.slice(8)).getTime() < Date.now()),
      );
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  hasCookie(name: string): boolean {
    return this.cookies.has(name);
  }

  async request(url: string, form?: Record<string, string>): Promise<Page> {
    const target = new URL(url, this.origin);
    const headers: Record<string, string> = { ...this.extraHeaders, accept: 'text/html', 'x-forwarded-for': this.ip };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(form).toString();
    }
    const res = await fetch(target, { method: form ? 'POST' : 'GET', headers, body, redirect: 'manual' });
    this.remember(res);
    return { status: res.status, url: target.href, headers: res.headers, body: await res.text() };
  }

  /** Requests `url` and follows redirects on this server; answers the page, or the first redirect elsewhere. */
  async go(url: string, form?: Record<string, string>): Promise<Page & { location?: string }> {
    let page = await this.request(url, form);
    for (let hops = 0; hops < 10; hops++) {
      const location = page.headers.get('location');
      if (!location || page.status < 300 || page.status >= 400) return page;
      const next = new URL(location, page.url);
      if (next.origin !== this.origin) return { ...page, location: next.href };
      page = await this.request(next.href);
    }
    throw new Error('too many redirects');
  }
}

/** The `action` of the page's form whose submit button says `label` (the first form when omitted). */
export function formAction(html: string, label?: string): string {
  const forms = [...html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)];
  const form = label ? forms.find((f) => (f[2] ?? '').includes(`>${label}</button>`)) : forms[0];
  if (!form?.[1]) throw new Error(`no form${label ? ` with "${label}"` : ''} in:\n${html}`);
  return form[1].replace(/&#38;/g, '&');
}

/** The value of a hidden input. */
export function hiddenInput(html: string, name: string): string {
  const value = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1];
  if (value === undefined) throw new Error(`no hidden ${name} in:\n${html}`);
  return value;
}
