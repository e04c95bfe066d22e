import { isNonPublicAddress } from '../../core/public-address.ts';
import { outboundFetch } from '../../core/outbound.ts';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import {
  generateServiceProviderMetadata,
  SAML,
  ValidateInResponseTo,
  type CacheProvider,
  type Profile,
  type SamlConfig,
} from '@node-saml/node-saml';
import { DOMParser } from '@xmldom/xmldom';
import type { Redis } from 'ioredis';
import { AppError } from '../../core/errors.ts';
import { canonicalEmail } from '../../core/addresses.ts';

/**
 * The SAML 2.0 service-provider core: IdP metadata in, SP metadata out, the AuthnRequest redirect, and
 * the validation of the IdP's POSTed response. Pure functions over plain configs: no routes, no tables.
 * Signature checks, audience and Conditions times are node-saml's; the checks node-saml 5 leaves out
 * (issuer, Destination, the bearer SubjectConfirmation's Recipient and NotOnOrAfter, single use of the
 * request id) are done here, on the XML node-saml verified.
 */

/** Our side of a connection. `entityId` is the audience IdPs must address; `acsUrl` receives the POSTed response. */
export interface SpSamlConfig {
  entityId: string;
  acsUrl: string;
}

/** What we keep of an IdP's metadata. Stored as JSON on the connection, hence snake_case. */
export interface IdpSamlConfig {
  entity_id: string;
  /** Where the AuthnRequest goes. */
  sso_url: string;
  /** The binding `sso_url` was published for: HTTP-Redirect is preferred, HTTP-POST is the fallback. */
  sso_binding: 'redirect' | 'post';
  /** The IdP's signing certificates (more than one during a key rotation): base64 DER, no PEM armour, no whitespace. */
  signing_certs: string[];
}

export interface SamlProfile {
  name_id: string;
  /** The NameID's Format attribute, when the IdP sent one. */
  name_id_format: string | null;
  /** Lowercased; from the NameID when its format is emailAddress, else from an email attribute. */
  email: string;
  /** Every attribute that carried text: a string, or an array when the IdP sent several values. */
  attributes: Record<string, string | string[]>;
  session_index?: string;
}

/**
 * Where issued AuthnRequest ids wait for their response. Shared by every instance of the service (a
 * response may reach another instance than the one that redirected), so never process memory in
 * production: see `redisRequestIdStore`. Namespace it per connection so that an id issued for one
 * connection cannot be answered through another.
 */
export interface RequestIdStore {
  save(id: string, expiresAt: Date): Promise<void>;
  /** Removes the id; true only for the first take of an id that was saved and has not expired. Must be atomic. */
  take(id: string): Promise<boolean>;
}

export interface FetchIdpMetadataOptions {
  fetch?: typeof fetch;
  /** For the whole fetch: DNS, connect, redirects and body. Default 5 s. */
  timeoutMs?: number;
  /** Tests and local development: allows http (outside NODE_ENV=production). */
  allowInsecure?: boolean;
  /** `ALLOW_PRIVATE_IDP_TARGETS`: allows loopback and private addresses (tests, a local IdP). */
  allowPrivate?: boolean;
}

export interface AuthnRequestOptions {
  store: RequestIdStore;
  /** How long the IdP has to answer. Default 10 minutes. */
  ttlMs?: number;
}

export interface AuthnRequest {
  url: string;
  /** The AuthnRequest's ID, saved in the store: the response's InResponseTo must name it. */
  requestId: string;
  expiresAt: Date;
}

export interface ValidateSamlResponseOptions {
  store: RequestIdStore;
  /** Tolerance on NotBefore / NotOnOrAfter. Default 60 s, at most 5 minutes. */
  clockSkewMs?: number;
}

