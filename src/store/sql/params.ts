// Statement parameters as the SQL repositories give them, and as each driver takes them.

/**
 * A json parameter given as UTF-8 bytes: node-postgres sends a Buffer as it is (json's binary form is
 * its text), PGlite, which would take a Buffer for bytea, gets it decoded.
 */
export class JsonBytes {
  constructor(readonly bytes: Buffer) {}
}

export type SqlParam = string | number | boolean | null | readonly string[] | JsonBytes;

/** Parameters as a driver takes them: JsonBytes as a Buffer (node-postgres) or a string (PGlite). */
export function driverParams(params: readonly SqlParam[], asText: boolean): unknown[] {
  const out: unknown[] = new Array(params.length);
  for (let i = 0; i < params.length; i++) {
    const param = params[i];
    out[i] = param instanceof JsonBytes ? (asText ? param.bytes.toString('utf8') : param.bytes) : param;
  }
  return out;
}
