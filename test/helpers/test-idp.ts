import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

export interface IdpAccount {
  sub: string;
  claims: Record<string, unknown>;
}

export interface TestIdp {
  issuer: string;
  /** The account the next sign-in at this provider becomes (the provider's own login is skipped). */
  signInAs(account: IdpAccount): void;
  /**
   * A fresh browser at the provider: follows its redirects with its cookies until it redirects elsewhere
   * (the relying party's callback), and answers that URL.
   */
  authorize(url: string): Promise<URL>;
  close(): Promise<void>;
}

/**
 * A real OpenID provider in-process (oidc-provider), playing a customer's IdP or a social provider:
 * code flow with PKCE, signed id_tokens, userinfo. Its login and consent prompts complete on their own
 * as the account given to `signInAs`, so tests drive only the relying party's side.
 */
export async function startTestIdp(clients: { client_id: string; client_secret: string; redirect_uris: string[] }[]): Promise<TestIdp> {
  let next: IdpAccount | null = null;
  const accounts = new Map<string, IdpAccount>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const configuration: Configuration = {
    clients: clients.map((c) => ({ ...c, grant_types: ['authorization_code'], response_types: ['code'] })),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'groups'] },
    scopes: ['openid', 'email', 'profile'],
    cookies: { keys: ['test-idp-cookie-key'] },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ sub, ...account.claims }) } : undefined;
    },
  };
  const provider = new Provider(issuer, configuration);
  const callback = provider.callback();
  server.on('request', (req, res) => {
    const match = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
    if (!match) {
      callback(req, res);
      return;
    }
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        if (!next) throw new Error('signInAs() was not called');
        accounts.set(next.sub, next);
        await provider.interactionFinished(req, res, { login: { accountId: next.sub } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = new provider.Grant({ accountId: details.session?.accountId as string, clientId: details.params.client_id as string });
      grant.addOIDCScope(String(details.params.scope));
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });

  const cookies = new Map<string, string>();
  return {
    issuer,
    signInAs(account) {
      next = account;
    },
    async authorize(url) {
      cookies.clear(); // a fresh browser each time: no provider session carries over to another account
      let target = new URL(url);
      for (let hop = 0; hop < 10; hop++) {
        if (target.origin !== issuer) return target;
        const res = await fetch(target, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
        for (const line of res.headers.getSetCookie()) {
          const [pair = ''] = line.split(';');
          const eq = pair.indexOf('=');
          cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
        }
        const location = res.headers.get('location');
        if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${await res.text()}`);
        target = new URL(location, target);
      }
      throw new Error('too many redirects at the provider');
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