/** IdP metadata and SAML responses are small; a cap keeps parsing cheap and bounded. */
export const MAX_SAML_XML_BYTES = 256 * 1024;
export const DEFAULT_CLOCK_SKEW_MS = 60_000;
const MAX_CLOCK_SKEW_MS = 5 * 60_000;
export const DEFAULT_REQUEST_TTL_MS = 10 * 60_000;
const DEFAULT_FETCH_TIMEOUT_MS = 5_000;
const MAX_REDIRECTS = 3;
/** SAML bindings §3.4.3: RelayState MUST NOT exceed 80 bytes. */
const MAX_RELAY_STATE_BYTES = 80;

const MD_NS = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS_NS = 'http://www.w3.org/2000/09/xmldsig#';
const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const BINDING_REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const BINDING_POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const EMAIL_NAME_ID_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
/** Attribute names that carry the email, compared lowercased, in order of preference. */
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailaddress',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
];

const badMetadata = (reason: string, cause?: unknown) => new AppError('BAD_REQUEST', `The IdP metadata ${reason}`, { cause });

/** Parses IdP metadata XML (an EntityDescriptor, or an EntitiesDescriptor holding exactly one IdP). */
export function parseIdpMetadata(xml: string, opts: { allowInsecure?: boolean } = {}): IdpSamlConfig {
  if (typeof xml !== 'string' || xml.trim() === '') throw badMetadata('is empty');
  const root = parseXml(xml, badMetadata).documentElement;
  const entity = entityOf(root);
  const entityId = (entity.getAttribute('entityID') ?? '').trim();
  if (!entityId) throw badMetadata('has no entityID');
  if (entityId.length > 1024) throw badMetadata('has an entityID longer than 1024 characters');

  const idp = childElements(entity, MD_NS, 'IDPSSODescriptor').find((d) =>
    (d.getAttribute('protocolSupportEnumeration') ?? '').split(/\s+/).includes(PROTOCOL_NS),
  );
  if (!idp) throw badMetadata('describes no SAML 2.0 identity provider (no IDPSSODescriptor for the SAML 2.0 protocol)');

  const services = childElements(idp, MD_NS, 'SingleSignOnService');
  const redirect = services.find((s) => s.getAttribute('Binding') === BINDING_REDIRECT && s.getAttribute('Location'));
  const post = services.find((s) => s.getAttribute('Binding') === BINDING_POST && s.getAttribute('Location'));
  const service = redirect ?? post;
  if (!service) throw badMetadata('has no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding');
  const ssoUrl = (service.getAttribute('Location') ?? '').trim();
  if (!isAllowedUrl(ssoUrl, opts.allowInsecure === true)) throw badMetadata('has a SingleSignOnService Location that is not an https URL');

  const certs: string[] = [];
  for (const key of childElements(idp, MD_NS, 'KeyDescriptor')) {
    const use = key.getAttribute('use');
    if (use && use !== 'signing') continue;
    for (const node of Array.from(key.getElementsByTagNameNS(DS_NS, 'X509Certificate'))) {
      const base64 = (node.textContent ?? '').replace(/\s+/g, '');
      if (!readCertificate(base64)) throw badMetadata('contains a signing certificate that is not a valid X.509 certificate');
      if (!certs.includes(base64)) certs.push(base64);
    }
  }
  if (certs.length === 0) throw badMetadata('has no signing certificate (KeyDescriptor use="signing" with an X509Certificate)');

  return { entity_id: entityId, sso_url: ssoUrl, sso_binding: redirect ? 'redirect' : 'post', signing_certs: certs };
}

function entityOf(root: Element): Element {
  if (root.namespaceURI === MD_NS && root.localName === 'EntityDescriptor') return root;
  if (root.namespaceURI === MD_NS && root.localName === 'EntitiesDescriptor') {
    const idps = Array.from(root.getElementsByTagNameNS(MD_NS, 'EntityDescriptor')).filter(
      (e) => childElements(e, MD_NS, 'IDPSSODescriptor').length > 0,
    );
    if (idps.length === 1 && idps[0]) return idps[0];
    throw badMetadata(`describes ${idps.length} identity providers; give the metadata of exactly one`);
  }
  throw badMetadata('is not SAML 2.0 metadata (expected an EntityDescriptor)');
}

