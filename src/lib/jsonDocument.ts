import type * as z from 'zod';

/**
 * A JSON file of taxprep's own (the watch state, the hooks file) read against its schema: text
 * that is not JSON, or not of the schema, is reported through `damaged` with the first rule it
 * breaks, so that each file's owner words the refusal and the way out once.
 */
export function parseJsonDocument<T extends z.ZodType>(text: string, schema: T, damaged: (rule: string) => Error): z.output<T> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw damaged('not valid JSON');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw damaged(`${issue.path.join('.') || 'the file'}: ${issue.message}`);
  }
  return parsed.data;
}
