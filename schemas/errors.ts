/**
 * Errors carry a decision: `retriable` says whether trying again can help.
 * Adapters classify errors from typed fields at the edge, never from message text.
 */
export class PipelineError extends Error {
  readonly retriable: boolean;
  constructor(message: string, opts: { retriable: boolean; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.name = new.target.name;
    this.retriable = opts.retriable;
  }
}

/** Bytes that cannot become a valid event. Such a record goes to the dead-letter topic; never retried. */
export class InvalidEvent extends PipelineError {
  readonly reason: string;
  constructor(reason: string, cause?: unknown) {
    super(`invalid event: ${reason}`, { retriable: false, cause });
    this.reason = reason;
  }
}

/** An event larger than the configured maximum; refused at publish, never truncated. */
export class EventTooLarge extends PipelineError {
  constructor(
    readonly size: number,
    readonly max: number,
    readonly topic: string,
  ) {
    super(`event of ${size} bytes exceeds the maximum of ${max} bytes for topic ${topic}`, { retriable: false });
  }
}

/** A backend that did not answer or refused for a transient reason. */
export class BackendUnavailable extends PipelineError {
  constructor(message: string, cause?: unknown) {
    super(message, { retriable: true, cause });
  }
}

/** Bad user input (a file, a flag): names where it is, so the user can fix it. */
/**
 * A file that cannot be read, said so that the fix is plain: a missing file names the directory it was looked for
 * in; a directory, a permission problem and anything else name what they are.
 */
export const unreadableFile = (file: string, e: unknown, what = 'file'): InputError => {
  const code = (e as NodeJS.ErrnoException).code;
  const message =
    code === 'ENOENT'
      ? `no such ${what} (looked in ${process.cwd()}): check the path, or give it relative to that directory`
      : code === 'EISDIR'
        ? `is a directory, not a ${what}: name the file inside it`
        : code === 'EACCES' || code === 'EPERM'
          ? `permission denied: this user cannot read the ${what}`
          : `cannot read the ${what}: ${code ?? (e as Error).message}`;
  return new InputError(message, { file });
};

export class InputError extends Error {
  constructor(
    message: string,
    readonly where: { file?: string; line?: number; field?: string } = {},
  ) {
    const at = [
      where.file,
      where.line === undefined ? undefined : `line ${where.line}`,
      where.field && `field ${where.field}`,
    ]
      .filter(Boolean)
      .join(', ');
    super(at ? `${at}: ${message}` : message);
    this.name = 'InputError';
  }
}