function readCertificate(base64: string): X509Certificate | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return null;
  try {
    return new X509Certificate(Buffer.from(base64, 'base64'));
  } catch (error) {
    if (error instanceof Error) return null;
    throw error;
  }
}

const badFetch = (reason: string, cause?: unknown) => new AppError('BAD_REQUEST', `The IdP metadata URL ${reason}`, { cause });

/**
 * Downloads IdP metadata: https only, public addresses only (checked before each request and each
 * redirect, at most 3), one timeout for the whole download, at most 256 KiB. Returns the body as text;
 * give it to `parseIdpMetadata`.
 */
export async function fetchIdpMetadata(url: string, opts: FetchIdpMetadataOptions = {}): Promise<string> {
  const allowPrivate = opts.allowPrivate === true;
  // By default the connection goes only to an address checked after DNS (core/outbound.ts).
  const outbound = outboundFetch({ allowPrivate });
  const doFetch =
    opts.fetch ??
    ((target: string, init: { signal: AbortSignal; headers: Record<string, string> }) => outbound(target, { method: 'GET', ...init }));
  const timeoutMs = opts.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const insecure = opts.allowInsecure === true;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    let target = await checkedMetadataUrl(url, insecure, allowPrivate, signal);
    for (let redirects = 0; ; redirects++) {
      const res = await doFetch(target, {
        redirect: 'manual',
        signal,
        headers: { accept: 'application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1' },
      });
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        if (redirects >= MAX_REDIRECTS) throw badFetch(`redirected more than ${MAX_REDIRECTS} times`);
        target = await checkedMetadataUrl(new URL(location, target).href, insecure, allowPrivate, signal);
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw badFetch(`answered HTTP ${res.status}`);
      }
      return await readCapped(res, MAX_SAML_XML_BYTES);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (signal.aborted) throw badFetch(`did not answer within ${timeoutMs / 1000} s`, error);
    throw badFetch('could not be reached', error);
  }
}

async function checkedMetadataUrl(raw: string, insecure: boolean, allowPrivate: boolean, signal: AbortSignal): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    throw badFetch('is not a valid URL', error);
  }
  if (!isAllowedUrl(url.href, insecure)) throw badFetch('must be an https URL');
  if (url.username || url.password) throw badFetch('must not contain credentials');
  if (allowPrivate) return url.href;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : await resolveHost(host, signal);
  if (addresses.some(isNonPublicAddress)) throw badFetch('points to a private or local address');
  return url.href;
}

async function resolveHost(host: string, signal: AbortSignal): Promise<string[]> {
  const aborted = new Promise<never>((_resolve, reject) => {
    const fail = () => reject(signal.reason);
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), aborted]);
    return found.map((a) => a.address);
  } catch (error) {
    if (signal.aborted) throw error;
    throw badFetch('has a host name that does not resolve', error);
  }
}

