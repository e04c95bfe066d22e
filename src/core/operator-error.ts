/**
 * A start or a command refused for something only whoever runs the service can mend (a setting, a key,
 * a data directory another process holds). Its message says what and how, so it is printed alone:
 * a stack trace under it only buries the one line that matters.
 */
export class OperatorError extends Error {
  override readonly name: string = 'OperatorError';
}
