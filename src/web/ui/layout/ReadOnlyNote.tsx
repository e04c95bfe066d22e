/** Tells a viewer why there are no buttons to change things. */
export function ReadOnlyNote({ permission }: { permission: string }) {
  return (
    <p className="read-only-note" role="note">
      Read-only: changing this needs the <code>{permission}</code> permission.
    </p>
  );
}