async function readCapped(res: Response, max: number): Promise<string> {
  const tooLarge = () => badFetch(`answered with more than ${max / 1024} KiB`);
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel();
    throw tooLarge();
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Our SP metadata, for the customer's IT admin to load into their IdP. The same input gives the same XML. */
export function spMetadata(sp: SpSamlConfig): string {
  return generateServiceProviderMetadata({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    identifierFormat: EMAIL_NAME_ID_FORMAT,
    wantAssertionsSigned: true,
    generateUniqueId: () => `_${createHash('sha256').update(`${sp.entityId}\n${sp.acsUrl}`).digest('hex').slice(0, 40)}`,
  });
}

/**
 * An HTTP-Redirect AuthnRequest to the IdP's `sso_url` (also when the IdP published only HTTP-POST:
 * most accept a GET there). Unsigned; the request id is saved in `store` before the URL is returned.
 */
export async function authnRequestUrl(
  sp: SpSamlConfig,
  idp: IdpSamlConfig,
  relayState: string,
  opts: AuthnRequestOptions,
): Promise<AuthnRequest> {
  if (Buffer.byteLength(relayState, 'utf8') > MAX_RELAY_STATE_BYTES) {
    throw new AppError('INTERNAL', `The SAML RelayState must be at most ${MAX_RELAY_STATE_BYTES} bytes`);
  }
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const expiresAt = new Date(Date.now() + (opts.ttlMs ?? DEFAULT_REQUEST_TTL_MS));
  const url = await samlFor(sp, idp, { generateUniqueId: () => requestId }).getAuthorizeUrlAsync(relayState, undefined, {});
  await opts.store.save(requestId, expiresAt);
  return { url, requestId, expiresAt };
}

/**
 * Node-saml keeps request ids in process memory by default; ours live in a `RequestIdStore` that is
 * taken once, after every other check, so node-saml must never reach for its cache.
 */
const unusedCache: CacheProvider = {
  saveAsync: () => Promise.reject(new Error('node-saml request cache is not used: request ids live in a RequestIdStore')),
  getAsync: () => Promise.reject(new Error('node-saml request cache is not used: request ids live in a RequestIdStore')),
  removeAsync: () => Promise.reject(new Error('node-saml request cache is not used: request ids live in a RequestIdStore')),
};

function samlFor(sp: SpSamlConfig, idp: IdpSamlConfig, extra: Partial<SamlConfig> = {}): SAML {
  return new SAML({
    issuer: sp.entityId,
    audience: sp.entityId,
    callbackUrl: sp.acsUrl,
    entryPoint: idp.sso_url,
    idpIssuer: idp.entity_id,
    idpCert: idp.signing_certs,
    // Either the Response or the Assertion must carry a valid signature by one of idpCert: node-saml
    // verifies the assertion whenever the response's own signature is missing or invalid.
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    // No NameIDPolicy Format and no RequestedAuthnContext: both make some IdPs refuse (InvalidNameIDPolicy,
    // NoAuthnContext for MFA or Kerberos sign-ins); the email is read from attributes when needed.
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    validateInResponseTo: ValidateInResponseTo.never,
    cacheProvider: unusedCache,
    ...extra,
  });
}

const invalidResponse = (reason: string) =>
  new AppError('INVALID_TOKEN', 'The SAML response is invalid', { cause: new Error(`SAML response refused: ${reason.slice(0, 300)}`) });

/**
 * Validates the base64 SAMLResponse POSTed to our ACS URL and returns who signed in. Refuses (401
 * INVALID_TOKEN, the reason only in `cause`) unless: the XML has no DOCTYPE and is at most 256 KiB;
 * the status is Success; the Response or its single Assertion is signed by one of `idp.signing_certs`;
 * the assertion's Issuer is `idp.entity_id`, its Audience is `sp.entityId` and its Conditions are
 * current; the Response's Destination, when present, is `sp.acsUrl`; a bearer SubjectConfirmation names
 * `sp.acsUrl` as Recipient, is current, and answers (InResponseTo) a request id that `store.take`
 * gives up now, so each response is accepted once. Time is the system clock (node-saml 5 reads it
 * itself), with `clockSkewMs` of tolerance. Encrypted assertions and IdP-initiated sign-in are refused.
 */
export async function validateSamlResponse(
  sp: SpSamlConfig,
  idp: IdpSamlConfig,
  samlResponseBase64: string,
  opts: ValidateSamlResponseOptions,
): Promise<SamlProfile> {
  const skewMs = Math.min(Math.max(opts.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS, 0), MAX_CLOCK_SKEW_MS);
  if (typeof samlResponseBase64 !== 'string') throw invalidResponse('not a string');
  const base64 = samlResponseBase64.replace(/\s+/g, '');
  if (base64.length === 0 || base64.length > Math.ceil(MAX_SAML_XML_BYTES / 3) * 4) throw invalidResponse('empty or too large');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) throw invalidResponse('not base64');
  if (idp.signing_certs.length === 0) throw invalidResponse('the connection has no IdP signing certificate');

  const response = parseXml(Buffer.from(base64, 'base64').toString('utf8'), (reason) => invalidResponse(reason)).documentElement;
  if (response.namespaceURI !== PROTOCOL_NS || response.localName !== 'Response') throw invalidResponse('not a samlp:Response');
  const status = childElements(response, PROTOCOL_NS, 'Status')[0];
  const statusCode = status ? childElements(status, PROTOCOL_NS, 'StatusCode')[0]?.getAttribute('Value') : null;
  if (statusCode !== STATUS_SUCCESS) throw invalidResponse(`status ${statusCode ?? 'missing'}`);
  const destination = attribute(response, 'Destination');
  if (destination !== null && destination !== sp.acsUrl) throw invalidResponse('Destination is not our ACS URL');
  const responseInResponseTo = attribute(response, 'InResponseTo');

  let profile: Profile;
  try {
    const result = await samlFor(sp, idp, { acceptedClockSkewMs: skewMs }).validatePostResponseAsync({ SAMLResponse: base64 });
    if (!result.profile || result.loggedOut) throw invalidResponse('no assertion');
    profile = result.profile;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw invalidResponse(error instanceof Error ? error.message : 'node-saml refused it');
  }
  if (profile.issuer !== idp.entity_id) throw invalidResponse('the assertion Issuer is not the IdP entity id');

  const assertionXml = profile.getAssertionXml?.();
  if (!assertionXml) throw invalidResponse('no signed assertion');
  const assertion = parseXml(assertionXml, (reason) => invalidResponse(reason)).documentElement;
  const requestId = confirmedRequestId(assertion, sp.acsUrl, responseInResponseTo, skewMs);

  const nameId = typeof profile.nameID === 'string' ? profile.nameID.trim() : '';
  if (!nameId) throw invalidResponse('no NameID');
  const nameIdFormat = typeof profile.nameIDFormat === 'string' ? profile.nameIDFormat : null;
  const attributes = textAttributes(profile.attributes);
  const email = emailOf(nameId, nameIdFormat, attributes);
  if (!email) {
    throw new AppError('INVALID_TOKEN', 'The SAML response carries no email address (an emailAddress NameID or an email attribute)', {
      cause: new Error('SAML response refused: no email'),
    });
  }

  // Last, so that only a response that passed everything consumes its request id.
  if (!(await opts.store.take(requestId))) throw invalidResponse('InResponseTo is unknown, expired or already used');

  return {
    name_id: nameId,
    name_id_format: nameIdFormat,
    email,
    attributes,
    ...(typeof profile.sessionIndex === 'string' && profile.sessionIndex ? { session_index: profile.sessionIndex } : {}),
  };
}

