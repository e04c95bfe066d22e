import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { call } from './http.ts';

/** `GET /metrics` with the app's METRICS_TOKEN: the Prometheus text. */
export async function scrapeMetrics(app: TestApp, token: string): Promise<string> {
  const res = await call<string>(app, 'GET', '/metrics', { token });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.body;
}

/** The value of one series in scraped text (`name{labels} value`); 0 when it is not there yet. */
export function metricValue(text: string, series: string): number {
  const escaped = series.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return Number(new RegExp(`^${escaped} (\\d+(?:\\.\\d+)?)`, 'm').exec(text)?.[1] ?? 0);
}
