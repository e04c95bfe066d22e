/** A gate a faked dependency waits at: `started` settles when it is asked (`start()`), and it answers after `open()`. */
export function gate() {
  let open: () => void = () => undefined;
  let start: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const started = new Promise<void>((resolve) => (start = resolve));
  return { opened, started, open: () => open(), start: () => start() };
}