/**
 * The SAML Web SSO profile's bearer confirmation (§4.1.4.2-3), which node-saml 5 checks only when it
 * validates InResponseTo itself: Recipient is our ACS URL, NotOnOrAfter is in the future, and the
 * InResponseTo inside the signed assertion names our request (so a captured assertion cannot be paired
 * with another request id). Returns that request id.
 */
function confirmedRequestId(assertion: Element, acsUrl: string, responseInResponseTo: string | null, skewMs: number): string {
  const now = Date.now();
  const subject = childElements(assertion, ASSERTION_NS, 'Subject')[0];
  const bearers = subject
    ? childElements(subject, ASSERTION_NS, 'SubjectConfirmation').filter((c) => c.getAttribute('Method') === BEARER)
    : [];
  let problem = 'no bearer SubjectConfirmation';
  for (const confirmation of bearers) {
    const data = childElements(confirmation, ASSERTION_NS, 'SubjectConfirmationData')[0];
    if (!data) {
      problem = 'no SubjectConfirmationData';
      continue;
    }
    const notOnOrAfter = Date.parse(attribute(data, 'NotOnOrAfter') ?? '');
    const notBefore = attribute(data, 'NotBefore');
    const inResponseTo = attribute(data, 'InResponseTo');
    if (attribute(data, 'Recipient') !== acsUrl) problem = 'SubjectConfirmationData Recipient is not our ACS URL';
    else if (Number.isNaN(notOnOrAfter)) problem = 'SubjectConfirmationData has no valid NotOnOrAfter';
    else if (now - skewMs >= notOnOrAfter) problem = 'SubjectConfirmationData expired';
    else if (notBefore !== null && !(now + skewMs >= Date.parse(notBefore))) problem = 'SubjectConfirmationData not yet valid';
    else if (!inResponseTo) problem = 'SubjectConfirmationData has no InResponseTo (IdP-initiated sign-in is not accepted)';
    else if (responseInResponseTo !== null && responseInResponseTo !== inResponseTo) problem = 'InResponseTo differs';
    else return inResponseTo;
  }
  throw invalidResponse(problem);
}

