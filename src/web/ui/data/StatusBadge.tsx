/** A short state word with a colour that repeats what the word says (never the colour alone). */
export function StatusBadge({ status, tone }: { status: string; tone?: 'good' | 'warn' | 'bad' | 'neutral' }) {
  return <span className={`badge badge-${tone ?? 'neutral'}`}>{status}</span>;
}
