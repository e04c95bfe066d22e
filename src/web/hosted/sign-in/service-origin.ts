/**
 * The origin of the service's BASE_URL, which the server puts in the page
 * (`<meta name="identity-service-origin">`, web-app.routes.ts); null when the page does not say (Vite's
 * development server). Social and SSO sign-ins come back to BASE_URL's /login/callback, so they can
 * only finish in a tab opened at that origin (the sign-in is kept in the origin's sessionStorage).
 */
export function serviceOrigin(doc: Document = document): string | null {
  const content = doc.querySelector<HTMLMetaElement>('meta[name="identity-service-origin"]')?.content;
  return content ? content : null;
}