function textAttributes(raw: unknown): Record<string, string | string[]> {
  if (typeof raw !== 'object' || raw === null) return {};
  const entries: [string, string | string[]][] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === 'string') entries.push([name, value]);
    else if (Array.isArray(value)) {
      const texts = value.filter((v): v is string => typeof v === 'string');
      if (texts.length > 0) entries.push([name, texts]);
    }
  }
  return Object.fromEntries(entries);
}

function emailOf(nameId: string, format: string | null, attributes: Record<string, string | string[]>): string | null {
  if (format === EMAIL_NAME_ID_FORMAT && isEmail(nameId)) return canonicalEmail(nameId);
  const byName = new Map(Object.entries(attributes).map(([name, value]) => [name.toLowerCase(), value]));
  for (const name of EMAIL_ATTRIBUTES) {
    const value = byName.get(name);
    const first = (Array.isArray(value) ? value[0] : value)?.trim();
    if (first && isEmail(first)) return canonicalEmail(first);
  }
  return null;
}

function isEmail(value: string): boolean {
  return value.length <= 320 && /^[^\s@]+@[^\s@]+$/.test(value);
}

/** Redis-backed `RequestIdStore` for production: SET with expiry, taken by DEL (atomic, so once). */
export function redisRequestIdStore(redis: Redis, prefix = 'saml:request:'): RequestIdStore {
  return {
    async save(id, expiresAt) {
      const ttlMs = expiresAt.getTime() - Date.now();
      if (ttlMs > 0) await redis.set(`${prefix}${id}`, '1', 'PX', ttlMs);
    },
    async take(id) {
      return (await redis.del(`${prefix}${id}`)) === 1;
    },
  };
}

/**
 * Parses with the DTD-free @xmldom/xmldom, strictly: any DOCTYPE or ENTITY declaration is refused before
 * parsing (no entity expansion, no external fetch), and so is anything the parser flags (xmldom
 * otherwise recovers from malformed input).
 */
function parseXml(xml: string, fail: (reason: string, cause?: unknown) => AppError): Document {
  if (Buffer.byteLength(xml, 'utf8') > MAX_SAML_XML_BYTES) throw fail(`is larger than ${MAX_SAML_XML_BYTES / 1024} KiB`);
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw fail('contains a DOCTYPE; document type definitions and entities are refused');
  const problems: string[] = [];
  const record = (message: unknown) => {
    problems.push(String(message));
  };
  const doc = new DOMParser({ locator: {}, errorHandler: { warning: record, error: record, fatalError: record } }).parseFromString(
    xml,
    'text/xml',
  );
  if (problems.length > 0 || !doc.documentElement) throw fail('is not well-formed XML', problems);
  return doc;
}

function childElements(parent: Element, namespace: string, localName: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (isElement(node) && node.namespaceURI === namespace && node.localName === localName) found.push(node);
  }
  return found;
}

function isElement(node: Node): node is Element {
  return node.nodeType === 1;
}

/** The attribute's trimmed value, or null when absent or empty (xmldom answers '' for a missing one). */
function attribute(element: Element, name: string): string | null {
  const value = element.getAttribute(name)?.trim();
  return value ? value : null;
}

function isAllowedUrl(raw: string, insecure: boolean): boolean {
  try {
    const { protocol } = new URL(raw);
    return protocol === 'https:' || (insecure && protocol === 'http:');
  } catch (error) {
    if (error instanceof TypeError) return false;
    throw error;
  }
}
