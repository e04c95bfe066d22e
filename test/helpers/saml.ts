import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignedXml } from 'xml-crypto';
import { systemClock, type Clock } from '../../src/core/clock.ts';
import type { IdpSamlConfig, RequestIdStore, SpSamlConfig } from '../../src/modules/sso/saml.ts';

/**
 * A SAML identity provider for tests: fixture keys (test/fixtures/saml, test-only, self-signed), its
 * metadata, and responses it signs the way real IdPs do (xml-crypto, RSA-SHA256, exclusive c14n).
 */

export interface TestKey {
  privateKey: string;
  certPem: string;
  /** The certificate as metadata carries it: base64 DER, no armour. */
  certBase64: string;
}

export function fixtureKey(name: 'idp' | 'idp-next'): TestKey {
  const read = (file: string) => readFileSync(new URL(`../fixtures/saml/${file}`, import.meta.url), 'utf8');
  const certPem = read(`${name}-cert.pem`);
  return { privateKey: read(`${name}-key.pem`), certPem, certBase64: certPem.replace(/-----[A-Z ]+-----|\s+/g, '') };
}

/** In-memory `RequestIdStore`: one process's memory, so for tests only. */
export class MemoryRequestIdStore implements RequestIdStore {
  private readonly ids = new Map<string, number>();

  constructor(private readonly clock: Clock = systemClock) {}

  async save(id: string, expiresAt: Date): Promise<void> {
    this.ids.set(id, expiresAt.getTime());
  }

  async take(id: string): Promise<boolean> {
    const expiresAt = this.ids.get(id);
    this.ids.delete(id);
    return expiresAt !== undefined && this.clock.now().getTime() < expiresAt;
  }
}

export const escapeXml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

export interface MetadataSpec {
  entityId: string;
  ssoUrl?: string;
  /** Signing certificates (base64 DER). */
  certs?: string[];
  bindings?: ('redirect' | 'post')[];
  /** Extra KeyDescriptor XML inside the IDPSSODescriptor. */
  extraKeys?: string;
}

export function idpMetadataXml(spec: MetadataSpec): string {
  const ssoUrl = spec.ssoUrl ?? 'https://idp.example.test/sso';
  const keys = (spec.certs ?? [])
    .map(
      (cert) =>
        `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
    )
    .join('');
  const services = (spec.bindings ?? ['post', 'redirect'])
    .map(
      (b) =>
        `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-${b === 'post' ? 'POST' : 'Redirect'}" Location="${escapeXml(ssoUrl)}${b === 'post' ? '/post' : ''}"/>`,
    )
    .join('');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${escapeXml(spec.entityId)}">\n` +
    `  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">\n` +
    `    ${keys}${spec.extraKeys ?? ''}\n` +
    `    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>\n` +
    `    ${services}\n` +
    `  </md:IDPSSODescriptor>\n` +
    `</md:EntityDescriptor>\n`
  );
}

export interface ResponseSpec {
  sp: SpSamlConfig;
  idp: Pick<IdpSamlConfig, 'entity_id'>;
  /** The request answered; null for an IdP-initiated response. */
  inResponseTo: string | null;
  nameId?: string;
  nameIdFormat?: string;
  attributes?: Record<string, string | string[]>;
  issuer?: string;
  audience?: string;
  /** null leaves Destination out. */
  destination?: string | null;
  recipient?: string;
  now?: Date;
  /** Conditions NotBefore / NotOnOrAfter. */
  notBefore?: Date;
  notOnOrAfter?: Date;
  /** The bearer SubjectConfirmationData's NotOnOrAfter. */
  confirmationNotOnOrAfter?: Date;
  sessionIndex?: string;
  status?: string;
}

/** An unsigned samlp:Response with one assertion, valid for `spec.sp` unless a field says otherwise. */
export function samlResponseXml(spec: ResponseSpec): string {
  const now = spec.now ?? new Date();
  const at = (offsetMs: number) => new Date(now.getTime() + offsetMs).toISOString();
  const iso = (date: Date | undefined, fallbackOffsetMs: number) => (date ? date.toISOString() : at(fallbackOffsetMs));
  const issuer = escapeXml(spec.issuer ?? spec.idp.entity_id);
  const inResponseTo = spec.inResponseTo === null ? '' : ` InResponseTo="${escapeXml(spec.inResponseTo)}"`;
  const destination = spec.destination === null ? '' : ` Destination="${escapeXml(spec.destination ?? spec.sp.acsUrl)}"`;
  const attributes = Object.entries(spec.attributes ?? {})
    .map(([name, value]) => {
      const values = (Array.isArray(value) ? value : [value])
        .map((v) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(v)}</saml:AttributeValue>`)
        .join('');
      return `<saml:Attribute Name="${escapeXml(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values}</saml:Attribute>`;
    })
    .join('');
  const id = () => `_${randomBytes(16).toString('hex')}`;
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id()}" Version="2.0" IssueInstant="${at(0)}"${destination}${inResponseTo}>` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="${escapeXml(spec.status ?? 'urn:oasis:names:tc:SAML:2.0:status:Success')}"/></samlp:Status>` +
    `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="${id()}" Version="2.0" IssueInstant="${at(0)}">` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<saml:Subject>` +
    `<saml:NameID Format="${escapeXml(spec.nameIdFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress')}">${escapeXml(spec.nameId ?? 'alice@example.com')}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData${inResponseTo} NotOnOrAfter="${iso(spec.confirmationNotOnOrAfter, 5 * 60_000)}" Recipient="${escapeXml(spec.recipient ?? spec.sp.acsUrl)}"/>` +
    `</saml:SubjectConfirmation>` +
    `</saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(spec.notBefore, -60_000)}" NotOnOrAfter="${iso(spec.notOnOrAfter, 10 * 60_000)}">` +
    `<saml:AudienceRestriction><saml:Audience>${escapeXml(spec.audience ?? spec.sp.entityId)}</saml:Audience></saml:AudienceRestriction>` +
    `</saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${at(0)}" SessionIndex="${escapeXml(spec.sessionIndex ?? '_session-1')}">` +
    `<saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext>` +
    `</saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
    `</saml:Assertion>` +
    `</samlp:Response>`
  );
}

/** Signs the Assertion, the Response, or both (assertion first), placing each signature after its Issuer. */
export function signSamlXml(
  xml: string,
  key: Pick<TestKey, 'privateKey'> & { certPem?: string },
  what: 'assertion' | 'response' | 'both',
): string {
  const sign = (input: string, element: 'Assertion' | 'Response') => {
    const path = element === 'Response' ? `/*[local-name(.)='Response']` : `//*[local-name(.)='Assertion']`;
    const sig = new SignedXml({
      privateKey: key.privateKey,
      publicCert: key.certPem,
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    });
    sig.addReference({
      xpath: path,
      digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
      transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    });
    sig.computeSignature(input, { location: { reference: `${path}/*[local-name(.)='Issuer']`, action: 'after' } });
    return sig.getSignedXml();
  };
  if (what === 'assertion') return sign(xml, 'Assertion');
  if (what === 'response') return sign(xml, 'Response');
  return sign(sign(xml, 'Assertion'), 'Response');
}

export const toBase64 = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');
