// Statement parameters as the SQL repositories give them, and as each driver takes them.

/**
 * A json parameter given as UTF-8 bytes: node-postgres sends a Buffer as it is (json's binary form is
 * its text); the embedded database's process, whose PGlite would take a Buffer for bytea, decodes it
 * there (see pglite-process.ts).
 */
export class JsonBytes {
  constructor(readonly bytes: Buffer) {}
}

export type SqlParam = string | number | boolean | null | readonly string[] | JsonBytes;

/** Parameters as the drivers take them: JsonBytes as its Buffer. */
export function driverParams(params: readonly SqlParam[]): unknown[] {
  const out: unknown[] = new Array(params.length);
  for (let i = 0; i < params.length; i++) {
    const param = params[i];
    out[i] = param instanceof JsonBytes ? param.bytes : param;
  }
  return out;
}
